// The browser's API calls: the spec's endpoints under /json/, authenticated by the
// session cookie, with the CSRF token (from the csrftoken cookie) on every
// state-changing request. Parameters are form-encoded as the API expects.

export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly body: any;
  constructor(msg: string, code: string, status: number, body: any) {
    super(msg);
    this.code = code;
    this.status = status;
    this.body = body;
  }
}

/** Status 0: the server could not be reached at all. */
export const NETWORK_ERROR = 'NETWORK_ERROR';

export type Params = Record<string, unknown>;

export function encodeParams(params: Params): URLSearchParams {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return form;
}

export function csrfToken(cookie: string): string {
  for (const part of cookie.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === 'csrftoken') return decodeURIComponent(v.join('='));
  }
  return '';
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** A path outside /json (e.g. /accounts/login). */
  raw?: boolean;
}

async function send(method: string, path: string, body: BodyInit | undefined, query: string, opts: RequestOptions): Promise<any> {
  const url = (opts.raw ? path : `/json${path}`) + (query ? `?${query}` : '');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['X-CSRFToken'] = csrfToken(document.cookie);
  if (typeof body === 'string') headers['content-type'] = 'application/x-www-form-urlencoded';
  let res: Response;
  try {
    res = await fetch(url, { method, body, headers, credentials: 'same-origin', signal: opts.signal });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError('Cannot reach the server. Check your connection.', NETWORK_ERROR, 0, null);
  }
  let data: any = null;
  try {
    data = await res.json();
  } catch {
    // not JSON (a proxy's error page): described below
  }
  if (!res.ok || data?.result !== 'success') {
    const msg = data?.msg || (res.status >= 500 ? 'The server had a problem. Try again in a moment.' : `Request failed (${res.status}).`);
    throw new ApiError(msg, data?.code ?? (res.status >= 500 ? NETWORK_ERROR : 'BAD_REQUEST'), res.status, data);
  }
  return data;
}

export function request(method: string, path: string, params: Params = {}, opts: RequestOptions = {}): Promise<any> {
  const encoded = encodeParams(params).toString();
  if (method === 'GET') return send(method, path, undefined, encoded, opts);
  return send(method, path, encoded || undefined, '', opts);
}

export const api = {
  get: (path: string, params?: Params, opts?: RequestOptions) => request('GET', path, params, opts),
  post: (path: string, params?: Params, opts?: RequestOptions) => request('POST', path, params, opts),
  patch: (path: string, params?: Params, opts?: RequestOptions) => request('PATCH', path, params, opts),
  delete: (path: string, params?: Params, opts?: RequestOptions) => request('DELETE', path, params, opts),
  upload: (path: string, form: FormData) => send('POST', path, form, '', {}),
};
