// A browser as the web client's pages use the server: cookies kept in a jar,
// the page's own Origin, and X-CSRFToken repeated from the csrftoken cookie on
// state-changing requests, as the client's code does.

import type { TestServer, Response } from './server.ts';
import { encodeParams } from './server.ts';

type Params = Record<string, unknown>;

export interface BrowserRequestOptions {
  /** Leave X-CSRFToken out (a forged request). */
  noCsrf?: boolean;
  headers?: Record<string, string>;
  /** Send the body as JSON instead of a form. */
  json?: boolean;
}

export class Browser {
  readonly server: TestServer;
  readonly host: string;
  readonly cookies = new Map<string, string>();
  /** Every Set-Cookie line of the last answer. */
  lastSetCookies: string[] = [];

  constructor(server: TestServer, host = 'confab.test') {
    this.server = server;
    this.host = host;
  }

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(method: string, path: string, params: Params = {}, opts: BrowserRequestOptions = {}): Promise<Response> {
    const isQuery = method === 'GET' || method === 'HEAD';
    const headers: Record<string, string> = { host: this.host, ...(isQuery ? {} : { origin: `http://${this.host}` }) };
    if (this.cookies.size > 0) headers.cookie = this.cookieHeader();
    const csrf = this.cookies.get('csrftoken');
    if (!isQuery && csrf && !opts.noCsrf) headers['x-csrftoken'] = csrf;
    let payload: string | undefined;
    let url = path;
    if (isQuery) {
      const qs = encodeParams(params);
      if (qs) url += `?${qs}`;
    } else if (opts.json) {
      payload = JSON.stringify(params);
      headers['content-type'] = 'application/json';
    } else {
      payload = encodeParams(params);
      if (payload) headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await (await this.server.pick()).inject({ method: method as any, url, payload, headers: { ...headers, ...opts.headers } });
    const set = res.headers['set-cookie'];
    this.lastSetCookies = set === undefined ? [] : Array.isArray(set) ? set : [set];
    for (const line of this.lastSetCookies) {
      const [pair, ...attrs] = line.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1).trim()];
      const expired = attrs.some((a) => a.trim().toLowerCase() === 'max-age=0');
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    let body: any = res.body;
    try {
      body = JSON.parse(res.body);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.statusCode, body, headers: res.headers };
  }

  get = (path: string, params?: Params, opts?: BrowserRequestOptions) => this.request('GET', path, params, opts);
  post = (path: string, params?: Params, opts?: BrowserRequestOptions) => this.request('POST', path, params, opts);
  patch = (path: string, params?: Params, opts?: BrowserRequestOptions) => this.request('PATCH', path, params, opts);
  delete = (path: string, params?: Params, opts?: BrowserRequestOptions) => this.request('DELETE', path, params, opts);

  /** Signs in through the login endpoint; fails the test if it does not answer success. */
  async login(username: string, password: string): Promise<Response> {
    const res = await this.post('/accounts/login', { username, password });
    if (res.status !== 200) throw new Error(`login failed: ${JSON.stringify(res.body)}`);
    return res;
  }
}
