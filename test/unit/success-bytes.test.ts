// The success answer written to its socket as bytes (src/http/success-bytes.ts): over real
// sockets, the bytes Node writes for the same answer through ServerResponse (writeSuccess),
// the connection kept for the next requests, and Node's own path wherever its answer would
// differ (HTTP/1.0, Connection: close, Expect, a cap on requests per connection).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { API_HEADERS, writeSuccessBytes } from '../../src/http/success-bytes.ts';
import { writeSuccess } from '../../src/http/router.ts';

/**
 * A server answering `/bytes?m=X` with the bytes path and `/node?m=X` through ServerResponse,
 * both with the members `"m":"X"` and `headers`; `used` records whether each /bytes request took the bytes path.
 */
async function serving(
  setup: (server: Server) => void = () => {},
  headers: Record<string, string> = API_HEADERS,
): Promise<{ server: Server; port: number; used: boolean[] }> {
  const used: boolean[] = [];
  const server = createServer();
  server.on('request', (req, res) => {
    const url = new URL(req.url!, 'http://x');
    const members = `"m":${JSON.stringify(url.searchParams.get('m'))}`;
    if (url.pathname === '/bytes') {
      const written = writeSuccessBytes(server, res, headers, members);
      used.push(written);
      if (written) return;
    }
    writeSuccess(res, { ...headers }, members);
  });
  setup(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, used };
}

/** Sends `requests` (raw text) at once over one socket; resolves with the text read until it closes or holds `answers` answers. */
function exchange(port: number, requests: string, answers: number): Promise<{ text: string; socket: Socket }> {
  const socket = connect(port, '127.0.0.1');
  socket.write(requests);
  return new Promise((resolve, reject) => {
    let text = '';
    const done = () => resolve({ text, socket });
    socket.on('data', (d) => {
      text += d.toString('latin1');
      if (splitAnswers(text).length === answers) done();
    });
    socket.on('end', done);
    socket.on('error', reject);
  });
}

/** Whole answers (head and a body of its content-length) in `text`, read as latin1: a character per byte. */
function splitAnswers(text: string): string[] {
  const out: string[] = [];
  let rest = text;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return out;
    const length = Number(/content-length: (\d+)/i.exec(rest.slice(0, end))?.[1] ?? 0);
    if (rest.length < end + 4 + length) return out;
    out.push(rest.slice(0, end + 4 + length));
    rest = rest.slice(end + 4 + length);
  }
}

const get = (path: string, extra = '', version = '1.1') => `GET ${path} HTTP/${version}\r\nHost: x\r\n${extra}\r\n`;
const dateOf = (answer: string) => /\r\nDate: (.*)\r\n/.exec(answer)?.[1];
const timeless = (answer: string) => answer.replace(/\r\nDate: .*\r\n/, '\r\n');

/** Sends each request over one socket once the answer before it has come; the answers. */
async function conversation(port: number, requests: string[]): Promise<string[]> {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  let wake = () => {};
  socket.on('data', (d) => {
    text += d.toString('latin1');
    wake();
  });
  try {
    for (let i = 0; i < requests.length; i++) {
      socket.write(requests[i]);
      while (splitAnswers(text).length <= i) await new Promise<void>((r) => (wake = r));
    }
    return splitAnswers(text);
  } finally {
    socket.destroy();
  }
}

test("keep-alive HTTP/1.1: Node's bytes, written as bytes, and the connection carries the next requests", async () => {
  const { server, port, used } = await serving();
  try {
    const requests = [get('/bytes?m=a'), get('/node?m=a'), get('/bytes?m=a', 'Connection: keep-alive\r\n'), get('/bytes?m=b%C3%A9'), get('/node?m=b%C3%A9')];
    const [bytesA, nodeA, bytesA2, bytesB, nodeB] = await conversation(port, requests);
    assert.deepEqual(used, [true, true, true]);
    assert.equal(timeless(bytesA), timeless(nodeA));
    assert.equal(timeless(bytesA2), timeless(nodeA));
    assert.equal(timeless(bytesB), timeless(nodeB));
    assert.match(
      bytesA,
      /^HTTP\/1\.1 200 OK\r\ncache-control: max-age=0, no-cache, no-store, must-revalidate, private\r\ncontent-type: application\/json; charset=utf-8\r\ncontent-length: 37\r\n/,
    );
    assert.match(bytesA, /\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n\{"result":"success","msg":"","m":"a"\}$/);
    // The length counts bytes, not characters.
    assert.match(bytesB, /\r\ncontent-length: 39\r\n/);
    assert.ok(Math.abs(Date.parse(dateOf(bytesA)!) - Date.now()) < 3000, dateOf(bytesA));
  } finally {
    server.close();
  }
});

test('pipelined requests: an answer waiting for the one before it is written by Node, in order', async () => {
  const { server, port, used } = await serving();
  try {
    const { text, socket } = await exchange(port, get('/bytes?m=1') + get('/bytes?m=2') + get('/bytes?m=3'), 3);
    socket.destroy();
    assert.deepEqual(
      splitAnswers(text).map((a) => a.slice(a.indexOf('\r\n\r\n') + 4)),
      ['1', '2', '3'].map((m) => `{"result":"success","msg":"","m":"${m}"}`),
    );
    // The first is its socket's answer; the others had no socket yet.
    assert.deepEqual(used, [true, false, false]);
  } finally {
    server.close();
  }
});

test('the Date header follows the clock: the same members a second later get a new Date', async () => {
  const { server, port, used } = await serving();
  try {
    const first = await exchange(port, get('/bytes?m=t'), 1);
    await new Promise((r) => setTimeout(r, 1100));
    const second = await exchange(port, get('/bytes?m=t'), 1);
    first.socket.destroy();
    second.socket.destroy();
    assert.deepEqual(used, [true, true]);
    assert.ok(Date.parse(dateOf(second.text)!) > Date.parse(dateOf(first.text)!), `${dateOf(first.text)} then ${dateOf(second.text)}`);
  } finally {
    server.close();
  }
});

test('a server without a keep-alive timeout: no Keep-Alive line, as Node writes it', async () => {
  const { server, port, used } = await serving((s) => {
    s.keepAliveTimeout = 0;
  });
  try {
    const { text, socket } = await exchange(port, get('/bytes?m=k') + get('/node?m=k'), 2);
    socket.destroy();
    const [bytes, node] = splitAnswers(text);
    assert.deepEqual(used, [true]);
    assert.doesNotMatch(bytes, /Keep-Alive/);
    assert.equal(timeless(bytes), timeless(node));
  } finally {
    server.close();
  }
});

test('where Node would close the connection or answer otherwise, it answers: HTTP/1.0, Connection: close, Expect, a request cap', async () => {
  const cases: [string, string, (s: Server) => void][] = [
    ['HTTP/1.0', get('/bytes?m=x', '', '1.0'), () => {}],
    ['Connection: close', get('/bytes?m=x', 'Connection: close\r\n'), () => {}],
    ['Expect', get('/bytes?m=x', 'Expect: 100-continue\r\n'), () => {}],
    [
      'maxRequestsPerSocket',
      get('/bytes?m=x'),
      (s) => {
        s.maxRequestsPerSocket = 1;
      },
    ],
  ];
  for (const [name, request, setup] of cases) {
    const { server, port, used } = await serving(setup);
    try {
      const { text, socket } = await exchange(port, request, name === 'Expect' ? 2 : 1);
      socket.destroy();
      assert.deepEqual(used, [false], name);
      // Node answers the Expect with a 100 Continue first.
      assert.match(text.replace('HTTP/1.1 100 Continue\r\n\r\n', ''), /^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"result":"success","msg":"","m":"x"\}$/, name);
    } finally {
      server.close();
    }
  }
});

test('an answer with headers of its own, or another Cache-Control, is written by Node', async () => {
  const others: Record<string, string>[] = [{}, { 'cache-control': 'no-store' }, { ...API_HEADERS, 'x-other': '1' }];
  for (const headers of others) {
    const { server, port, used } = await serving(() => {}, headers);
    try {
      const [bytes, node] = await conversation(port, [get('/bytes?m=h'), get('/node?m=h')]);
      assert.deepEqual(used, [false], JSON.stringify(headers));
      assert.equal(timeless(bytes), timeless(node));
    } finally {
      server.close();
    }
  }
});

test('HEAD: Node writes the headers alone', async () => {
  const { server, port, used } = await serving();
  try {
    const socket = connect(port, '127.0.0.1');
    socket.write('HEAD /bytes?m=x HTTP/1.1\r\nHost: x\r\n\r\n');
    let text = '';
    for await (const chunk of socket) {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\n')) break;
    }
    socket.destroy();
    assert.deepEqual(used, [false]);
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n$/);
  } finally {
    server.close();
  }
});
