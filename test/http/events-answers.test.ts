// A parked long-poll's answer, over real sockets (src/events/fetch.ts writes it
// straight from the queue, outside Fastify's reply): the same bytes as an answer
// sent the ordinary way, heartbeats, and clients that go away while parked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';

// A heartbeat only where a test waits for one.
const timers = { heartbeatMs: 600_000, heartbeatJitterMs: 0, queueTimeoutMs: 600_000, gcIntervalMs: 60_000 };
let server: TestServer;
let port: number;
before(async () => {
  server = await startTestServer({ events: timers });
  await server.app.listen({ port: 0, host: '127.0.0.1' });
  port = (server.app.server.address() as { port: number }).port;
});
after(async () => {
  await server.app.close();
  await server.close();
});

interface RawPoll {
  socket: Socket;
  /** The whole answer as the client reads it: status line, headers, body. */
  answer: Promise<string>;
}

/** A request over a socket of its own, read to the end of its body. */
function rawGet(c: Client, path: string, method = 'GET'): RawPoll {
  const auth = Buffer.from(`${c.email}:${c.apiKey}`).toString('base64');
  const socket = connect(port, '127.0.0.1');
  socket.write(`${method} /api/v1${path} HTTP/1.1\r\nHost: confab.test\r\nAuthorization: Basic ${auth}\r\n\r\n`);
  const answer = new Promise<string>((resolve, reject) => {
    let text = '';
    socket.on('data', (d) => {
      text += d;
      const end = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text.slice(0, end))?.[1];
      if (end >= 0 && length !== undefined && (method === 'HEAD' || Buffer.byteLength(text.slice(end + 4)) >= Number(length))) {
        socket.end();
        resolve(text);
      }
    });
    socket.on('error', reject);
  });
  return { socket, answer };
}

/** The answer without its Date header, which moves with the clock. */
const timeless = (answer: string) => answer.replace(/^date: .*\r\n/im, '');

function queuesOf(queueId: string) {
  return (server.processes.find((p) => p.svc.queues.has(queueId)) ?? server).svc.queues;
}

/** Sockets open on the listening server. */
function connections(): Promise<number> {
  return new Promise((resolve, reject) => server.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 5));
}

async function register(c: Client, params: Record<string, unknown> = {}): Promise<string> {
  const res = await c.post('/register', { event_types: ['realm_user'], ...params });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.queue_id;
}

test('a parked poll answers with the bytes of the same answer sent at once: headers, envelope, ignored parameters', async () => {
  const member = await server.createUser({ fullName: 'Parked Member' });
  const queueId = await register(member);
  const query = `/events?queue_id=${queueId}&last_event_id=-1&unknown_param=1`;
  const parked = rawGet(member, query);
  await until(() => queuesOf(queueId).get(queueId, member.id).waiting);
  await server.owner.patch(`/users/${member.id}`, { full_name: 'Renamed Parked' });
  const answer = await parked.answer;
  // The same poll again (nothing acknowledged), answered at once through Fastify's reply.
  const immediate = await rawGet(member, `${query}&dont_block=true`).answer;
  assert.equal(timeless(answer), timeless(immediate));
  const [head, body] = answer.split('\r\n\r\n');
  assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(head, /\r\ncontent-type: application\/json; charset=utf-8\r\n/);
  assert.match(head, /\r\ncache-control: max-age=0, no-cache, no-store, must-revalidate, private\r\n/);
  assert.match(head, new RegExp(`\\r\\ncontent-length: ${Buffer.byteLength(body)}\\r\\n`));
  assert.equal(
    body,
    JSON.stringify({
      result: 'success',
      msg: '',
      events: [{ type: 'realm_user', op: 'update', person: { user_id: member.id, full_name: 'Renamed Parked' }, id: 0 }],
      ignored_parameters_unsupported: ['unknown_param'],
    }),
  );
});

test('queues of one shape share the event text; each answer has its own id and its own flags', async () => {
  const [a, b, c] = [await server.createUser({ fullName: 'Shape A' }), await server.createUser(), await server.createUser()];
  const [qa, qb, qc] = [
    await register(a, { event_types: ['message'] }),
    await register(b, { event_types: ['message'] }),
    await register(c, { event_types: ['message'] }),
  ];
  const send = async (to: Client[], content: string) => {
    const res = await server.owner.post('/messages', { type: 'direct', to: JSON.stringify(to.map((u) => u.id)), content });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  // Queue b's ids run one ahead of the others'.
  await send([b], 'only b');
  const polls = [
    rawGet(a, `/events?queue_id=${qa}&last_event_id=-1`),
    rawGet(b, `/events?queue_id=${qb}&last_event_id=0`),
    rawGet(c, `/events?queue_id=${qc}&last_event_id=-1`),
  ];
  await until(() => [queuesOf(qa).get(qa, a.id), queuesOf(qb).get(qb, b.id), queuesOf(qc).get(qc, c.id)].every((q) => q.waiting));
  await send([a, b, c], 'hello @**Shape A**');
  const events = await Promise.all(polls.map(async (p) => JSON.parse((await p.answer).split('\r\n\r\n')[1]).events));
  assert.deepEqual(
    events.map((e) => [e.length, e[0].id, e[0].flags]),
    [
      [1, 0, ['mentioned']],
      [1, 1, []],
      [1, 0, []],
    ],
  );
  assert.deepEqual(events[0][0].message, events[1][0].message);
  assert.deepEqual(events[1][0].message, events[2][0].message);
});

test('HEAD of a parked poll: the headers, no body', async () => {
  const member = await server.createUser({ fullName: 'Head Member' });
  const queueId = await register(member);
  const parked = rawGet(member, `/events?queue_id=${queueId}&last_event_id=-1`, 'HEAD');
  await until(() => queuesOf(queueId).get(queueId, member.id).waiting);
  await server.owner.patch(`/users/${member.id}`, { full_name: 'Head Renamed' });
  const [head, body] = (await parked.answer).split('\r\n\r\n');
  assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(head, /\r\ncontent-length: \d+\r\n/);
  assert.equal(body, '');
});

test('a parked poll ends with a heartbeat over its socket', async () => {
  const fast = await startTestServer({ events: { ...timers, heartbeatMs: 300 } });
  try {
    await fast.app.listen({ port: 0, host: '127.0.0.1' });
    const fastPort = (fast.app.server.address() as { port: number }).port;
    const queueId = (await fast.owner.post('/register', { event_types: ['realm_user'] })).body.queue_id;
    const savedPort = port;
    port = fastPort;
    try {
      const answer = await rawGet(fast.owner, `/events?queue_id=${queueId}&last_event_id=-1`).answer;
      assert.equal(answer.split('\r\n\r\n')[1], '{"result":"success","msg":"","events":[{"type":"heartbeat","id":0}]}');
    } finally {
      port = savedPort;
    }
  } finally {
    await fast.app.close();
    await fast.close();
  }
});

test('a client that goes away while parked: the queue stops waiting, no heartbeat is queued, the next poll parks', async () => {
  const member = await server.createUser({ fullName: 'Leaving Member' });
  const queueId = await register(member);
  const queue = queuesOf(queueId).get(queueId, member.id);
  const gone = rawGet(member, `/events?queue_id=${queueId}&last_event_id=-1`);
  gone.answer.catch(() => {});
  await until(() => queue.waiting);
  gone.socket.destroy();
  await until(() => !queue.waiting);
  assert.deepEqual(queue.events, [], 'no heartbeat, no answer queued');
  const next = rawGet(member, `/events?queue_id=${queueId}&last_event_id=-1`);
  await until(() => queue.waiting);
  await server.owner.patch(`/users/${member.id}`, { full_name: 'Came Back' });
  assert.match(await next.answer, /"full_name":"Came Back"/);
});

test("a replaced poll's socket closing later leaves the newer poll parked", async () => {
  const member = await server.createUser({ fullName: 'Twice Member' });
  const queueId = await register(member);
  const queue = queuesOf(queueId).get(queueId, member.id);
  const first = rawGet(member, `/events?queue_id=${queueId}&last_event_id=-1`);
  await until(() => queue.waiting);
  const second = rawGet(member, `/events?queue_id=${queueId}&last_event_id=-1`);
  assert.match(await first.answer, /"events":\[\]\}$/, 'the newer poll answered the first');
  await until(() => queue.waiting);
  const open = await connections();
  first.socket.destroy();
  // The server counts the socket gone before it tells the reply (the same tick): by then the close was handled.
  while ((await connections()) >= open) await new Promise((r) => setTimeout(r, 5));
  assert.equal(queue.waiting, true);
  await server.owner.patch(`/users/${member.id}`, { full_name: 'Second Heard' });
  assert.match(await second.answer, /"full_name":"Second Heard"/);
});

test('a client that leaves right after asking (before or after its poll parks) leaves no poll parked', async () => {
  const member = await server.createUser({ fullName: 'Hasty Member' });
  const queueId = await register(member);
  const queue = queuesOf(queueId).get(queueId, member.id);
  for (let i = 0; i < 5; i++) {
    const poll = rawGet(member, `/events?queue_id=${queueId}&last_event_id=-1`);
    poll.answer.catch(() => {});
    poll.socket.on('connect', () => poll.socket.destroy());
    await new Promise((r) => poll.socket.once('close', r));
    // However far the request got, the queue ends up not waiting (no heartbeat will come for it).
    // A minute bounds a hang only: a loaded machine may take seconds to see the client leave.
    const giveUp = Date.now() + 60_000;
    while (queue.waiting && Date.now() < giveUp) await new Promise((r) => setTimeout(r, 10));
    assert.equal(queue.waiting, false);
  }
  assert.deepEqual(queue.events, []);
});

test("polls over one kept connection, lean or through the route, parked or at once: each answer Node's bytes for it", async () => {
  const member = await server.createUser({ fullName: 'Kept Member' });
  const queueId = await register(member);
  const auth = Buffer.from(`${member.email}:${member.apiKey}`).toString('base64');
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (d) => (text += d.toString('latin1')));
  const answers = () => text.split(/(?=HTTP\/1\.1 )/).filter((a) => /\r\n\r\n/.test(a));
  const ask = async (query: string) => {
    const before = answers().length;
    socket.write(`GET /api/v1/events?${query} HTTP/1.1\r\nHost: confab.test\r\nAuthorization: Basic ${auth}\r\n\r\n`);
    await until(() => answers().length > before && answers()[before].endsWith('}'));
    return answers()[before];
  };
  try {
    const parked = ask(`queue_id=${queueId}&last_event_id=-1`);
    await until(() => queuesOf(queueId).get(queueId, member.id).waiting);
    await server.owner.patch(`/users/${member.id}`, { full_name: 'Kept Renamed' });
    const woken = await parked;
    // The same poll at once, on the same connection, and through the route (a queue id in
    // percent-encoded form is not the lean path's).
    const atOnce = await ask(`queue_id=${queueId}&last_event_id=-1&dont_block=true`);
    const encoded = queueId.replace(/-/g, '%2D');
    const routed = await rawGet(member, `/events?queue_id=${encoded}&last_event_id=-1&dont_block=true`).answer;
    assert.match(woken, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\nConnection: keep-alive\r\n[\s\S]*"full_name":"Kept Renamed"/);
    assert.equal(timeless(woken), timeless(routed));
    assert.equal(timeless(atOnce), timeless(routed));
    // Parked through the route, on the same connection: the same bytes as the route's at once.
    const routedParked = ask(`queue_id=${encoded}&last_event_id=0`);
    await until(() => queuesOf(queueId).get(queueId, member.id).waiting);
    await server.owner.patch(`/users/${member.id}`, { full_name: 'Kept Again' });
    const routedWoken = await routedParked;
    const routedAtOnce = await rawGet(member, `/events?queue_id=${encoded}&last_event_id=0&dont_block=true`).answer;
    assert.match(routedWoken, /"full_name":"Kept Again"/);
    assert.equal(timeless(routedWoken), timeless(routedAtOnce));
  } finally {
    socket.destroy();
  }
});
