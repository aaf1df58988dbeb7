// The success envelope, and the whole answer as bytes for the answers a fan-out writes by the
// thousand (parked polls, lean or through the route). Through ServerResponse every answer
// builds and checks its header lines, joins them to the body and encodes the result; here the
// bytes Node would write (status line, the API's headers in Node's order, Date, Connection,
// Keep-Alive) are made once per envelope and second, and every answer writes the same Buffer
// to its socket (a third of the server's CPU per answered poll, docs/PERFORMANCE.md). The
// response is then ended empty, marked as having sent its header: the one place Confab sets
// Node's own fields (docs/DECISIONS.md), pinned by test/unit/success-bytes.test.ts, which
// compares these bytes with Node's over sockets and uses the connection again.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Socket } from 'node:net';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** The last envelope made: a fan-out answers thousands of polls with the same members. */
let lastEnvelope: { members: string; body: string; length: number } | undefined;

/** The success envelope around `members`, and its length in bytes. */
export function successEnvelope(members: string): { body: string; length: number } {
  if (lastEnvelope?.members !== members) {
    const body = `{"result":"success","msg":"",${members}}`;
    lastEnvelope = { members, body, length: Buffer.byteLength(body) };
  }
  return lastEnvelope;
}

/** `Cache-Control` as every endpoint of the API sends it. */
export const NO_CACHE = 'max-age=0, no-cache, no-store, must-revalidate, private';

/** The headers of an API answer with no others of its own: those the bytes carry. */
export const API_HEADERS: Readonly<Record<string, string>> = { 'cache-control': NO_CACHE };

/** The last answer made: the members, the second of its Date, the server's keep-alive timeout. */
let made: { members: string; second: number; keepAliveTimeout: number; head: string; bytes: Buffer } | undefined;

/**
 * Writes a 200 success answer with `members` as bytes when its headers are API_HEADERS alone
 * (names in lower case, as Fastify keeps them), the response is the one its socket is
 * answering and Node would keep the connection open; false otherwise, with nothing written
 * (the caller answers through ServerResponse). `server`: the response's.
 */
export function writeSuccessBytes(server: Server, res: ServerResponse, headers: Record<string, unknown>, members: string): boolean {
  const socket = res.socket;
  if (!(socket instanceof Socket) || !apiHeadersAlone(headers) || !asBytes(server, res.req, res)) return false;
  const second = Math.floor(Date.now() / 1000);
  const { keepAliveTimeout } = server;
  if (made?.members !== members || made.second !== second || made.keepAliveTimeout !== keepAliveTimeout) {
    const { body, length } = successEnvelope(members);
    const head = `HTTP/1.1 200 OK\r\ncache-control: ${NO_CACHE}\r\ncontent-type: ${JSON_TYPE}\r\ncontent-length: ${length}\r\n${nodeTrailingHeaders(keepAliveTimeout, second)}\r\n`;
    made = { members, second, keepAliveTimeout, head, bytes: Buffer.from(head + body) };
  }
  socket.write(made.bytes);
  markHeaderSent(res, made.head);
  res.end();
  return true;
}

function apiHeadersAlone(headers: Record<string, unknown>): boolean {
  let count = 0;
  for (const name in headers) if (++count > 1 || name !== 'cache-control' || headers[name] !== NO_CACHE) return false;
  return count === 1;
}

/**
 * Whether Node would answer `res` with exactly the bytes made here: the answer to a GET (a
 * HEAD's has no body), kept alive (Node's own decision, from the request's version and
 * Connection header), to a request that expects no 100-continue, on a server with no cap on
 * requests per connection, nothing written yet, its socket open.
 */
function asBytes(server: Server, req: IncomingMessage, res: ServerResponse): boolean {
  return (
    req.method === 'GET' &&
    res.shouldKeepAlive &&
    res.sendDate &&
    !res.headersSent &&
    !res.writableEnded &&
    res.socket!.writable &&
    req.headers.expect === undefined &&
    !(server.maxRequestsPerSocket! > 0)
  );
}

/** The lines Node adds after the given headers of a keep-alive answer with a length. */
function nodeTrailingHeaders(keepAliveTimeout: number, second: number): string {
  const date = `Date: ${new Date(second * 1000).toUTCString()}\r\n`;
  const keepAlive = keepAliveTimeout ? `Keep-Alive: timeout=${Math.floor(keepAliveTimeout / 1000)}\r\n` : '';
  return `${date}Connection: keep-alive\r\n${keepAlive}`;
}

/** What `writeHead` leaves on a response that `end()` reads: its header made and sent. */
function markHeaderSent(res: ServerResponse, head: string): void {
  const internals = res as unknown as { _header: string; _headerSent: boolean };
  internals._header = head;
  internals._headerSent = true;
}
