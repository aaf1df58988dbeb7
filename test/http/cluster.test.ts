// Two servers on one PostgreSQL database and one Redis broker, in this test
// process: any process answers for any queue, limits count across processes,
// cache invalidation reaches every process, a graceful stop hands queues over.
// (Real processes, kill -9 and broker restarts: cluster-faults.test.ts.)

import nodeTest, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { Client, freshPostgresDatabase, OWNER_EMAIL, startTestCluster, type TestServer } from '../support/server.ts';
import { createServer } from '../../src/server.ts';
import { Browser } from '../support/browser.ts';
import type { RunningServer } from '../../src/server.ts';
import { manage } from '../../src/cli/manage.ts';
import { SERVER_GENERATION, versionFields } from '../../src/version.ts';
import { deliverDue } from '../../src/scheduled_messages/scheduler.ts';
import { enqueueJob, runDueJobs, type JobKinds } from '../../src/jobs/worker.ts';

// The broker's processes share PostgreSQL: this file runs in the PostgreSQL pass only.
const skip = process.env.CONFAB_TEST_DB !== 'postgres' ? 'needs CONFAB_TEST_DB=postgres' : false;
const test = (name: string, fn: () => Promise<void>) => nodeTest(name, { skip }, fn);

let server: TestServer;
let a: RunningServer;
let b: RunningServer;

/** A test server whose requests all go to one process, once it has heard everything published so far. */
function pinned(target: RunningServer): TestServer {
  const pick = async () => {
    await (target.svc.events as { sync?: () => Promise<void> }).sync?.();
    return target.app;
  };
  return { ...server, pick } as TestServer;
}

/** The same user's client, pinned to one process. */
function on(target: RunningServer, client: Client): Client {
  return new Client(pinned(target), client.id, client.email, client.apiKey, client.host);
}

before(async () => {
  if (skip) return;
  server = await startTestCluster({ rateLimit: { perUser: 100_000, perIp: 100_000, windowSeconds: 60, loginFailures: 3, loginWindowSeconds: 1800 } });
  [a, b] = server.processes;
});
after(() => server?.close());

async function dm(client: Client, to: Client, content: string): Promise<number> {
  const res = await client.post('/messages', { type: 'direct', to: [to.id], content });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

test('a queue registered on one process is polled through the other, in order, with none lost or repeated', async () => {
  const alice = await server.createUser();
  const reg = await on(a, alice).post('/register', { event_types: ['message'] });
  const queueId = reg.body.queue_id;
  assert.ok(a.svc.queues.has(queueId) && !b.svc.queues.has(queueId), 'the queue lives on the process that registered it');
  const sent: number[] = [];
  for (let i = 0; i < 6; i++) sent.push(await dm(on(i % 2 ? a : b, server.owner), alice, `m${i}`));
  const first = await on(b, alice).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.deepEqual(
    first.body.events.map((e: any) => e.message.id),
    sent,
  );
  const ids = first.body.events.map((e: any) => e.id);
  const again = await on(b, alice).get('/events', { queue_id: queueId, last_event_id: ids[2], dont_block: true });
  assert.deepEqual(
    again.body.events.map((e: any) => e.id),
    ids.slice(3),
    'acknowledged events are not repeated',
  );
});

test('a poll parked on a foreign queue answers as soon as an event is committed anywhere', async () => {
  const alice = await server.createUser();
  const reg = await on(a, alice).post('/register', { event_types: ['message'] });
  const parked = on(b, alice).get('/events', { queue_id: reg.body.queue_id, last_event_id: -1 });
  // The forwarded poll is parked on its owner before the message is sent.
  while (![...a.svc.queues.forUser(alice.id)].some((q) => q.waiting)) await new Promise((r) => setTimeout(r, 5));
  const id = await dm(on(b, server.owner), alice, 'wake up');
  const res = await parked;
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(
    res.body.events.map((e: any) => e.message.id),
    [id],
  );
});

test('a forwarded poll whose client leaves before (or while) it is sent does not stay parked on the owner', async () => {
  const alice = await server.createUser();
  const reg = await on(a, alice).post('/register', { event_types: ['message'] });
  const queue = a.svc.queues.get(reg.body.queue_id, alice.id);
  const poll = { queue_id: reg.body.queue_id, last_event_id: -1, dont_block: false };
  for (const leave of ['before the call', 'while it is published'] as const) {
    const gone = new AbortController();
    if (leave === 'before the call') gone.abort();
    const answer = b.svc.remoteQueues!.getEvents(alice.id, poll, gone.signal);
    if (leave === 'while it is published') gone.abort();
    // The owner cancels the wait, so the forwarded poll answers (empty) instead of at a heartbeat.
    assert.deepEqual(await answer, [], leave);
    assert.equal(queue.waiting, false, leave);
  }
});

test("bad queue ids through the other process: unknown owner, unknown queue, another user's, deleted", async () => {
  const alice = await server.createUser();
  const bob = await server.createUser();
  const reg = await on(a, alice).post('/register', { event_types: ['message'] });
  const queueId = reg.body.queue_id;
  for (const id of ['no-such-queue', `${a.svc.queues.idPrefix}nope`, 'deadbeef0000:x']) {
    const res = await on(b, alice).get('/events', { queue_id: id, last_event_id: -1, dont_block: true });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'BAD_EVENT_QUEUE_ID', id);
    assert.equal(res.body.queue_id, id);
  }
  const foreign = await on(b, bob).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(foreign.body.code, 'BAD_EVENT_QUEUE_ID');
  const bobDelete = await on(b, bob).delete('/events', { queue_id: queueId });
  assert.equal(bobDelete.body.code, 'BAD_EVENT_QUEUE_ID', 'another user cannot delete it');
  await dm(server.owner, alice, 'to acknowledge');
  await on(b, alice).get('/events', { queue_id: queueId, last_event_id: 0, dont_block: true });
  const bad = await on(b, alice).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.msg, 'An event newer than -1 has already been pruned!', "the owner's errors travel back as they are");
  const del = await on(b, alice).delete('/events', { queue_id: queueId });
  assert.equal(del.status, 200, JSON.stringify(del.body));
  assert.ok(!a.svc.queues.has(queueId));
  const gone = await on(b, alice).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(gone.body.code, 'BAD_EVENT_QUEUE_ID');
});

test('rate limits count the requests made on every process', async () => {
  const limited = await startTestCluster({ rateLimit: { perUser: 6, perIp: 100, windowSeconds: 60, loginFailures: 3, loginWindowSeconds: 1800 } });
  try {
    const [p, q] = limited.processes;
    const statuses: number[] = [];
    const remaining: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await on(i % 2 ? p : q, limited.owner).get('/users/me');
      statuses.push(res.status);
      remaining.push(String(res.headers['x-ratelimit-remaining']));
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429, 429]);
    assert.deepEqual(remaining.slice(0, 6), ['5', '4', '3', '2', '1', '0']);
  } finally {
    await limited.close();
  }
});

test('login failures count across processes: the fourth attempt is refused even with the right password', async () => {
  const carol = await server.createUser({ email: 'carol-cluster@example.com', password: 'right-password-1' });
  for (let i = 0; i < 3; i++) {
    const res = await on(i % 2 ? a : b, server.anonymous).post('/fetch_api_key', { username: carol.email!, password: 'wrong' });
    assert.equal(res.body.code, 'AUTHENTICATION_FAILED');
  }
  const refused = await on(a, server.anonymous).post('/fetch_api_key', { username: carol.email!, password: 'right-password-1' });
  assert.equal(refused.status, 429);
  assert.equal(refused.body.code, 'RATE_LIMIT_HIT');
});

test('a deactivation on one process refuses the cached credentials on the other at once', async () => {
  const dave = await server.createUser();
  // Both processes remember dave's key.
  assert.equal((await on(a, dave).get('/users/me')).status, 200);
  assert.equal((await on(b, dave).get('/users/me')).status, 200);
  const res = await on(a, server.owner).delete(`/users/${dave.id}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const refused = await on(b, dave).get('/users/me');
  assert.equal(refused.status, 401);
  assert.equal(refused.body.msg, 'Account is deactivated');
});

test('a regenerated API key: the old one, remembered by both processes, stops on both at once', async () => {
  const erin = await server.createUser();
  assert.equal((await on(a, erin).get('/users/me')).status, 200);
  assert.equal((await on(b, erin).get('/users/me')).status, 200);
  const res = await on(a, erin).post('/users/me/api_key/regenerate');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const refused = await on(b, erin).get('/users/me');
  assert.equal(refused.status, 401);
  assert.equal(refused.body.msg, 'Invalid API key');
  const fresh = new Client(server, erin.id, erin.email, res.body.api_key);
  assert.equal((await on(b, fresh).get('/users/me')).status, 200);
});

test("a bot's regenerated key stops on the other process at once", async () => {
  const owner = server.owner;
  const bot = (await on(a, owner).post('/bots', { full_name: 'Cluster Bot', short_name: 'cluster' })).body;
  const old = new Client(server, bot.user_id, 'cluster-bot@confab.test', bot.api_key);
  assert.equal((await on(b, old).get('/users/me')).status, 200);
  const res = await on(a, owner).post(`/bots/${bot.user_id}/api_key/regenerate`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal((await on(b, old).get('/users/me')).status, 401);
});

test('a browser session started on one process works on the other; a logout there ends it everywhere', async () => {
  const frank = await server.createUser({ email: 'frank-cluster@example.com', password: 'frank-password-1' });
  const onA = new Browser(pinned(a));
  assert.equal((await onA.post('/accounts/login', { username: frank.email!, password: 'frank-password-1' })).status, 200);
  const onB = new Browser(pinned(b));
  for (const [k, v] of onA.cookies) onB.cookies.set(k, v);
  const stolen = onA.cookieHeader();
  const me = await onB.get('/json/users/me');
  assert.equal(me.status, 200, JSON.stringify(me.body));
  assert.equal(me.body.user_id, frank.id);
  assert.equal((await onB.post('/accounts/logout')).status, 200);
  // The old cookie, sent again to the first process, no longer works.
  const replay = await a.app.inject({ method: 'GET', url: '/json/users/me', headers: { host: 'confab.test', cookie: stolen } });
  assert.equal(replay.statusCode, 401);
});

test("the manage command's change reaches every server process through the broker", async () => {
  const boss = await server.createOrganization('closing');
  assert.equal((await on(a, boss).get('/users/me')).status, 200);
  assert.equal((await on(b, boss).get('/users/me')).status, 200);
  const reg = await on(b, boss).post('/register', { event_types: ['realm'] });
  const saved = { ...process.env };
  Object.assign(process.env, { DATABASE_URL: server.config.databaseUrl, BROKER_URL: server.config.brokerUrl, BROKER_PREFIX: server.config.brokerPrefix });
  const lines: string[] = [];
  try {
    assert.equal(await manage(['deactivate-org', '--org', 'closing'], (line) => lines.push(line)), 0, lines.join('\n'));
  } finally {
    process.env = saved;
  }
  for (const target of [a, b]) {
    const refused = await on(target, boss).get('/users/me');
    assert.equal(refused.status, 401, 'the cached credentials went at once');
    assert.equal(refused.body.msg, 'This organization has been deactivated');
  }
  const event = b.svc.queues.get(reg.body.queue_id, boss.id).events.find((e) => e.type === 'realm');
  assert.equal(event?.op, 'deactivated', 'the clients heard of it');
});

test('periodic jobs run once across processes: both schedulers at once send each due message once', async () => {
  const gina = await server.createUser();
  const at = Math.floor(Date.now() / 1000) + 3600;
  const contents = [1, 2, 3, 4, 5, 6].map((i) => `scheduled ${i}`);
  for (const content of contents) {
    const res = await on(a, server.owner).post('/scheduled_messages', {
      type: 'direct',
      to: JSON.stringify([gina.id]),
      content,
      scheduled_delivery_timestamp: at,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
  // Each process's scheduler pass, at the same moment, an hour from now (the rows are due then).
  const due = new Date((at + 60) * 1000);
  const [byA, byB] = await Promise.all([deliverDue(a.svc, due), deliverDue(b.svc, due)]);
  assert.equal(byA + byB, contents.length, 'every row claimed by exactly one pass');
  const res = await on(b, gina).get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [{ operator: 'dm', operand: [server.owner.id] }] });
  assert.deepEqual(res.body.messages.map((m: any) => m.content).sort(), contents.map((c) => `<p>${c}</p>`).sort());
});

test('periodic jobs: both job workers at once run each job (outgoing webhooks, link previews) once', async () => {
  const runs: (string | number)[] = [];
  const kinds: JobKinds = { counted: { maxAttempts: 1, leaseMs: 60_000, backoffMs: () => 0, run: async (_svc, job) => void runs.push(job.id) } };
  // Due in an hour, so that the servers' own passes (the real clock) leave them alone.
  const runAfter = new Date(Date.now() + 3600_000);
  await a.svc.db.transaction().execute(async (tx) => {
    for (let i = 0; i < 8; i++) await enqueueJob(tx, { realmId: null, kind: 'counted', payload: { i }, runAfter });
  });
  const due = new Date(runAfter.getTime() + 60_000);
  const [byA, byB] = await Promise.all([runDueJobs(a.svc, kinds, due), runDueJobs(b.svc, kinds, due)]);
  assert.equal(byA + byB, 8);
  assert.equal(new Set(runs).size, 8, 'no job ran twice');
});

test('two processes starting at once on an empty database create the first organization once', async () => {
  const db = await freshPostgresDatabase();
  const config = { ...server.config, databaseUrl: db.url, brokerPrefix: `${server.config.brokerPrefix}-boot` };
  const started = await Promise.allSettled([createServer(config, pino({ level: 'silent' })), createServer(config, pino({ level: 'silent' }))]);
  const both = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  try {
    assert.equal(both.length, 2, JSON.stringify(started.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))));
    const owners = await both[0].svc.db.selectFrom('users').select('id').where('delivery_email', '=', OWNER_EMAIL).execute();
    assert.equal(owners.length, 1);
  } finally {
    for (const s of both) await s.close();
    await db.drop();
  }
});

test('queues left in the broker when the last process stops: kept across a restart, dropped if an event came meanwhile', async () => {
  const db = await freshPostgresDatabase();
  const config = { ...server.config, databaseUrl: db.url, brokerPrefix: `${server.config.brokerPrefix}-orphans` };
  const start = () => createServer(config, pino({ level: 'silent' }));
  let p = await start();
  try {
    const row = await p.svc.db.selectFrom('users').select(['id', 'api_key']).where('delivery_email', '=', OWNER_EMAIL).executeTakeFirstOrThrow();
    const owner = () => new Client({ ...server, pick: async () => p.app } as TestServer, row.id, OWNER_EMAIL, row.api_key);
    const register = async () => (await owner().post('/register', { event_types: ['realm_user', 'restart'] })).body.queue_id as string;
    const poll = (queueId: string) => owner().get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });

    const kept = await register();
    await p.close();
    p = await start();
    const restarted = await poll(kept);
    assert.equal(restarted.status, 200, JSON.stringify(restarted.body));
    assert.deepEqual(
      restarted.body.events.map((e: any) => e.type),
      ['restart'],
      'nothing happened meanwhile: the queue is complete',
    );

    const stale = await register();
    await p.close();
    // While no server runs, an operator adds an account: the queue would miss its realm_user event.
    const saved = { ...process.env };
    Object.assign(process.env, { DATABASE_URL: db.url, BROKER_URL: config.brokerUrl, BROKER_PREFIX: config.brokerPrefix });
    try {
      assert.equal(
        await manage(['create-user', '--org', '', '--email', 'meanwhile@example.com', '--name', 'Meanwhile', '--password', 'meanwhile-pw-1'], () => {}),
        0,
      );
    } finally {
      process.env = saved;
    }
    p = await start();
    const gone = await poll(stale);
    assert.equal(gone.status, 400);
    assert.equal(gone.body.code, 'BAD_EVENT_QUEUE_ID', 'a queue that missed events is not handed back as if complete');
  } finally {
    await p.close();
    await db.drop();
  }
});

test('processes stopped together leave their queues in the broker for the next one, not to each other', async () => {
  const db = await freshPostgresDatabase();
  const config = { ...server.config, databaseUrl: db.url, brokerPrefix: `${server.config.brokerPrefix}-together` };
  const start = () => createServer(config, pino({ level: 'silent' }));
  const [p, q] = [await start(), await start()];
  let r: RunningServer | undefined;
  try {
    const row = await p.svc.db.selectFrom('users').select(['id', 'api_key']).where('delivery_email', '=', OWNER_EMAIL).executeTakeFirstOrThrow();
    const owner = (target: RunningServer) => new Client({ ...server, pick: async () => target.app } as TestServer, row.id, OWNER_EMAIL, row.api_key);
    const onP = (await owner(p).post('/register', { event_types: ['restart'] })).body.queue_id;
    const onQ = (await owner(q).post('/register', { event_types: ['restart'] })).body.queue_id;
    await Promise.all([p.close(), q.close()]);
    r = await start();
    for (const queueId of [onP, onQ]) {
      const res = await owner(r).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(
        res.body.events.map((e: any) => e.type),
        ['restart'],
      );
    }
  } finally {
    await r?.close();
    await db.drop();
  }
});

test('a graceful stop hands its queues to a live process: none lost, none repeated', async () => {
  const trio = await startTestCluster({}, 3);
  try {
    // processes[0] is the test server itself (its close drops the database): the second one stops.
    const [q, p, r] = trio.processes;
    const erin = await trio.createUser();
    const reg = await on(p, erin).post('/register', { event_types: ['message', 'restart'] });
    const queueId = reg.body.queue_id;
    const before = await dm(on(q, trio.owner), erin, 'before');
    // Messages keep arriving while p stops.
    const during = Promise.all([1, 2, 3].map((i) => dm(on(r, trio.owner), erin, `during ${i}`)));
    await p.close();
    const sent = [before, ...(await during), await dm(on(q, trio.owner), erin, 'after')];
    assert.ok(q.svc.queues.has(queueId) || r.svc.queues.has(queueId), 'a live process adopted the queue');
    const res = await on(r, erin).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const messages = res.body.events.filter((e: any) => e.type === 'message').map((e: any) => e.message.id);
    assert.deepEqual(
      [...messages].sort((x, y) => x - y),
      [...sent].sort((x, y) => x - y),
    );
    const ids: number[] = res.body.events.map((e: any) => e.id);
    assert.deepEqual(
      ids,
      [...new Set(ids)].sort((x, y) => x - y),
      'ids increase without repeats',
    );
    // The client learns that the server behind its queue changed, under both names of the version.
    const restarts = res.body.events.filter((e: any) => e.type === 'restart');
    assert.equal(restarts.length, 1);
    const { id: _id, ...restart } = restarts[0];
    assert.deepEqual(restart, { type: 'restart', ...versionFields(true), server_generation: SERVER_GENERATION });
  } finally {
    await trio.close();
  }
});
