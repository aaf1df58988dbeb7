// THE outbound HTTP client of the server: every request Confab makes to a URL a
// user gave (outgoing webhooks; later link previews and the image proxy) goes
// through here. Unless the operator allows private URLs, it refuses addresses
// inside the server's own networks, checked after name resolution on every
// redirect hop; the connection goes to the address that was checked (the
// resolver is the socket's `lookup`, so nothing resolves the name twice). A
// deadline covers the whole exchange and the body read is bounded.

import http from 'node:http';
import https from 'node:https';
import dns from 'node:dns';
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import { Transform, type Readable } from 'node:stream';

export type OutboundFailure = 'bad_url' | 'refused_address' | 'timeout' | 'too_large' | 'too_many_redirects' | 'network';

export class OutboundError extends Error {
  readonly kind: OutboundFailure;
  constructor(kind: OutboundFailure, message: string) {
    super(message);
    this.kind = kind;
  }
}

export interface OutboundRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** For the whole exchange, redirects included. */
  timeoutMs?: number;
  /** The most of the response body read; more is an error. */
  maxBytes?: number;
  maxRedirects?: number;
}

export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** Where the answer came from, after redirects. */
  url: string;
}

/** An answer whose body is read as it arrives (the image proxy); the size limit still applies. */
export interface OutboundStreamResponse extends Omit<OutboundResponse, 'body'> {
  body: Readable;
}

export interface OutboundPolicy {
  /** ALLOW_PRIVATE_URLS: reach loopback and private networks (development, tests). */
  allowPrivate: boolean;
  /** Which addresses are refused; isPrivateAddress unless given (tests narrow it). */
  isRefused?: (address: string) => boolean;
}

const refused = (policy: OutboundPolicy, address: string) => !policy.allowPrivate && (policy.isRefused ?? isPrivateAddress)(address);

const DEFAULTS = { timeoutMs: 10_000, maxBytes: 1024 * 1024, maxRedirects: 5 };

const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], // "this" network, unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128], // unspecified
  ['::1', 128],
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['fc00::', 7], // unique local
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv6');
}

/** The IPv4 address an IPv6 address carries (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96), if any. */
export function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const hi = parseInt(hex[1], 16);
  const lo = parseInt(hex[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Whether an IP address lies in a network the server must not reach for users. */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true; // not an address at all: refused
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined) return blocked.check(v4, 'ipv4');
  return blocked.check(address, 'ipv6');
}

/** A resolver that answers only with addresses the policy allows, for the socket to connect to. */
function checkedLookup(policy: OutboundPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { all: true, family: (options as dns.LookupOptions).family ?? 0 }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const usable = addresses.filter((a) => !refused(policy, a.address));
      if (usable.length === 0) {
        return callback(new OutboundError('refused_address', `${hostname} resolves to a private or disallowed address`), '', 0);
      }
      if ((options as dns.LookupOptions).all) return (callback as any)(null, usable);
      callback(null, usable[0].address, usable[0].family);
    });
  };
}

function parseTarget(url: string, policy: OutboundPolicy): URL {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new OutboundError('bad_url', `Invalid URL: ${url}`);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new OutboundError('bad_url', `Unsupported URL scheme: ${target.protocol}`);
  // A literal address never goes through the resolver: checked here.
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) && refused(policy, host)) {
    throw new OutboundError('refused_address', `${host} is a private or disallowed address`);
  }
  return target;
}

/** Passes at most maxBytes through, then fails with too_large. */
function bounded(maxBytes: number): Transform {
  let size = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) done(new OutboundError('too_large', `Response larger than ${maxBytes} bytes`));
      else done(null, chunk);
    },
  });
}

/** One hop: the response's status, headers and body (bounded; unread when streaming a final answer). */
function exchange(
  target: URL,
  req: OutboundRequest,
  policy: OutboundPolicy,
  maxBytes: number,
  signal: AbortSignal,
  stream: boolean,
): Promise<OutboundResponse | OutboundStreamResponse> {
  return new Promise((resolve, reject) => {
    const lib = target.protocol === 'https:' ? https : http;
    const body = req.body === undefined ? undefined : Buffer.from(req.body);
    const outgoing = lib.request(
      target,
      {
        method: req.method ?? 'GET',
        headers: { 'user-agent': 'Confab-Outbound', ...req.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
        lookup: checkedLookup(policy),
        signal,
        agent: false,
      },
      (res) => {
        if (stream && !(REDIRECTS.has(res.statusCode ?? 0) && res.headers.location)) {
          const body = res.pipe(bounded(maxBytes));
          res.on('error', (err) => body.destroy(err));
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, url: target.toString() });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            res.destroy();
            reject(new OutboundError('too_large', `Response larger than ${maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), url: target.toString() }));
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Sends a request under the policy; throws OutboundError for every failure. */
export function outboundRequest(req: OutboundRequest, policy: OutboundPolicy): Promise<OutboundResponse> {
  return follow(req, policy, false) as Promise<OutboundResponse>;
}

/**
 * As outboundRequest, but the final answer's body is a stream: the deadline and
 * size limit end it with an error (OutboundError too_large) part way.
 */
export function outboundStream(req: OutboundRequest, policy: OutboundPolicy): Promise<OutboundStreamResponse> {
  return follow(req, policy, true) as Promise<OutboundStreamResponse>;
}

async function follow(req: OutboundRequest, policy: OutboundPolicy, stream: boolean): Promise<OutboundResponse | OutboundStreamResponse> {
  const timeoutMs = req.timeoutMs ?? DEFAULTS.timeoutMs;
  const signal = AbortSignal.timeout(timeoutMs);
  let current: OutboundRequest = req;
  let target = parseTarget(req.url, policy);
  for (let hop = 0; ; hop++) {
    let res: OutboundResponse | OutboundStreamResponse;
    try {
      res = await exchange(target, current, policy, req.maxBytes ?? DEFAULTS.maxBytes, signal, stream);
    } catch (err) {
      if (err instanceof OutboundError) throw err;
      if (signal.aborted) throw new OutboundError('timeout', `Request timed out after ${timeoutMs / 1000} seconds.`);
      const cause = (err as { cause?: unknown }).cause;
      if (cause instanceof OutboundError) throw cause;
      throw new OutboundError('network', (err as Error).message);
    }
    const location = res.headers.location;
    if (!REDIRECTS.has(res.status) || !location) return res;
    if (hop >= (req.maxRedirects ?? DEFAULTS.maxRedirects)) throw new OutboundError('too_many_redirects', 'Too many redirects');
    target = parseTarget(new URL(location, target).toString(), policy);
    // 303 (and, as browsers do, 301/302 after a POST) continue as a GET without a body.
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && current.method !== 'GET')) {
      const { 'content-type': _type, ...headers } = current.headers ?? {};
      current = { ...current, method: 'GET', body: undefined, headers };
    }
  }
}
