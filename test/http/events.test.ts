// Event queues through HTTP: register, long-polling, heartbeats, collection,
// restarts (spec "Events", endpoint 21; digest 1.21, 1.23, 3, 4).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { SVC_FEATURE_LEVEL, SVC_VERSION } from '../../src/version.ts';
import { systemGroupIds } from '../../src/user_groups/group-setting.ts';
import { notificationBot, systemBot, WELCOME_BOT } from '../../src/users/system-bots.ts';
import { isoDate } from '../../src/users/format.ts';
import { loadConfig } from '../../src/config.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';

// No heartbeat within a test (a loaded machine must not turn an expected answer into a heartbeat);
// the heartbeat test has a server of its own.
const quietTimers = { heartbeatMs: 600_000, heartbeatJitterMs: 0, queueTimeoutMs: 600_000, gcIntervalMs: 60_000 };
const fastTimers = { ...quietTimers, heartbeatMs: 300 };
let server: TestServer;
let member: Client;
before(async () => {
  server = await startTestServer({ events: quietTimers });
  member = await server.createUser({ role: ROLE.MEMBER, fullName: 'Mem Ber' });
});
after(() => server.close());

/** Sets the organization's can_access_all_users_group through the API (its events go out). */
async function setAccess(group: number) {
  const res = await server.owner.patch('/realm', { can_access_all_users_group: JSON.stringify({ new: group }) });
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

/** The registry that holds a queue: in a cluster (CONFAB_TEST_CLUSTER), the process that created it. */
function queuesOf(s: TestServer, queueId: string) {
  return (s.processes.find((p) => p.svc.queues.has(queueId)) ?? s).svc.queues;
}

/** Resolves once the client's poll on the queue is parked on the server (no fixed sleep). */
async function parkedOn(c: Client, queueId: string): Promise<void> {
  while (!queuesOf(server, queueId).get(queueId, c.id).waiting) await new Promise((r) => setTimeout(r, 5));
}

async function register(c: Client, params: Record<string, unknown> = {}) {
  const res = await c.post('/register', params);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

test('register answers with a queue, -1, the version and the state', async () => {
  const state = await register(member);
  assert.equal(typeof state.queue_id, 'string');
  assert.equal(state.last_event_id, -1);
  assert.equal(state.svc_feature_level, SVC_FEATURE_LEVEL);
  assert.equal(state.svc_version, SVC_VERSION);
  assert.equal(state.max_message_length, 10000);
  assert.equal(state.max_topic_length, 60);
  assert.equal(state.max_stream_name_length, 60);
  assert.equal(state.max_stream_description_length, 1024);
  assert.equal(state.max_channel_folder_name_length, 60);
  assert.equal(state.max_channel_folder_description_length, 1024);
  assert.equal(state.realm_empty_topic_display_name, 'general chat');
  assert.equal(state.realm_name, 'Test Organization');
  assert.equal(state.user_id, member.id);
  assert.equal(state.full_name, 'Mem Ber');
  assert.equal(state.is_admin, false);
  assert.equal(state.is_guest, false);
  assert.equal(state.can_create_public_streams, true);
  assert.equal(state.can_create_web_public_streams, false);
  const groups = await systemGroupIds(server.svc.db, 1);
  assert.equal(state.realm_can_create_public_channel_group, groups['role:members']);
  assert.equal(state.realm_can_delete_any_message_group, groups['role:administrators']);
  assert.equal(state.server_supported_permission_settings.realm.can_create_web_public_channel_group.require_system_group, true);
  // The reference's names beside the spec's (COMPAT_NAMES, on by default; docs/DECISIONS.md).
  assert.equal(state.zulip_feature_level, state.svc_feature_level);
});

test('fetch_event_types chooses the sections; event_types is the fallback', async () => {
  const realmOnly = await register(member, { fetch_event_types: ['realm'] });
  assert.equal(realmOnly.realm_name, 'Test Organization');
  assert.equal('realm_users' in realmOnly, false);
  assert.equal('user_id' in realmOnly, false);
  const usersOnly = await register(member, { event_types: ['realm_user'] });
  assert.ok(Array.isArray(usersOnly.realm_users));
  assert.equal('realm_name' in usersOnly, false);
  const none = await register(member, { fetch_event_types: ['no_such_type'] });
  assert.deepEqual(Object.keys(none).sort(), [
    'last_event_id',
    'msg',
    'queue_id',
    'result',
    'svc_feature_level',
    'svc_merge_base',
    'svc_version',
    'zulip_feature_level',
    'zulip_merge_base',
    'zulip_version',
  ]);
});

test('realm_users kept between registers: each viewer sees its own address, others as their role allows, and changes at once', async () => {
  const a = await server.createUser({ role: ROLE.MEMBER, fullName: 'Kept A' });
  const b = await server.createUser({ role: ROLE.MEMBER, fullName: 'Kept B' });
  // Addresses visible to administrators only.
  for (const c of [a, b]) assert.equal((await c.patch('/settings', { email_address_visibility: 3 })).status, 200);
  const address = async (c: Client) => (await c.get('/users/me')).body.delivery_email as string;
  const entryOf = (state: any, id: number) => state.realm_users.find((u: any) => u.user_id === id);
  const params = { fetch_event_types: ['realm_user'], client_svcavatar: false };
  // Two members one after the other: the second is served the list the first one's register kept.
  const seenByA = await register(a, params);
  const seenByB = await register(b, params);
  assert.equal(entryOf(seenByA, a.id).delivery_email, await address(a));
  assert.equal(entryOf(seenByA, b.id).delivery_email, null);
  assert.equal(entryOf(seenByB, b.id).delivery_email, await address(b));
  assert.equal(entryOf(seenByB, a.id).delivery_email, null);
  const seenByOwner = await register(server.owner, params);
  assert.equal(entryOf(seenByOwner, a.id).delivery_email, await address(a));
  // A change is in the next register's list.
  assert.equal((await server.owner.patch(`/users/${a.id}`, { full_name: 'Kept A renamed' })).status, 200);
  assert.equal(entryOf(await register(b, params), a.id).full_name, 'Kept A renamed');
  assert.equal((await server.owner.delete(`/users/${b.id}`)).status, 200);
  const after = await register(a, params);
  assert.equal(entryOf(after, b.id), undefined);
  assert.ok(after.realm_non_active_users.some((u: any) => u.user_id === b.id));
  // The tests below expect every active address visible.
  assert.equal((await a.patch('/settings', { email_address_visibility: 1 })).status, 200);
});

test('realm_users: active users without is_active, others in realm_non_active_users, avatars by client_svcavatar', async () => {
  const gone = await server.createUser({ fullName: 'Gone Away' });
  await server.owner.delete(`/users/${gone.id}`);
  const state = await register(member, { fetch_event_types: ['realm_user'] });
  const ids = state.realm_users.map((u: any) => u.user_id);
  assert.deepEqual(
    ids,
    [...ids].sort((a: number, b: number) => a - b),
  );
  assert.ok(ids.includes(server.owner.id) && ids.includes(member.id) && !ids.includes(gone.id));
  assert.ok(state.realm_non_active_users.some((u: any) => u.user_id === gone.id));
  for (const u of state.realm_users) {
    assert.equal('is_active' in u, false);
    assert.equal(u.avatar_url, null, 'client_svcavatar defaults to true');
    assert.deepEqual(u.profile_data, {});
  }
  // The system bots, as the reference lists them: not realm users, avatars as URLs whatever client_svcavatar says.
  const bots = [await notificationBot(server.svc.db, 1), await systemBot(server.svc.db, 1, WELCOME_BOT)];
  for (const bot of bots) assert.ok(!ids.includes(bot.id));
  assert.deepEqual(
    state.cross_realm_bots,
    bots.map((bot) => ({
      user_id: bot.id,
      delivery_email: bot.email,
      email: bot.email,
      full_name: bot.full_name,
      date_joined: isoDate(bot.date_joined),
      is_active: true,
      is_owner: false,
      is_admin: false,
      is_guest: false,
      is_bot: true,
      bot_type: 1,
      bot_owner_id: null,
      role: ROLE.MEMBER,
      timezone: '',
      avatar_url: `https://secure.gravatar.com/avatar/${createHash('md5').update(bot.email).digest('hex')}?d=identicon&version=1`,
      avatar_version: 1,
      is_system_bot: true,
    })),
  );
  assert.deepEqual(
    bots.map((b) => [b.full_name, b.email]),
    [
      ['Notification Bot', 'notification-bot@confab.internal'],
      ['Welcome Bot', 'welcome-bot@confab.internal'],
    ],
  );
  const withUrls = await register(member, { fetch_event_types: ['realm_user'], client_svcavatar: false });
  for (const u of withUrls.realm_users) assert.match(u.avatar_url, /^https:\/\//);
  // Byte for byte (keys in order): each entry is the User object of GET /users/{id}, without is_active.
  for (const c of [server.owner, member]) {
    const res = await member.get(`/users/${c.id}`, { client_svcavatar: 'false', include_custom_profile_fields: 'true' });
    const { is_active, ...entry } = res.body.user;
    assert.equal(is_active, true);
    assert.equal(JSON.stringify(withUrls.realm_users.find((u: any) => u.user_id === c.id)), JSON.stringify(entry));
  }
  const goneEntry = withUrls.realm_non_active_users.find((u: any) => u.user_id === gone.id);
  const { is_active: _inactive, ...goneUser } = (await member.get(`/users/${gone.id}`, { client_svcavatar: 'false', include_custom_profile_fields: 'true' }))
    .body.user;
  assert.equal(JSON.stringify(goneEntry), JSON.stringify(goneUser));
});

test('a client registers, another user acts, the event arrives, is acknowledged and never seen again', async () => {
  const state = await register(member, { event_types: ['realm_user'] });
  const created = await server.owner.post('/users', { email: 'arrival@example.com', password: 'secret123', full_name: 'New Arrival' });
  const res = await member.get('/events', { queue_id: state.queue_id, last_event_id: state.last_event_id });
  assert.equal(res.status, 200);
  assert.equal(res.body.events.length, 1);
  const [event] = res.body.events;
  assert.equal(event.type, 'realm_user');
  assert.equal(event.op, 'add');
  assert.equal(event.person.user_id, created.body.user_id);
  assert.equal(event.person.full_name, 'New Arrival');
  assert.equal(event.person.avatar_url, null, "shaped by the queue's client_svcavatar");
  assert.equal(typeof event.id, 'number');
  const again = await member.get('/events', { queue_id: state.queue_id, last_event_id: event.id, dont_block: true });
  assert.deepEqual(again.body.events, []);
});

test('a failed action publishes nothing: the events of its rolled-back transaction never leave', async () => {
  const state = await register(member, { event_types: ['realm_user'] });
  const res = await server.owner.patch(`/users/${member.id}`, { full_name: 'Never Applied', new_email: 'not an address' });
  assert.equal(res.status, 400);
  assert.equal(res.body.msg, 'Invalid new email address.');
  const events = await member.get('/events', { queue_id: state.queue_id, last_event_id: -1, dont_block: true });
  assert.deepEqual(events.body.events, []);
  assert.notEqual((await member.get(`/users/${member.id}`)).body.user.full_name, 'Never Applied');
});

test('the long-poll is held until an event arrives', async () => {
  const state = await register(member, { event_types: ['realm_user'] });
  const poll = member.get('/events', { queue_id: state.queue_id, last_event_id: -1 });
  let done = false;
  void poll.then(() => (done = true));
  await parkedOn(member, state.queue_id);
  assert.equal(done, false, 'still parked');
  await server.owner.patch(`/users/${member.id}`, { full_name: 'Renamed Member' });
  const res = await poll;
  assert.deepEqual(
    res.body.events.map((e: any) => [e.type, e.op, e.person.full_name]),
    [['realm_user', 'update', 'Renamed Member']],
  );
});

test('an idle poll ends with a heartbeat, a real event with an id', async () => {
  const fast = await startTestServer({ events: fastTimers });
  try {
    const state = (await fast.owner.post('/register', { event_types: ['realm_user'] })).body;
    const started = Date.now();
    const res = await fast.owner.get('/events', { queue_id: state.queue_id, last_event_id: -1 });
    // A lower bound only: a loaded machine answers later, never sooner.
    assert.ok(Date.now() - started >= fastTimers.heartbeatMs);
    assert.deepEqual(res.body.events, [{ type: 'heartbeat', id: 0 }]);
    const next = await fast.owner.get('/events', { queue_id: state.queue_id, last_event_id: 0, dont_block: true });
    assert.deepEqual(next.body.events, []);
  } finally {
    await fast.close();
  }
});

test('a new poll on a queue completes the one already parked', async () => {
  const state = await register(member, { event_types: ['realm_user'] });
  const first = member.get('/events', { queue_id: state.queue_id, last_event_id: -1 });
  await parkedOn(member, state.queue_id);
  const second = member.get('/events', { queue_id: state.queue_id, last_event_id: -1 });
  const firstRes = await first;
  assert.equal(firstRes.status, 200);
  assert.deepEqual(firstRes.body.events, []);
  await server.owner.patch(`/users/${member.id}`, { full_name: 'Second Poll' });
  assert.equal((await second).body.events[0].person.full_name, 'Second Poll');
});

test('the timers: a heartbeat after 45 to 55 idle seconds, collection after 10 minutes, both configurable', () => {
  const { events } = loadConfig({}, {});
  assert.deepEqual([events.heartbeatMs, events.heartbeatJitterMs, events.queueTimeoutMs], [45_000, 10_000, 600_000]);
  const env = { EVENT_HEARTBEAT_MS: '100', EVENT_HEARTBEAT_JITTER_MS: '0', EVENT_QUEUE_TIMEOUT_MS: '200', EVENT_QUEUE_GC_INTERVAL_MS: '50' };
  assert.deepEqual(loadConfig({}, env).events, { heartbeatMs: 100, heartbeatJitterMs: 0, queueTimeoutMs: 200, gcIntervalMs: 50 });
});

test('deleting a queue answers the poll parked on it; the next poll is BAD_EVENT_QUEUE_ID', async () => {
  const state = await register(member, { event_types: ['realm_user'] });
  const poll = member.get('/events', { queue_id: state.queue_id, last_event_id: -1 });
  await parkedOn(member, state.queue_id);
  assert.deepEqual((await member.delete('/events', { queue_id: state.queue_id })).body, { result: 'success', msg: '' });
  // No events (not a heartbeat, which would come only after ten minutes): the deletion answered it.
  const ended = await poll;
  assert.deepEqual(ended.body, { result: 'success', msg: '', events: [] });
  const after = await member.get('/events', { queue_id: state.queue_id, last_event_id: -1, dont_block: true });
  assert.equal(after.body.code, 'BAD_EVENT_QUEUE_ID');
});

test("bad queue ids: unknown, another user's, deleted", async () => {
  const unknown = await member.get('/events', { queue_id: 'nope', last_event_id: -1 });
  assert.equal(unknown.status, 400);
  assert.deepEqual(unknown.body, { result: 'error', msg: 'Bad event queue ID: nope', code: 'BAD_EVENT_QUEUE_ID', queue_id: 'nope' });
  const theirs = await register(server.owner, { event_types: ['realm_user'] });
  const stolen = await member.get('/events', { queue_id: theirs.queue_id, last_event_id: -1, dont_block: true });
  assert.equal(stolen.body.code, 'BAD_EVENT_QUEUE_ID');
  assert.equal((await member.delete('/events', { queue_id: theirs.queue_id })).body.code, 'BAD_EVENT_QUEUE_ID');

  const mine = await register(member, { event_types: ['realm_user'] });
  assert.deepEqual((await member.delete('/events', { queue_id: mine.queue_id })).body, { result: 'success', msg: '' });
  const deleted = await member.get('/events', { queue_id: mine.queue_id, last_event_id: -1, dont_block: true });
  assert.equal(deleted.body.code, 'BAD_EVENT_QUEUE_ID');
  assert.equal(deleted.body.queue_id, mine.queue_id);
});

test('deactivating a user ends their parked poll and drops their queues; back, they register afresh', async () => {
  const leaving = await server.createUser({ role: ROLE.MEMBER });
  const parked = await register(leaving, { event_types: ['realm_user'] });
  const idle = await register(leaving, { event_types: ['message'] });
  const poll = leaving.get('/events', { queue_id: parked.queue_id, last_event_id: -1 });
  await parkedOn(leaving, parked.queue_id);
  assert.equal((await server.owner.delete(`/users/${leaving.id}`)).status, 200);
  const ended = await poll;
  assert.equal(ended.status, 200, 'the parked poll answers instead of hanging');
  assert.equal((await server.owner.post(`/users/${leaving.id}/reactivate`)).status, 200);
  for (const queueId of [parked.queue_id, idle.queue_id]) {
    const res = await leaving.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
    assert.equal(res.body.code, 'BAD_EVENT_QUEUE_ID', queueId);
  }
  // Others' queues are untouched.
  const watcher = await register(member, { event_types: ['realm_user'] });
  assert.equal((await server.owner.delete(`/users/${leaving.id}`)).status, 200);
  const seen = await member.get('/events', { queue_id: watcher.queue_id, last_event_id: -1, dont_block: true });
  assert.deepEqual(
    seen.body.events.map((e: any) => [e.type, e.op, e.person.user_id, e.person.is_active]),
    [['realm_user', 'update', leaving.id, false]],
  );
});

test('GET /events parameter errors', async () => {
  const state = await register(member, { event_types: ['realm_user'] });
  assert.equal((await member.get('/events', { last_event_id: -1 })).body.var_name, 'queue_id');
  assert.equal((await member.get('/events', { queue_id: state.queue_id })).body.var_name, 'last_event_id');
  await server.owner.patch(`/users/${member.id}`, { full_name: 'Event Zero' });
  await server.owner.patch(`/users/${member.id}`, { full_name: 'Event One' });
  await member.get('/events', { queue_id: state.queue_id, last_event_id: 0, dont_block: true });
  const pruned = await member.get('/events', { queue_id: state.queue_id, last_event_id: -1, dont_block: true });
  assert.equal(pruned.body.msg, 'An event newer than -1 has already been pruned!');
  const future = await member.get('/events', { queue_id: state.queue_id, last_event_id: 5, dont_block: true });
  assert.equal(future.body.msg, 'Event 5 was not in this queue');
  const kept = await member.get('/events', { queue_id: state.queue_id, last_event_id: 0, dont_block: true });
  assert.deepEqual(
    kept.body.events.map((e: any) => e.person.full_name),
    ['Event One'],
    'the refused poll pruned nothing',
  );
});

test('register parameter rules', async () => {
  const guest = await server.createUser({ role: ROLE.GUEST });
  const all = await guest.post('/register', { all_public_streams: true });
  assert.equal(all.status, 400);
  assert.equal(all.body.msg, 'User not authorized for this query');
  assert.equal((await member.post('/register', { narrow: [['search', 'x']] })).body.msg, 'Operator search not supported.');
  assert.equal((await member.post('/register', { narrow: [['is', 'followed']] })).body.msg, 'Operand followed not supported.');
  assert.equal((await member.post('/register', { narrow: [['stream']] })).status, 400);
  const caps = await member.post('/register', { client_capabilities: { bulk_message_deletion: true } });
  assert.equal(caps.status, 400);
  assert.equal(caps.body.msg, 'client_capabilities["notification_settings_null"] field is missing');
  const badCap = await member.post('/register', { client_capabilities: { notification_settings_null: 'yes' } });
  assert.equal(badCap.body.msg, 'client_capabilities["notification_settings_null"] is not a boolean');
  const unknownCap = await member.post('/register', { client_capabilities: { notification_settings_null: false, future_thing: true } });
  assert.equal(unknownCap.status, 200);
  assert.equal((await member.post('/register', { include_subscribers: 'maybe' })).body.msg, 'Invalid include_subscribers');
  assert.equal((await member.post('/register', { include_subscribers: 'partial' })).status, 200);
  assert.equal((await member.post('/register', { event_types: 'realm_user' })).body.msg, 'event_types is not valid JSON');
});

test('unauthenticated register: only where spectators are allowed, without a queue', async () => {
  assert.equal((await server.anonymous.post('/register')).status, 401);
  await server.svc.db
    .updateTable('realms')
    .set({ settings: JSON.stringify({ enable_spectator_access: true }) })
    .where('id', '=', 1)
    .execute();
  try {
    const res = await server.anonymous.post('/register');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.queue_id, null);
    assert.equal(res.body.last_event_id, -1);
    assert.equal(res.body.realm_name, 'Test Organization');
    assert.deepEqual(res.body.realm_users, []);
    const svcavatar = await server.anonymous.post('/register', { client_svcavatar: true });
    assert.equal(svcavatar.status, 400);
    assert.equal(svcavatar.body.msg, "Invalid 'client_svcavatar' parameter for anonymous request");
    const subscribers = await server.anonymous.post('/register', { include_subscribers: true });
    assert.equal(subscribers.body.msg, "Invalid 'include_subscribers' parameter for anonymous request");
  } finally {
    await server.svc.db.updateTable('realms').set({ settings: '{}' }).where('id', '=', 1).execute();
  }
});

test('users a guest may not see: omitted with user_list_incomplete, else "Unknown user"', async () => {
  const groups = await systemGroupIds(server.svc.db, 1);
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  await server.svc.db
    .updateTable('realms')
    .set({ group_settings: JSON.stringify({ ...realm.group_settings, can_access_all_users_group: groups['role:members'] }) })
    .where('id', '=', 1)
    .execute();
  try {
    const guest = await server.createUser({ role: ROLE.GUEST, fullName: 'Lim Ited' });
    const incomplete = await register(guest, {
      fetch_event_types: ['realm_user'],
      client_capabilities: { notification_settings_null: true, user_list_incomplete: true },
    });
    assert.deepEqual(
      incomplete.realm_users.map((u: any) => u.user_id),
      [guest.id],
    );
    const legacy = await register(guest, { fetch_event_types: ['realm_user'] });
    const unknown = legacy.realm_users.find((u: any) => u.user_id === member.id);
    assert.equal(unknown.full_name, 'Unknown user');
    assert.equal(legacy.realm_users.find((u: any) => u.user_id === guest.id).full_name, 'Lim Ited');
    assert.equal((await guest.get(`/users/${member.id}`)).body.msg, 'No such user');
  } finally {
    await server.svc.db
      .updateTable('realms')
      .set({ group_settings: JSON.stringify(realm.group_settings) })
      .where('id', '=', 1)
      .execute();
  }
});

test('an idle queue is collected; a parked one is not', async () => {
  const short = await startTestServer({ events: { heartbeatMs: 600_000, heartbeatJitterMs: 0, queueTimeoutMs: 1_000, gcIntervalMs: 30 } });
  try {
    const exists = (queueId: string) => short.processes.some((p) => p.svc.queues.has(queueId));
    const idle = await short.owner.post('/register', { event_types: ['realm_user'] });
    const longer = await short.owner.post('/register', { event_types: ['realm_user'], queue_lifespan_secs: 60 });
    const busy = await short.owner.post('/register', { event_types: ['realm_user'] });
    const parked = short.owner.get('/events', { queue_id: busy.body.queue_id, last_event_id: -1 });
    while (!queuesOf(short, busy.body.queue_id).get(busy.body.queue_id, short.owner.id).waiting) await new Promise((r) => setTimeout(r, 5));
    // The collector (every 30 ms) removes the idle queue once its second has passed, however late.
    while (exists(idle.body.queue_id)) await new Promise((r) => setTimeout(r, 20));
    const gone = await short.owner.get('/events', { queue_id: idle.body.queue_id, last_event_id: -1, dont_block: true });
    assert.equal(gone.status, 400);
    assert.equal(gone.body.code, 'BAD_EVENT_QUEUE_ID');
    const kept = await short.owner.get('/events', { queue_id: longer.body.queue_id, last_event_id: -1, dont_block: true });
    assert.equal(kept.status, 200, 'queue_lifespan_secs outlives the default');
    await short.createUser();
    const res = await parked;
    assert.equal(res.body.events[0].op, 'add', 'the parked queue lived and got its event');
    // A minute later (as the collector sees it), the longer queue has run out too.
    for (const p of short.processes) p.svc.queues.collect(Date.now() + 61_000);
    const expired = await short.owner.get('/events', { queue_id: longer.body.queue_id, last_event_id: -1, dont_block: true });
    assert.equal(expired.body.code, 'BAD_EVENT_QUEUE_ID', 'and is collected once it runs out');
  } finally {
    await short.close();
  }
});

test('queues survive graceful restarts', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'confab-queues-'));
  let first = await startTestServer({ dataDir, events: fastTimers });
  try {
    const state = await first.owner.post('/register', { event_types: ['realm_user', 'restart'] });
    await first.createUser({ fullName: 'Before Restart', email: 'before@example.com' });
    // Restarted twice before the client polls: one restart event, not two.
    first = await first.restart();
    const second = await first.restart();
    first = second;
    const owner = await second.clientFor(second.owner.id);
    const res = await owner.get('/events', { queue_id: state.body.queue_id, last_event_id: -1, dont_block: true });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.events.map((e: any) => e.type),
      ['realm_user', 'restart'],
    );
    assert.equal(res.body.events[0].person.full_name, 'Before Restart');
    assert.equal(res.body.events[1].svc_feature_level, SVC_FEATURE_LEVEL);
    assert.equal(res.body.events[1].svc_version, SVC_VERSION);
    assert.ok(!('immediate' in res.body.events[1]), 'the reference dropped `immediate` at feature level 240');
    const fresh = await owner.post('/register', { fetch_event_types: ['realm'], event_types: ['heartbeat'] });
    assert.equal(res.body.events[1].server_generation, fresh.body.server_generation, 'the generation register reports');
    await second.createUser({ fullName: 'After Restart', email: 'after@example.com' });
    const later = await owner.get('/events', { queue_id: state.body.queue_id, last_event_id: res.body.events[1].id, dont_block: true });
    assert.equal(later.body.events[0].person.full_name, 'After Restart');
    assert.deepEqual(
      later.body.events.map((e: any) => e.type),
      ['realm_user'],
      'the restored queue keeps its event_types',
    );
  } finally {
    await first.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a limited guest sees, and hears about, only the users it shares a channel or a conversation with', async () => {
  const groups = await systemGroupIds(server.svc.db, 1);
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  await server.svc.db
    .updateTable('realms')
    .set({ group_settings: JSON.stringify({ ...realm.group_settings, can_access_all_users_group: groups['role:members'] }) })
    .where('id', '=', 1)
    .execute();
  server.svc.credentials.clear();
  try {
    const guest = await server.createUser({ role: ROLE.GUEST, fullName: 'Lim Guest', email: 'limguest@example.com' });
    const colleague = await server.createUser({ fullName: 'Col League', email: 'colleague@example.com' });
    const pen = await server.createUser({ fullName: 'Pen Pal', email: 'penpal@example.com' });
    const stranger = await server.createUser({ fullName: 'Stran Ger', email: 'stranger@example.com' });
    await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'shared-room' }], principals: [guest.id, colleague.id] });
    await pen.post('/messages', { type: 'direct', to: JSON.stringify([guest.id]), content: 'hello guest' });
    const state = await register(guest, {
      fetch_event_types: ['realm_user'],
      client_capabilities: { notification_settings_null: true, user_list_incomplete: true },
    });
    const seen = state.realm_users.map((u: any) => u.user_id);
    assert.ok(seen.includes(colleague.id) && seen.includes(pen.id) && seen.includes(guest.id));
    assert.ok(!seen.includes(stranger.id));
    assert.equal((await guest.get(`/users/${colleague.id}`)).status, 200);
    assert.equal((await guest.get(`/users/${stranger.id}`)).body.msg, 'No such user');
    await server.owner.patch(`/users/${stranger.id}`, { full_name: 'Still Strange' });
    await server.owner.patch(`/users/${colleague.id}`, { full_name: 'Known Colleague' });
    const events = (await guest.get('/events', { queue_id: state.queue_id, last_event_id: -1, dont_block: true })).body.events;
    assert.deepEqual(
      events.map((e: any) => e.person.user_id),
      [colleague.id],
      'no news about users the guest cannot see',
    );
  } finally {
    await server.svc.db
      .updateTable('realms')
      .set({ group_settings: JSON.stringify(realm.group_settings) })
      .where('id', '=', 1)
      .execute();
    server.svc.credentials.clear();
  }
});

test('a limited guest: users it stops seeing are "Unknown user"; a newcomer it may not see arrives as one (not at all with user_list_incomplete); a departure is told as group removals', async () => {
  const groups = await systemGroupIds(server.svc.db, 1);
  const guest = await server.createUser({ role: ROLE.GUEST, fullName: 'Blind Guest', email: 'blindguest@example.com' });
  const before = await register(guest, { event_types: ['realm_user'] });
  await setAccess(groups['role:members']);
  try {
    const removed = (await guest.get('/events', { queue_id: before.queue_id, last_event_id: -1, dont_block: true })).body.events;
    assert.ok(removed.some((e: any) => e.person.user_id === member.id));
    for (const e of removed) assert.deepEqual([e.op, e.person.full_name], ['remove', 'Unknown user'], 'no real name for a user one stops seeing');

    const incomplete = { client_capabilities: { notification_settings_null: true, user_list_incomplete: true } };
    const legacy = await registerViewer(server, guest, { event_types: ['realm_user', 'user_group'], fetch_event_types: ['realm_user', 'realm_user_groups'] });
    const partial = await registerViewer(server, guest, {
      ...incomplete,
      event_types: ['realm_user', 'user_group'],
      fetch_event_types: ['realm_user', 'realm_user_groups'],
    });
    const created = await server.owner.post('/users', { email: 'hidden@example.com', password: 'secret123', full_name: 'Hidden Newcomer' });
    const newId = created.body.user_id;
    const heard = async (viewer: typeof legacy) =>
      (await guest.get('/events', { queue_id: viewer.queueId, last_event_id: viewer.lastEventId, dont_block: true })).body.events.filter(
        (e: any) => e.type === 'realm_user',
      );
    const placeholder = await heard(legacy);
    assert.equal(placeholder.length, 1);
    assert.deepEqual(
      [placeholder[0].op, placeholder[0].person.user_id, placeholder[0].person.full_name, placeholder[0].person.is_active],
      ['add', newId, 'Unknown user', true],
    );
    assert.ok(!JSON.stringify(placeholder).includes('Hidden Newcomer') && !JSON.stringify(placeholder).includes('hidden@example.com'));
    assert.deepEqual(await heard(partial), [], 'user_list_incomplete: nothing about a newcomer it may not see');
    for (const v of [legacy, partial]) await expectStateInSync(server, v, 'after a hidden newcomer');

    assert.equal((await server.owner.delete(`/users/${newId}`)).status, 200);
    const departure = (await guest.get('/events', { queue_id: legacy.queueId, last_event_id: legacy.lastEventId, dont_block: true })).body.events;
    assert.ok(departure.length > 0 && departure.every((e: any) => e.type === 'user_group' && e.op === 'remove_members' && e.user_ids[0] === newId));
    assert.ok(departure.some((e: any) => e.group_id === groups['role:members']));
    for (const v of [legacy, partial]) await expectStateInSync(server, v, 'after its deactivation');
    const fresh = await register(guest, { fetch_event_types: ['realm_user'] });
    assert.ok(
      fresh.realm_users.some((u: any) => u.user_id === newId),
      'an "Unknown user" reads as active: nothing about them shows',
    );
    assert.ok(!fresh.realm_non_active_users.some((u: any) => u.user_id === newId));

    assert.equal((await server.owner.post(`/users/${newId}/reactivate`)).status, 200);
    for (const v of [legacy, partial]) await expectStateInSync(server, v, 'after its reactivation');
  } finally {
    await setAccess(groups['role:everyone']);
  }
});

test('a limited guest promoted to member hears of the users it now sees; made a guest again, it loses them', async () => {
  const groups = await systemGroupIds(server.svc.db, 1);
  const guest = await server.createUser({ role: ROLE.GUEST, fullName: 'Rising Guest', email: 'risingguest@example.com' });
  await setAccess(groups['role:members']);
  try {
    const incomplete = { client_capabilities: { notification_settings_null: true, user_list_incomplete: true } };
    for (const [role, label] of [
      [ROLE.MEMBER, 'promoted'],
      [ROLE.GUEST, 'made a guest again'],
    ] as const) {
      const viewers = [await registerViewer(server, guest), await registerViewer(server, guest, incomplete)];
      assert.equal((await server.owner.patch(`/users/${guest.id}`, { role })).status, 200);
      const events = (await guest.get('/events', { queue_id: viewers[0].queueId, last_event_id: -1, dont_block: true })).body.events;
      const about = events.filter((e: any) => e.type === 'realm_user' && e.person.user_id === member.id);
      assert.deepEqual(
        about.map((e: any) => [e.op, e.person.full_name === 'Unknown user']),
        [[role === ROLE.MEMBER ? 'add' : 'remove', role !== ROLE.MEMBER]],
        label,
      );
      for (const v of viewers) await expectStateInSync(server, v, `${label} (${JSON.stringify(v.params)})`);
    }
  } finally {
    await setAccess(groups['role:everyone']);
  }
});
