// Refusals before any route runs (issue 12, point 4): a URL too long (414), headers
// too large (431), a malformed URL or request (400), a body too large (413) — each in
// the API's envelope, and a connection the server closes says `Connection: close`.
// Through a real socket, since these happen in the HTTP layer itself.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let port: number;
before(async () => {
  server = await startTestServer();
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  port = (server.app.server.address() as AddressInfo).port;
});
after(() => server.close());

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** The server ended the connection after answering. */
  closed: boolean;
}

/** Sends raw bytes and reads the first response; waits for the close when the server announces one. */
function raw(request: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    let closed = false;
    // Bounds a hang only: every answer ends by its length or the close, however loaded the machine.
    const timer = setTimeout(() => finish(), 60_000);
    const finish = () => {
      clearTimeout(timer);
      const text = data.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no response: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      const length = Number(headers['content-length'] ?? 0);
      const bodyText = Buffer.from(text.slice(split + 4))
        .subarray(0, length)
        .toString();
      let body: any = bodyText;
      try {
        body = JSON.parse(bodyText);
      } catch {
        // not JSON
      }
      socket.destroy();
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body, closed });
    };
    socket.on('data', (chunk) => {
      data = Buffer.concat([data, chunk]);
      const text = data.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return;
      const keepAlive = !/\r\nconnection: *close/i.test(text.slice(0, split));
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, split))?.[1] ?? 0);
      if (keepAlive && Buffer.byteLength(text.slice(split + 4)) >= length) finish();
    });
    socket.on('error', () => {
      // a reset after the answer: judged by what was read
    });
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.write(request);
  });
}

function assertEnvelope(label: string, res: RawResponse, status: number) {
  assert.equal(res.status, status, `${label}: ${res.status} ${JSON.stringify(res.body)}`);
  assert.equal(res.body?.result, 'error', `${label}: ${JSON.stringify(res.body)}`);
  assert.equal(typeof res.body.msg, 'string', label);
  assert.equal(typeof res.body.code, 'string', label);
  assert.match(res.headers['content-type'] ?? '', /application\/json/, label);
  if (res.closed) assert.equal(res.headers.connection?.toLowerCase(), 'close', `${label}: a closed connection says so`);
}

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: confab.test\r\n${extra}\r\n`;

test('a URL too long answers 414, whether or not it fits the header buffer', async () => {
  assertEnvelope('10k URL', await raw(get(`/api/v1/users?x=${'a'.repeat(10_000)}`)), 414);
  assertEnvelope('100k URL', await raw(get(`/api/v1/users?x=${'a'.repeat(100_000)}`)), 414);
});

test('headers too large answer 431', async () => {
  assertEnvelope('100k header', await raw(get('/api/v1/users', `X-Big: ${'h'.repeat(100_000)}\r\n`)), 431);
});

test('a malformed URL or request line answers 400', async () => {
  assertEnvelope('bad percent-encoding', await raw(get('/api/v1/users/%E0%A4%A')), 400);
  assertEnvelope('bad path parameter encoding', await raw(get('/api/v1/streams/%zz')), 400);
  assertEnvelope('garbage', await raw('NOT HTTP AT ALL\r\n\r\n'), 400);
  assertEnvelope('bad header', await raw(get('/api/v1/users', 'Bad Header Name: x\r\n')), 400);
});

test('a body too large answers 413', async () => {
  const body = 'a='.padEnd(5 * 1024 * 1024, 'x');
  const res = await raw(
    `POST /api/v1/messages HTTP/1.1\r\nHost: confab.test\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
  assertEnvelope('5 MiB body', res, 413);
  const declared = await raw(
    `POST /api/v1/messages HTTP/1.1\r\nHost: confab.test\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\nabc`,
  );
  assertEnvelope('declared 50 MiB', declared, 413);
});

test('the server still answers normally afterwards', async () => {
  const res = await raw(get('/api/v1/server_settings', 'Connection: close\r\n'));
  assert.equal(res.status, 200);
  assert.equal(res.body.result, 'success');
});
