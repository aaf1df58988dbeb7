// GET /health, GET /ready and GET /metrics: outside the API's authentication,
// ready only while serving with a database that answers, metrics only for the
// holder of METRICS_TOKEN and labelled by route pattern, never by user data.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.ts';

const TOKEN = 'metrics-secret-token-1';
let server: TestServer;
let channelId: number;
before(async () => {
  // A low per-address limit: health checks must never meet it.
  // The scheduler and the job worker stay idle: the backlog tests set their tables by hand.
  server = await startTestServer({
    metricsToken: TOKEN,
    schedulerIntervalMs: 3_600_000,
    jobIntervalMs: 3_600_000,
    rateLimit: { perUser: 100_000, perIp: 5, windowSeconds: 60, loginFailures: 5, loginWindowSeconds: 1800 },
  });
  channelId = (await server.owner.post('/channels/create', { name: 'ops', subscribers: [server.owner.id] })).body.id;
});
after(() => server.close());

async function raw(s: TestServer, url: string, headers: Record<string, string> = {}) {
  const res = await s.app.inject({ method: 'GET', url, headers });
  let body: any = res.body;
  try {
    body = JSON.parse(res.body);
  } catch {
    // Prometheus text
  }
  return { status: res.statusCode, body, headers: res.headers };
}

const scrape = () => raw(server, '/metrics', { authorization: `Bearer ${TOKEN}` });

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `) || (labels === '' && l.startsWith(`${name}{`) === false && l.startsWith(`${name} `)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('GET /health answers without credentials, as often as asked', async () => {
  for (let i = 0; i < 20; i++) {
    const res = await raw(server, '/health');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { result: 'success', msg: '', status: 'alive' });
  }
});

test('GET /ready: ready while serving, never rate limited', async () => {
  for (let i = 0; i < 20; i++) {
    const res = await raw(server, '/ready');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { result: 'success', msg: '', status: 'ready' });
  }
  // The same address is limited on the API, so the limit above was real.
  let limited = false;
  for (let i = 0; i < 10 && !limited; i++) limited = (await server.anonymous.get('/server_settings')).status === 429;
  assert.ok(limited);
});

test('GET /ready is 503 while starting or stopping', async () => {
  server.svc.lifecycle.phase = 'starting';
  try {
    const res = await raw(server, '/ready');
    assert.equal(res.status, 503);
    assert.equal(res.body.result, 'error');
    assert.equal(res.body.code, 'SERVER_NOT_READY');
    assert.deepEqual(res.body.failing, ['starting']);
  } finally {
    server.svc.lifecycle.phase = 'serving';
  }
  const other = await startTestServer();
  const closing = other.close();
  // Graceful stop says "not ready" before anything else happens.
  assert.equal(other.svc.lifecycle.phase, 'stopping');
  await closing;
});

test('GET /ready is 503 when the database does not answer', async () => {
  const other = await startTestServer();
  const res0 = await raw(other, '/ready');
  assert.equal(res0.status, 200);
  await other.svc.db.destroy();
  const res = await raw(other, '/ready');
  assert.equal(res.status, 503);
  assert.equal(res.body.code, 'SERVER_NOT_READY');
  assert.deepEqual(res.body.failing, ['database']);
  assert.equal((await raw(other, '/health')).status, 200);
  await other.close().catch(() => {});
});

test('GET /metrics needs the bearer token', async () => {
  const none = await raw(server, '/metrics');
  assert.equal(none.status, 401);
  assert.equal(none.body.code, 'UNAUTHORIZED');
  const wrong = await raw(server, '/metrics', { authorization: 'Bearer not-the-token' });
  assert.equal(wrong.status, 401);
  const basic = await raw(server, '/metrics', { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` });
  assert.equal(basic.status, 401);
  const right = await scrape();
  assert.equal(right.status, 200);
  assert.match(String(right.headers['content-type']), /^text\/plain/);
});

test('GET /metrics does not exist without METRICS_TOKEN', async () => {
  const other = await startTestServer();
  try {
    const res = await raw(other, '/metrics', { authorization: 'Bearer anything' });
    assert.equal(res.status, 404);
    assert.equal(res.body.result, 'error');
  } finally {
    await other.close();
  }
});

test('requests are counted by route pattern and status, never by raw URL', async () => {
  const { owner } = server;
  const sent = await owner.post('/messages', { type: 'stream', to: 'ops', topic: 'metrics topic', content: 'secret words **here**' });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const id = sent.body.id;
  assert.equal((await owner.get(`/messages/${id}`)).status, 200);
  assert.equal((await owner.get(`/messages/${id + 1000}`)).status, 400);
  assert.equal((await owner.get('/no_such_endpoint/42')).status, 404);
  const text = (await scrape()).body as string;
  // Counted once, under no pattern.
  assert.equal(sample(text, 'confab_http_requests_total', 'method="GET",route="unmatched",status="404"'), 1);
  const route = '/api/v1/messages/:message_id';
  assert.equal(sample(text, 'confab_http_requests_total', `method="GET",route="${route}",status="200"`), 1);
  assert.equal(sample(text, 'confab_http_requests_total', `method="GET",route="${route}",status="400"`), 1);
  assert.ok(sample(text, 'confab_http_request_duration_seconds_count', `method="POST",route="/api/v1/messages",status="200"`)! >= 1);
  const routes = [...text.matchAll(/route="([^"]*)"/g)].map((m) => m[1]);
  assert.ok(routes.length > 0 && routes.every((r) => !/\/\d/.test(r)), `no ids in routes: ${routes.join(' ')}`);
  assert.ok(!text.includes('secret words') && !text.includes('metrics topic') && !text.includes(owner.email!));
  // A transaction and a render were timed, and the event went out.
  assert.ok(sample(text, 'confab_db_transaction_duration_seconds_count', 'outcome="commit"')! >= 1);
  assert.ok(sample(text, 'confab_render_duration_seconds_count', 'outcome="ok"')! >= 1);
  assert.ok(sample(text, 'confab_event_delivery_seconds_count')! >= 1);
  assert.equal(sample(text, 'confab_render_queue'), 0);
});

test('queues and parked polls are gauges of the queue registry', async () => {
  const user = await server.createUser();
  const reg = await user.post('/register', { event_types: ['message'] });
  assert.equal(reg.status, 200);
  const before = (await scrape()).body as string;
  const queues = sample(before, 'confab_event_queues')!;
  assert.ok(queues >= 1);
  assert.equal(sample(before, 'confab_event_parked_polls'), 0);
  const poll = user.get('/events', { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id });
  // However slow the machine, the poll parks eventually (the wait is generous, not a timing assertion).
  let parked = 0;
  for (let i = 0; i < 6000 && parked === 0; i++) {
    parked = sample((await scrape()).body, 'confab_event_parked_polls')!;
    if (parked === 0) await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(parked, 1);
  await server.owner.post('/messages', { type: 'direct', to: JSON.stringify([user.id]), content: 'wake up' });
  assert.equal((await poll).status, 200);
  assert.equal(sample((await scrape()).body, 'confab_event_parked_polls'), 0);
});

test('the scheduler backlog counts due, undelivered scheduled messages', async () => {
  assert.equal(sample((await scrape()).body, 'confab_scheduler_backlog'), 0);
  const later = Math.floor(Date.now() / 1000) + 3600;
  const res = await server.owner.post('/scheduled_messages', {
    type: 'stream',
    to: channelId,
    topic: 't',
    content: 'later',
    scheduled_delivery_timestamp: later,
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(sample((await scrape()).body, 'confab_scheduler_backlog'), 0);
  await server.svc.db
    .updateTable('scheduled_messages')
    .set({ scheduled_at: new Date(Date.now() - 1000) })
    .where('id', '=', res.body.scheduled_message_id)
    .execute();
  assert.equal(sample((await scrape()).body, 'confab_scheduler_backlog'), 1);
});

test('the job backlog counts the job table by kind and state, unknown kinds as "other"', async () => {
  const job = (kind: string, extra: Record<string, unknown>) => ({ realm_id: null, kind, payload: JSON.stringify({ private: 'payload words' }), ...extra });
  const past = new Date(Date.now() - 60_000);
  const future = new Date(Date.now() + 3_600_000);
  await server.svc.db
    .insertInto('jobs')
    .values([
      job('outgoing_webhook', { run_after: past }),
      job('outgoing_webhook', { run_after: past }),
      job('outgoing_webhook', { run_after: future }),
      job('embed_links', { run_after: past, locked_until: future }),
      job('embed_links', { run_after: past, failed_at: past }),
      job('someone@example.com', { run_after: past }),
    ] as any)
    .execute();
  try {
    const text = (await scrape()).body as string;
    const backlog = (kind: string, state: string) => sample(text, 'confab_job_backlog', `kind="${kind}",state="${state}"`);
    assert.equal(backlog('outgoing_webhook', 'due'), 2);
    assert.equal(backlog('outgoing_webhook', 'waiting'), 1);
    assert.equal(backlog('outgoing_webhook', 'failed'), 0);
    assert.equal(backlog('embed_links', 'running'), 1);
    assert.equal(backlog('embed_links', 'failed'), 1);
    assert.equal(backlog('other', 'due'), 1);
    assert.ok(!text.includes('someone@example.com') && !text.includes('payload words'));
  } finally {
    await server.svc.db.deleteFrom('jobs').execute();
  }
  assert.equal(sample((await scrape()).body, 'confab_job_backlog', 'kind="outgoing_webhook",state="due"'), 0);
});

test('the render queue gauge counts renders waiting for a worker', async () => {
  const marker = 'held-render-for-the-queue-gauge';
  const hold = server.svc.markdown.hold((content) => content.includes(marker));
  // One author's renders never take every worker, so five of them always leave some waiting.
  const renders = [1, 2, 3, 4, 5].map((i) => server.svc.markdown.render(`${marker} ${i}`, {}, 'one-author'));
  try {
    await hold.reached;
    assert.ok(sample((await scrape()).body, 'confab_render_queue')! >= 1);
  } finally {
    hold.release();
    await Promise.all(renders);
  }
  assert.equal(sample((await scrape()).body, 'confab_render_queue'), 0);
});

test('every metric the operators were promised is exported', async () => {
  const text = (await scrape()).body as string;
  const names = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
  for (const name of [
    'confab_http_requests_total',
    'confab_http_request_duration_seconds',
    'confab_event_queues',
    'confab_event_parked_polls',
    'confab_event_delivery_seconds',
    'confab_render_duration_seconds',
    'confab_render_queue',
    'confab_db_pool_connections',
    'confab_db_transaction_duration_seconds',
    'confab_scheduler_backlog',
    'confab_job_backlog',
    'confab_retention_messages_archived_total',
  ]) {
    assert.ok(names.has(name), name);
  }
  // Names are fixed words (process metrics carry percentiles like p50), never ids or addresses.
  for (const name of names) assert.match(name, /^confab_[a-z][a-z0-9_]*$/);
  const labelValues = [...text.matchAll(/="([^"]*)"/g)].map((m) => m[1]);
  assert.ok(
    labelValues.every((v) => !v.includes('@')),
    'no addresses in label values',
  );
});

test('database pool gauges on PostgreSQL', { skip: process.env.CONFAB_TEST_DB !== 'postgres' }, async () => {
  const text = (await scrape()).body as string;
  assert.ok(sample(text, 'confab_db_pool_connections', 'state="total"')! >= 1);
  // Idle and waiting move with whatever else runs; they are there, and within the pool.
  for (const state of ['idle', 'waiting']) assert.ok(sample(text, 'confab_db_pool_connections', `state="${state}"`)! >= 0);
  assert.ok(sample(text, 'confab_db_pool_connections', 'state="idle"')! <= sample(text, 'confab_db_pool_connections', 'state="total"')!);
});
