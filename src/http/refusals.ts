// Requests the HTTP layer refuses before any route runs — a URL too long, headers
// too large, a request that is not HTTP, a URL that does not decode — answered in
// the API's envelope like every other error. Where the server then closes the
// connection, the answer says `Connection: close`.

import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';

/** Longer URLs answer 414, as common servers and proxies do (8 KiB). */
export const MAX_URL_LENGTH = 8192;

export function errorBody(msg: string): string {
  return JSON.stringify({ result: 'error', msg, code: 'BAD_REQUEST' });
}

/** What the HTTP parser's error means for the client. */
function classify(err: NodeJS.ErrnoException & { rawPacket?: Buffer }): [number, string] {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'Request timed out'];
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    // The request line alone outgrew the header buffer: the URL is what is too long.
    const packet = err.rawPacket;
    const lineEnd = packet ? packet.indexOf('\r\n') : -1;
    if (packet && (lineEnd < 0 || lineEnd > MAX_URL_LENGTH)) return [414, 'URL too long'];
    return [431, 'Request headers too large'];
  }
  return [400, 'Malformed HTTP request'];
}

/** Node's `clientError`: the parser gave up on the connection, which then closes. */
export function clientErrorHandler(log: FastifyBaseLogger) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, msg] = classify(err);
    log.debug({ err }, 'client error');
    const body = errorBody(msg);
    if (socket.writable) {
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }
    socket.destroySoon();
  };
}

/** Fastify's own refusals before routing (a path that does not decode). */
export function frameworkErrors(err: Error, _req: FastifyRequest, reply: FastifyReply): void {
  reply
    .code(400)
    .type('application/json; charset=utf-8')
    .send(errorBody(`Malformed URL: ${err.message}`));
}

/** onRequest: a URL within the header buffer but longer than MAX_URL_LENGTH. */
export async function refuseLongUrl(req: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (req.raw.url !== undefined && req.raw.url.length > MAX_URL_LENGTH) {
    await reply.code(414).type('application/json; charset=utf-8').send(errorBody('URL too long'));
  }
}
