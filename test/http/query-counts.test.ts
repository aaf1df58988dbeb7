// How many SQL statements the hot endpoints send per request (BEGIN and COMMIT
// included). The counts are today's, asserted exactly: a change that adds a
// round trip fails here and has to say why (or lower the number).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';

let server: TestServer;
let member: Client;
let channelId: number;

before(async () => {
  // No background passes and no re-authentication within the file: only the request's own statements count.
  server = await startTestServer({ schedulerIntervalMs: 3_600_000, jobIntervalMs: 3_600_000, credentialCacheMs: 3_600_000 });
  member = await server.createUser({ fullName: 'Count Member' });
  channelId = (await server.owner.post('/channels/create', { name: 'counted', subscribers: JSON.stringify([server.owner.id, member.id]) })).body.id;
  // Warm: each client authenticated once (cached from then on), one message in the channel.
  await send(server.owner, 'first');
  await member.get('/users/me');
});
after(() => server.close());

async function send(c: Client, content: string) {
  const res = await c.post('/messages', { type: 'stream', to: channelId, topic: 'counts', content });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id as number;
}

/** The statements of one request, and its answer checked. */
async function counted(fn: () => Promise<{ status: number; body: any }>): Promise<string[]> {
  let status = 0;
  let body: unknown;
  const statements = await server.statementsDuring(async () => {
    ({ status, body } = await fn());
  });
  assert.equal(status, 200, JSON.stringify(body));
  return statements;
}

const described = (statements: string[]) => statements.map((s, i) => `${i + 1}. ${s.slice(0, 140)}`).join('\n');

test('POST /messages (a channel message)', async () => {
  const statements = await counted(() => member.post('/messages', { type: 'stream', to: channelId, topic: 'counts', content: 'counted **message**' }));
  assert.equal(statements.length, EXPECTED.send, described(statements));
});

test('GET /messages (the newest 20 of a channel)', async () => {
  const narrow = JSON.stringify([{ operator: 'channel', operand: channelId }]);
  const statements = await counted(() => member.get('/messages', { anchor: 'newest', num_before: 20, num_after: 0, narrow }));
  assert.equal(statements.length, EXPECTED.fetch, described(statements));
});

test('GET /messages again (the viewer and the channel kept)', async () => {
  const narrow = JSON.stringify([{ operator: 'channel', operand: channelId }]);
  const statements = await counted(() => member.get('/messages', { anchor: 'newest', num_before: 20, num_after: 0, narrow }));
  assert.equal(statements.length, EXPECTED.fetchAgain, described(statements));
});

test('POST /register (every section)', async () => {
  const statements = await counted(() => member.post('/register', {}));
  assert.equal(statements.length, EXPECTED.register, described(statements));
});

test('GET /events (an event waiting)', async () => {
  const queue = (await member.post('/register', { event_types: JSON.stringify(['message']) })).body;
  await send(server.owner, 'an event');
  const statements = await counted(() => member.get('/events', { queue_id: queue.queue_id, last_event_id: -1 }));
  assert.equal(statements.length, EXPECTED.events, described(statements));
});

// Today's counts, the same on PGlite and PostgreSQL. A failure lists the statements: lower the number
// when a change saves round trips; raise it only with a reason in the commit.
const EXPECTED = { send: 8, fetch: 2, fetchAgain: 1, register: 39, events: 0 };
