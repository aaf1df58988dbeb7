// Presence: POST /users/me/presence, GET /realm/presence, GET /users/{user}/presence,
// the `presence` events and register section (digest section 2 "Presence", 3.3, section 4).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { REGISTER_ALWAYS, startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE, type Role } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { createUserAsOperator } from '../../src/users/actions.ts';
import { systemGroupIds } from '../../src/user_groups/group-setting.ts';

let server: TestServer;
let watcher: Client;
before(async () => {
  server = await startTestServer();
  watcher = await server.createUser({ role: ROLE.MEMBER, email: 'watcher@example.com', fullName: 'Wat Cher' });
});
after(() => server.close());

async function register(c: Client, params: Record<string, unknown> = {}) {
  const res = await c.post('/register', params);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

async function eventsOf(c: Client, queueId: string) {
  const res = await c.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body.events as Record<string, any>[]).filter((e) => e.type !== 'heartbeat').map(({ id: _id, ...e }) => e);
}

/** Moves a user's presence into the past, as if they had been away for `seconds`. */
async function age(userId: number, seconds: number) {
  await server.svc.db
    .updateTable('user_presence')
    .set({
      last_active_time: sql`last_active_time - make_interval(secs => ${seconds})`,
      last_connected_time: sql`last_connected_time - make_interval(secs => ${seconds})`,
    })
    .where('user_id', '=', userId)
    .execute();
}

async function setRealm(column: 'settings' | 'group_settings', patch: Record<string, unknown>) {
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  await server.svc.db
    .updateTable('realms')
    .set({ [column]: JSON.stringify({ ...realm[column], ...patch }) })
    .where('id', '=', 1)
    .execute();
  // As an administrator's change would: cached credentials hold the organization.
  server.svc.credentials.clear();
}

const report = (c: Client, params: Record<string, unknown> = {}) => c.post('/users/me/presence', { status: 'active', ...params });
const now = () => Date.now() / 1000;

test("POST /users/me/presence: every role reports and gets everyone's presence (legacy format)", async () => {
  const roles: Role[] = [ROLE.GUEST, ROLE.MEMBER, ROLE.MODERATOR, ROLE.ADMINISTRATOR, ROLE.OWNER];
  for (const role of roles) {
    const c = await server.createUser({ role });
    const before = now();
    const res = await report(c);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(typeof res.body.server_timestamp, 'number');
    assert.ok(Math.abs(res.body.server_timestamp - before) < 5);
    assert.equal(typeof res.body.presence_last_update_id, 'number');
    const mine = res.body.presences[c.email!];
    assert.deepEqual(Object.keys(mine).sort(), ['aggregated', 'website']);
    assert.equal(mine.website.client, 'website');
    assert.equal(mine.website.status, 'active');
    assert.equal(mine.website.pushable, false);
    assert.ok(Math.abs(mine.website.timestamp - before) <= 2);
    assert.deepEqual(mine.aggregated, { client: 'website', status: 'active', timestamp: mine.website.timestamp });
  }
});

test('parameters: status required and checked; ping_only; slim_presence; last_update_id; history_limit_days', async () => {
  const c = await server.createUser({ fullName: 'Pa Rams' });
  const missing = await c.post('/users/me/presence', {});
  assert.deepEqual(missing.body, { result: 'error', msg: "Missing 'status' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'status' });
  const invalid = await c.post('/users/me/presence', { status: 'away' });
  assert.equal(invalid.body.msg, 'Invalid status');

  const ping = await report(c, { ping_only: true });
  assert.deepEqual(ping.body, { result: 'success', msg: '' });

  const slim = await report(c, { slim_presence: true });
  const entry = slim.body.presences[String(c.id)];
  assert.deepEqual(Object.keys(entry).sort(), ['active_timestamp', 'idle_timestamp']);
  assert.equal('user' in slim.body, false);

  // Incremental fetches: the modern format, only what changed since the id given.
  const first = await report(c, { last_update_id: -1 });
  assert.ok(String(c.id) in first.body.presences);
  const cursor = first.body.presence_last_update_id;
  assert.ok(cursor > 0);
  const nothingNew = await report(c, { last_update_id: cursor });
  assert.deepEqual(nothingNew.body.presences, {});
  assert.equal(nothingNew.body.presence_last_update_id, cursor);
  const newcomer = await server.createUser();
  await report(newcomer);
  const changed = await report(c, { last_update_id: cursor });
  assert.deepEqual(Object.keys(changed.body.presences), [String(newcomer.id)]);
  assert.ok(changed.body.presence_last_update_id > cursor);

  // Old data is left out unless asked for.
  await age(newcomer.id, 20 * 24 * 3600);
  assert.equal(newcomer.email! in (await report(c)).body.presences, false);
  assert.equal(newcomer.email! in (await report(c, { history_limit_days: 30 })).body.presences, true);
  assert.deepEqual((await report(c, { history_limit_days: 0 })).body.presences, {});
  assert.equal((await report(c, { history_limit_days: -1 })).body.msg, 'history_limit_days is too small');
});

test('bots cannot report presence; spectators cannot call any presence endpoint', async () => {
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const bot = await createUserAsOperator(server.svc, realm, {
    email: 'presence-bot@example.com',
    fullName: 'Pres Bot',
    password: null,
    role: ROLE.MEMBER,
    isBot: true,
    botType: 1,
  });
  const botClient = await server.clientFor(bot.id);
  const res = await report(botClient);
  assert.deepEqual(res.body, { result: 'error', msg: 'This endpoint does not accept bot requests.', code: 'BAD_REQUEST' });
  assert.equal((await server.svc.db.selectFrom('user_presence').select('user_id').where('user_id', '=', bot.id).execute()).length, 0);
  // Bots may read presence, but have none.
  assert.equal((await botClient.get('/realm/presence')).status, 200);
  assert.equal((await watcher.get(`/users/${bot.id}/presence`)).body.msg, 'Presence is not supported for bot users.');
  for (const [method, path] of [
    ['POST', '/users/me/presence'],
    ['GET', '/realm/presence'],
    ['GET', `/users/${watcher.id}/presence`],
  ]) {
    assert.equal((await server.anonymous.request(method, path, { status: 'active' })).status, 401);
  }
});

test('an event goes out when a user comes online, not on every ping', async () => {
  const c = await server.createUser({ fullName: 'On Line' });
  const legacy = await register(watcher);
  const slim = await register(watcher, { slim_presence: true });
  const simplified = await register(watcher, { client_capabilities: { notification_settings_null: false, simplified_presence_events: true } });
  const self = await register(c);

  await report(c);
  const [event] = await eventsOf(watcher, legacy.queue_id);
  assert.equal(event.type, 'presence');
  assert.equal(event.user_id, c.id);
  assert.equal(event.email, c.email);
  assert.equal(typeof event.server_timestamp, 'number');
  assert.deepEqual(Object.keys(event.presence), ['website']);
  assert.equal(event.presence.website.status, 'active');
  assert.equal(event.presence.website.client, 'website');
  assert.equal(event.presence.website.pushable, false);
  const ts = event.presence.website.timestamp;

  const [slimEvent] = await eventsOf(watcher, slim.queue_id);
  assert.equal('email' in slimEvent, false);
  assert.equal(slimEvent.user_id, c.id);
  assert.deepEqual(await eventsOf(watcher, simplified.queue_id), [
    { type: 'presence', presences: { [String(c.id)]: { active_timestamp: ts, idle_timestamp: ts } } },
  ]);
  assert.equal((await eventsOf(c, self.queue_id)).length, 1);

  // Pings while online send nothing.
  await report(c);
  await report(c, { status: 'idle' });
  await age(c.id, 100);
  await report(c);
  const later = await register(watcher);
  assert.equal((await eventsOf(watcher, legacy.queue_id)).length, 1);

  // Away longer than the offline threshold allows for, then active again: an event.
  await age(c.id, 200);
  await report(c, { status: 'idle' });
  assert.deepEqual(await eventsOf(watcher, later.queue_id), []);
  await report(c);
  const [back] = await eventsOf(watcher, later.queue_id);
  assert.equal(back.user_id, c.id);
  assert.equal(back.presence.website.status, 'active');
});

test('GET /realm/presence and GET /users/{user}/presence', async () => {
  const c = await server.createUser({ email: 'single@example.com', fullName: 'Sin Gle' });
  const none = await watcher.get(`/users/${c.id}/presence`);
  assert.deepEqual(none.body, { result: 'error', msg: `No presence data for ${c.id}`, code: 'BAD_REQUEST' });
  await report(c);

  const realm = await watcher.get('/realm/presence');
  assert.equal(realm.status, 200);
  assert.deepEqual(Object.keys(realm.body).sort(), ['msg', 'presences', 'result', 'server_timestamp']);
  assert.equal(realm.body.presences['single@example.com'].website.status, 'active');

  const one = await watcher.get(`/users/${c.id}/presence`);
  const ts = one.body.presence.website.timestamp;
  assert.deepEqual(one.body.presence, { aggregated: { status: 'active', timestamp: ts }, website: { status: 'active', timestamp: ts } });
  assert.deepEqual((await watcher.get('/users/single@example.com/presence')).body.presence, one.body.presence);
  assert.deepEqual((await watcher.get(`/users/${c.id}/presence`, { slim_presence: true })).body.presence, { active_timestamp: ts, idle_timestamp: ts });

  // Past the offline threshold, the aggregated status says so.
  await age(c.id, 300);
  const old = (await watcher.get(`/users/${c.id}/presence`)).body.presence;
  assert.equal(old.aggregated.status, 'offline');
  assert.equal(old.website.status, 'active');

  assert.equal((await watcher.get('/users/999999/presence')).body.msg, 'No such user');
  assert.equal((await watcher.get('/users/nobody@example.com/presence')).body.msg, 'No such user');
  // Every role may read presence.
  for (const role of [ROLE.GUEST, ROLE.MEMBER, ROLE.MODERATOR, ROLE.ADMINISTRATOR, ROLE.OWNER] as Role[]) {
    const reader = await server.createUser({ role });
    assert.equal((await reader.get('/realm/presence')).status, 200);
    assert.equal((await reader.get(`/users/${c.id}/presence`)).status, 200);
  }
});

test('guests who may not see everyone see only the presence of users they can see', async () => {
  const groups = await systemGroupIds(server.svc.db, 1);
  const guest = await server.createUser({ role: ROLE.GUEST, fullName: 'Lim Ited' });
  const visible = await server.createUser({ fullName: 'Some One' });
  await report(visible);
  await report(guest);
  await setRealm('group_settings', { can_access_all_users_group: groups['role:members'] });
  try {
    const queue = await register(guest, { event_types: ['presence'] });
    const presences = (await guest.get('/realm/presence')).body.presences;
    assert.equal(visible.email! in presences, false);
    assert.equal(guest.email! in presences, true);
    assert.equal((await guest.get(`/users/${visible.id}/presence`)).body.msg, 'No such user');
    const state = await register(guest, { fetch_event_types: ['presence'] });
    assert.equal(visible.email! in state.presences, false);
    // Nor do they hear when that user comes online.
    await age(visible.id, 400);
    await report(visible);
    assert.deepEqual(await eventsOf(guest, queue.queue_id), []);
    // Members still see everyone.
    assert.equal(visible.email! in (await watcher.get('/realm/presence')).body.presences, true);
  } finally {
    await setRealm('group_settings', { can_access_all_users_group: groups['role:everyone'] });
  }
});

test('register: legacy by email, modern by id (slim_presence or simplified events), limited by history; none for spectators', async () => {
  const c = await server.createUser({ fullName: 'Reg Ister' });
  await report(c);
  const legacy = await register(watcher, { fetch_event_types: ['presence'] });
  assert.deepEqual(
    Object.keys(legacy)
      .filter((k) => !REGISTER_ALWAYS.includes(k))
      .sort(),
    ['presence_last_update_id', 'presences', 'server_timestamp'],
  );
  assert.equal(legacy.presences[c.email!].website.status, 'active');
  const slim = await register(watcher, { fetch_event_types: ['presence'], slim_presence: true });
  assert.deepEqual(Object.keys(slim.presences[String(c.id)]).sort(), ['active_timestamp', 'idle_timestamp']);
  const simplified = await register(watcher, {
    fetch_event_types: ['presence'],
    client_capabilities: { notification_settings_null: false, simplified_presence_events: true },
  });
  assert.ok(String(c.id) in simplified.presences);
  assert.equal(simplified.presence_last_update_id, legacy.presence_last_update_id);

  await age(c.id, 3 * 24 * 3600);
  assert.equal(c.email! in (await register(watcher, { fetch_event_types: ['presence'] })).presences, true);
  assert.equal(c.email! in (await register(watcher, { fetch_event_types: ['presence'], presence_history_limit_days: 2 })).presences, false);
  // Without the parameter, 14 days of history (spec "Limits").
  await age(c.id, 11 * 24 * 3600 + 3600);
  assert.equal(c.email! in (await register(watcher, { fetch_event_types: ['presence'] })).presences, false);
  assert.equal(c.email! in (await register(watcher, { fetch_event_types: ['presence'], presence_history_limit_days: 15 })).presences, true);

  await setRealm('settings', { enable_spectator_access: true });
  try {
    const spectator = await server.anonymous.post('/register', { fetch_event_types: ['presence'], client_svcavatar: false });
    assert.equal(spectator.status, 200, JSON.stringify(spectator.body));
    assert.deepEqual(spectator.body.presences, {});
    assert.equal(typeof spectator.body.server_timestamp, 'number');
  } finally {
    await setRealm('settings', { enable_spectator_access: false });
  }
});

test('state stays in sync: users coming online, leaving and coming back, changing their API email', async () => {
  const viewers = [
    await registerViewer(server, watcher),
    await registerViewer(server, watcher, { slim_presence: true }),
    await registerViewer(server, watcher, { client_capabilities: { notification_settings_null: false, simplified_presence_events: true } }),
  ];
  const c = await server.createUser({ fullName: 'Co Mer' });
  for (const v of viewers) await expectStateInSync(server, v, 'new user');
  await report(c);
  for (const v of viewers) await expectStateInSync(server, v, 'online');
  await age(c.id, 600);
  await report(c);
  for (const v of viewers) await expectStateInSync(server, v, 'back online');
  await server.owner.delete(`/users/${c.id}`);
  for (const v of viewers) await expectStateInSync(server, v, 'deactivated');
  await server.owner.post(`/users/${c.id}/reactivate`);
  for (const v of viewers) await expectStateInSync(server, v, 'reactivated');
  await c.patch('/settings', { email_address_visibility: 4 });
  for (const v of viewers) await expectStateInSync(server, v, 'hidden email');
  // An idle first report (legacy and simplified clients are exact).
  const idle = await server.createUser({ fullName: 'Id Le' });
  await report(idle, { status: 'idle' });
  for (const v of [viewers[0], viewers[2]]) await expectStateInSync(server, v, 'idle newcomer');
});

test('presence_enabled off: shown offline since then, pings not recorded; on again: online at once', async () => {
  const c = await server.createUser({ fullName: 'In Visible' });
  await report(c);
  const legacy = await registerViewer(server, watcher);
  const simplified = await registerViewer(server, watcher, { client_capabilities: { notification_settings_null: false, simplified_presence_events: true } });
  const queue = await register(watcher, { event_types: ['presence'] });

  const off = now();
  assert.equal((await c.patch('/settings', { presence_enabled: false })).status, 200);
  const [event] = await eventsOf(watcher, queue.queue_id);
  // Last seen well before the offline threshold.
  assert.ok(off - event.presence.website.timestamp >= 300);
  for (const v of [legacy, simplified]) await expectStateInSync(server, v, 'presence off');

  await report(c);
  await report(c, { status: 'idle' });
  const seen = (await watcher.get(`/users/${c.id}/presence`)).body.presence;
  assert.equal(seen.aggregated.status, 'offline');
  assert.equal(seen.website.timestamp, event.presence.website.timestamp);

  assert.equal((await c.patch('/settings', { presence_enabled: true })).status, 200);
  const [on] = (await eventsOf(watcher, queue.queue_id)).slice(1);
  assert.equal(on.presence.website.status, 'active');
  assert.ok(Math.abs(on.presence.website.timestamp - now()) <= 2);
  for (const v of [legacy, simplified]) await expectStateInSync(server, v, 'presence on');
});

test('an organization with presence disabled shows and announces no presence', async () => {
  const c = await server.createUser({ fullName: 'Dis Abled' });
  await setRealm('settings', { presence_disabled: true });
  try {
    const queue = await register(watcher, { event_types: ['presence'] });
    const res = await report(c);
    assert.deepEqual(res.body.presences, {});
    assert.equal(res.body.presence_last_update_id, -1);
    assert.deepEqual((await watcher.get('/realm/presence')).body.presences, {});
    assert.equal((await watcher.get(`/users/${c.id}/presence`)).body.msg, `No presence data for ${c.id}`);
    assert.deepEqual((await register(watcher, { fetch_event_types: ['presence'] })).presences, {});
    assert.deepEqual(await eventsOf(watcher, queue.queue_id), []);
  } finally {
    await setRealm('settings', { presence_disabled: false });
  }
});

test('active reports record recent activity (users.last_active_at)', async () => {
  const c = await server.createUser();
  const lastActive = async () =>
    (await server.svc.db.selectFrom('users').select('last_active_at').where('id', '=', c.id).executeTakeFirstOrThrow()).last_active_at;
  assert.equal(await lastActive(), null);
  await report(c, { status: 'idle' });
  assert.equal(await lastActive(), null);
  await report(c, { status: 'idle', new_user_input: true });
  assert.ok((await lastActive()) instanceof Date);
});
