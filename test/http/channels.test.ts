// Channels and subscriptions through HTTP (spec endpoints 2 and 19, the Channel
// and Subscription resources; digest 1.2, 1.19 and section 2).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { systemGroupIds } from '../../src/user_groups/group-setting.ts';
import type { SystemGroupName } from '../../src/user_groups/system-groups.ts';

let server: TestServer;
let admin: Client;
let member: Client;
let other: Client;
let guest: Client;
let groups: Record<SystemGroupName, number>;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com' });
  member = await server.createUser({ role: ROLE.MEMBER, email: 'member@example.com' });
  other = await server.createUser({ role: ROLE.MEMBER, email: 'other@example.com' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com' });
  groups = await systemGroupIds(server.svc.db, 1);
});
after(() => server.close());

let counter = 0;
const fresh = (prefix = 'chan') => `${prefix}-${++counter}`;

async function create(c: Client, name: string, params: Record<string, unknown> = {}) {
  const res = await c.post('/users/me/subscriptions', { subscriptions: [{ name }], ...params });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const id = (await c.get('/get_stream_id', { stream: name })).body.stream_id;
  return id as number;
}

const CHANNEL_FIELDS = [
  'stream_id',
  'name',
  'is_archived',
  'description',
  'rendered_description',
  'date_created',
  'creator_id',
  'invite_only',
  'is_web_public',
  'stream_post_policy',
  'is_announcement_only',
  'message_retention_days',
  'history_public_to_subscribers',
  'topics_policy',
  'first_message_id',
  'folder_id',
  'is_recently_active',
  'can_add_subscribers_group',
  'can_administer_channel_group',
  'can_delete_any_message_group',
  'can_delete_own_message_group',
  'can_move_messages_out_of_channel_group',
  'can_move_messages_within_channel_group',
  'can_remove_subscribers_group',
  'can_resolve_topics_group',
  'can_send_message_group',
  'can_subscribe_group',
  'subscriber_count',
  'stream_weekly_traffic',
].sort();
const PERSONAL_FIELDS = [
  'color',
  'is_muted',
  'in_home_view',
  'pin_to_top',
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'wildcard_mentions_notify',
];

test('subscribing creates missing channels; the answer is keyed by user id', async () => {
  const name = fresh('Denmark');
  const res = await member.post('/users/me/subscriptions', { subscriptions: [{ name, description: 'The **best** place' }] });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {
    result: 'success',
    msg: '',
    subscribed: { [String(member.id)]: [name] },
    already_subscribed: {},
    new_subscription_messages_sent: true,
  });
  const again = await member.post('/users/me/subscriptions', { subscriptions: [{ name }] });
  assert.deepEqual(again.body.already_subscribed, { [String(member.id)]: [name] });
  assert.deepEqual(again.body.subscribed, {});
  const id = (await member.get('/get_stream_id', { stream: name.toUpperCase() })).body.stream_id;
  const { stream } = (await member.get(`/streams/${id}`)).body;
  assert.deepEqual(Object.keys(stream).sort(), CHANNEL_FIELDS);
  assert.equal(stream.name, name);
  assert.equal(stream.description, 'The **best** place');
  assert.equal(stream.rendered_description, '<p>The <strong>best</strong> place</p>');
  assert.equal(stream.creator_id, member.id);
  assert.equal(stream.invite_only, false);
  assert.equal(stream.history_public_to_subscribers, true);
  assert.equal(stream.topics_policy, 'inherit');
  assert.equal(stream.message_retention_days, null);
  assert.equal(stream.subscriber_count, 1);
  // Notification Bot's creation message opens the channel, already read by its creator.
  const me = (await member.get('/users/me')).body;
  const history = (
    await member.get('/messages', { narrow: [{ operator: 'channel', operand: id }], anchor: 'oldest', num_before: 0, num_after: 10, apply_markdown: false })
  ).body.messages;
  assert.equal(history.length, 1);
  const [first] = history;
  assert.equal(first.sender_full_name, 'Notification Bot');
  assert.equal(first.subject, 'channel events');
  const fence = '````';
  assert.equal(
    first.content,
    `**Public** channel created by @_**${me.full_name}|${member.id}**. **Description:**\n${fence} quote\nThe **best** place\n${fence}`,
  );
  assert.deepEqual(first.flags, ['read']);
  assert.equal(stream.first_message_id, first.id);
  assert.equal(stream.stream_weekly_traffic, null);
  assert.equal(stream.is_recently_active, true);
  assert.equal(stream.stream_post_policy, 1);
  assert.deepEqual(stream.can_administer_channel_group, { direct_members: [member.id], direct_subgroups: [] });
  assert.equal(stream.can_send_message_group, groups['role:everyone']);
  assert.equal(stream.can_remove_subscribers_group, groups['role:administrators']);
  assert.equal(stream.can_add_subscribers_group, groups['role:nobody']);
});

test('principals by id or email; errors for unknown, deactivated and mixed principals', async () => {
  const name = fresh();
  const res = await member.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: ['other@example.com', 'member@example.com'] });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.subscribed, { [String(other.id)]: [name], [String(member.id)]: [name] });
  const unknown = await member.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: [99999] });
  assert.equal(unknown.status, 400);
  assert.deepEqual(unknown.body, { result: 'error', msg: 'No such user', code: 'BAD_REQUEST' });
  const gone = await server.createUser();
  await server.owner.delete(`/users/${gone.id}`);
  assert.equal((await member.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: [gone.id] })).body.msg, 'No such user');
  assert.equal((await member.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: ['nobody@example.com'] })).body.msg, 'No such user');
  const byId = await member.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: [other.id] });
  assert.deepEqual(byId.body.already_subscribed, { [String(other.id)]: [name] });
  const mixed = await member.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: [other.id, 'member@example.com'] });
  assert.equal(mixed.status, 400);
});

test('names and descriptions are checked', async () => {
  const cases: [unknown, string][] = [
    [[{ name: '   ' }], "Channel name can't be empty."],
    [[{ name: 'x'.repeat(61) }], 'Channel name too long (limit: 60 characters).'],
    [[{ name: 'bad\u0001name' }], 'Invalid character in channel name, at position 4.'],
    [[{ name: 'ok', description: 'd'.repeat(1025) }], 'subscriptions[0]["description"] is too long (limit: 1024 characters)'],
    [[{}], 'subscriptions[0]["name"] field is missing'],
    ['nope', 'subscriptions is not valid JSON'],
  ];
  for (const [subscriptions, msg] of cases) {
    const res = await member.post('/users/me/subscriptions', { subscriptions });
    assert.equal(res.status, 400, msg);
    assert.equal(res.body.msg, msg);
  }
  // 60 characters, counted as characters, is fine.
  assert.equal((await member.post('/users/me/subscriptions', { subscriptions: [{ name: 'é'.repeat(60) }] })).status, 200);
});

test('creation settings apply to new channels only', async () => {
  const name = fresh('private');
  await member.post('/users/me/subscriptions', { subscriptions: [{ name }], invite_only: true, history_public_to_subscribers: false });
  const id = (await member.get('/get_stream_id', { stream: name })).body.stream_id;
  let stream = (await member.get(`/streams/${id}`)).body.stream;
  assert.equal(stream.invite_only, true);
  assert.equal(stream.history_public_to_subscribers, false);
  // Asking again with other settings changes nothing about the existing channel.
  await member.post('/users/me/subscriptions', { subscriptions: [{ name }], invite_only: false });
  stream = (await member.get(`/streams/${id}`)).body.stream;
  assert.equal(stream.invite_only, true);

  const withGroups = fresh();
  await member.post('/users/me/subscriptions', {
    subscriptions: [{ name: withGroups }],
    can_send_message_group: { direct_members: [member.id], direct_subgroups: [groups['role:administrators']] },
    can_remove_subscribers_group: groups['role:moderators'],
    topics_policy: 'inherit',
  });
  const g = (await member.get(`/streams/${(await member.get('/get_stream_id', { stream: withGroups })).body.stream_id}`)).body.stream;
  assert.deepEqual(g.can_send_message_group, { direct_members: [member.id], direct_subgroups: [groups['role:administrators']] });
  assert.equal(g.can_remove_subscribers_group, groups['role:moderators']);
  assert.equal(g.stream_post_policy, 1);

  const cases: [Record<string, unknown>, string][] = [
    [{ is_default_stream: true }, 'Insufficient permission'],
    [{ can_delete_own_message_group: groups['role:members'] }, 'Insufficient permission'],
    [{ is_web_public: true }, 'Web-public channels are not enabled.'],
    [{ message_retention_days: 30 }, 'Must be an organization owner'],
    [{ message_retention_days: 'forever' }, "Bad value for 'message_retention_days': forever"],
    [{ topics_policy: 'whatever' }, 'Invalid topics_policy'],
    [{ can_send_message_group: groups['role:internet'] }, "'can_send_message_group' setting cannot be set to 'role:internet' group."],
    [{ folder_id: 9999 }, 'Invalid channel folder ID'],
  ];
  for (const [params, msg] of cases) {
    const res = await member.post('/users/me/subscriptions', { subscriptions: [{ name: fresh() }], ...params });
    assert.equal(res.status, 400, msg);
    assert.equal(res.body.msg, msg);
  }
  // Administrators choose default channels, never private ones.
  const privateDefault = await admin.post('/users/me/subscriptions', { subscriptions: [{ name: fresh() }], is_default_stream: true, invite_only: true });
  assert.equal(privateDefault.body.msg, 'A default channel cannot be private.');
  // The owner may set a retention period.
  const kept = fresh();
  await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name: kept }], message_retention_days: '"unlimited"' });
  const keptId = (await server.owner.get('/get_stream_id', { stream: kept })).body.stream_id;
  assert.equal((await server.owner.get(`/streams/${keptId}`)).body.stream.message_retention_days, -1);
});

test('a failed subscribe request changes nothing', async () => {
  const name = fresh('atomic');
  const res = await member.post('/users/me/subscriptions', { subscriptions: [{ name }, { name: 'x'.repeat(61) }] });
  assert.equal(res.status, 400);
  assert.equal((await member.get('/get_stream_id', { stream: name })).status, 400);
  const second = await member.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: [member.id, 99999] });
  assert.equal(second.status, 400);
  assert.equal((await member.get('/get_stream_id', { stream: name })).body.msg, `Invalid channel name '${name}'`);
});

test('private channels: unauthorized, fatal or not', async () => {
  const name = fresh('secret');
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name }], invite_only: true });
  const fatal = await member.post('/users/me/subscriptions', { subscriptions: [{ name }] });
  assert.equal(fatal.status, 400);
  assert.equal(fatal.body.msg, `Unable to access channel (${name}).`);
  const open = fresh();
  const lenient = await member.post('/users/me/subscriptions', { subscriptions: [{ name }, { name: open }], authorization_errors_fatal: false });
  assert.equal(lenient.status, 200);
  assert.deepEqual(lenient.body.unauthorized, [name]);
  assert.deepEqual(lenient.body.subscribed, { [String(member.id)]: [open] });
});

test('unsubscribing: removed and not_removed, unknown channels, others need permission', async () => {
  const name = fresh();
  const unsubscribedName = fresh();
  await member.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: [member.id, other.id] });
  await member.post('/users/me/subscriptions', { subscriptions: [{ name: unsubscribedName }], principals: [other.id] });
  const res = await member.delete('/users/me/subscriptions', { subscriptions: [name, unsubscribedName] });
  assert.deepEqual(res.body, { result: 'success', msg: '', removed: [name], not_removed: [unsubscribedName] });
  const unknown = await member.delete('/users/me/subscriptions', { subscriptions: ['no-such-channel'] });
  assert.equal(unknown.status, 400);
  assert.deepEqual(unknown.body, {
    result: 'error',
    msg: "Channel 'no-such-channel' does not exist",
    code: 'STREAM_DOES_NOT_EXIST',
    stream: 'no-such-channel',
  });
  const others = await member.delete('/users/me/subscriptions', { subscriptions: [name], principals: [other.id] });
  assert.equal(others.body.msg, 'Insufficient permission');
  const byAdmin = await admin.delete('/users/me/subscriptions', { subscriptions: [name], principals: [other.id] });
  assert.deepEqual(byAdmin.body.removed, [name]);
  const id = (await member.get('/get_stream_id', { stream: name })).body.stream_id;
  assert.deepEqual((await member.get(`/streams/${id}/members`)).body.subscribers, []);
});

test('the legacy PATCH /users/me/subscriptions adds and deletes', async () => {
  const a = fresh();
  const b = fresh();
  await member.post('/users/me/subscriptions', { subscriptions: [{ name: b }] });
  const res = await member.patch('/users/me/subscriptions', { add: [{ name: a }], delete: [b] });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.subscribed, { [String(member.id)]: [a] });
  assert.deepEqual(res.body.removed, [b]);
  // All or nothing: a refused `delete` undoes the `add`.
  const c = fresh();
  const failed = await member.patch('/users/me/subscriptions', { add: [{ name: c }], delete: ['no-such-channel'] });
  assert.equal(failed.status, 400);
  assert.equal(failed.body.code, 'STREAM_DOES_NOT_EXIST');
  assert.equal((await member.get('/get_stream_id', { stream: c })).body.msg, `Invalid channel name '${c}'`);
  const nothing = await member.patch('/users/me/subscriptions', {});
  assert.deepEqual(nothing.body, { result: 'error', msg: 'Nothing to do. Specify at least one of "add" or "delete".', code: 'BAD_REQUEST' });
});

test('subscriptions[].color colors the new subscriptions', async () => {
  const name = fresh('colored');
  const res = await member.post('/users/me/subscriptions', { subscriptions: [{ name, color: '#00ff00' }], principals: [member.id, other.id] });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  for (const c of [member, other]) {
    assert.equal((await c.get('/users/me/subscriptions')).body.subscriptions.find((s: any) => s.name === name).color, '#00ff00');
  }
  const bad = await member.post('/users/me/subscriptions', { subscriptions: [{ name: fresh(), color: 'green' }] });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.msg, 'subscriptions[0]["color"] is not a valid hex color code');
});

test('GET /users/me/subscriptions, with and without subscribers', async () => {
  const name = fresh('listed');
  await member.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: [member.id, other.id] });
  const plain = (await member.get('/users/me/subscriptions')).body.subscriptions;
  const sub = plain.find((s: any) => s.name === name);
  assert.deepEqual(Object.keys(sub).sort(), [...CHANNEL_FIELDS, ...PERSONAL_FIELDS].sort());
  assert.match(sub.color, /^#[0-9a-f]{6}$/);
  assert.equal(sub.desktop_notifications, null);
  assert.equal(sub.in_home_view, true);
  const names = plain.map((s: any) => s.name);
  assert.deepEqual(names, [...names].sort());
  const withSubs = (await member.get('/users/me/subscriptions', { include_subscribers: true })).body.subscriptions;
  assert.deepEqual(
    withSubs.find((s: any) => s.name === name).subscribers,
    [member.id, other.id].sort((x, y) => x - y),
  );
  const partial = (await member.get('/users/me/subscriptions', { include_subscribers: 'partial' })).body.subscriptions;
  assert.deepEqual(
    partial.find((s: any) => s.name === name).subscribers,
    [member.id, other.id].sort((x, y) => x - y),
    'complete below 250',
  );
});

test('subscription properties', async () => {
  const name = fresh();
  const id = await create(member, name);
  const res = await member.post('/users/me/subscriptions/properties', {
    subscription_data: [
      { stream_id: id, property: 'color', value: '#123abc' },
      { stream_id: id, property: 'pin_to_top', value: true },
      { stream_id: id, property: 'desktop_notifications', value: true },
      { stream_id: id, property: 'in_home_view', value: false },
    ],
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.subscription_data.length, 4);
  let sub = (await member.get('/users/me/subscriptions')).body.subscriptions.find((s: any) => s.stream_id === id);
  assert.equal(sub.color, '#123abc');
  assert.equal(sub.pin_to_top, true);
  assert.equal(sub.desktop_notifications, true);
  assert.equal(sub.is_muted, true);
  assert.equal(sub.in_home_view, false);
  // The legacy single-property form; null returns a notification setting to the default.
  assert.equal((await member.patch(`/users/me/subscriptions/${id}`, { property: 'desktop_notifications', value: null })).status, 200);
  assert.equal((await member.patch(`/users/me/subscriptions/${id}`, { property: 'is_muted', value: false })).status, 200);
  sub = (await member.get('/users/me/subscriptions')).body.subscriptions.find((s: any) => s.stream_id === id);
  assert.equal(sub.desktop_notifications, null);
  assert.equal(sub.is_muted, false);
  const errors: [Record<string, unknown>, string][] = [
    [{ stream_id: id, property: 'volume', value: 1 }, 'Unknown subscription property: volume'],
    [{ stream_id: id, property: 'color', value: 'red' }, 'color is not a valid hex color code'],
    [{ stream_id: id, property: 'pin_to_top', value: 'yes' }, 'pin_to_top is not a boolean'],
    [{ stream_id: id, property: 'is_muted', value: null }, 'is_muted is not a boolean'],
    [{ stream_id: 99999, property: 'pin_to_top', value: true }, 'Not subscribed to channel ID 99999'],
  ];
  for (const [change, msg] of errors) {
    const err = await member.post('/users/me/subscriptions/properties', { subscription_data: [change] });
    assert.equal(err.status, 400);
    assert.equal(err.body.msg, msg);
  }
  // One bad entry: none of the request's changes happen.
  await member.post('/users/me/subscriptions/properties', {
    subscription_data: [
      { stream_id: id, property: 'color', value: '#000000' },
      { stream_id: id, property: 'volume', value: 1 },
    ],
  });
  sub = (await member.get('/users/me/subscriptions')).body.subscriptions.find((s: any) => s.stream_id === id);
  assert.equal(sub.color, '#123abc');
});

test('GET /streams and its filters', async () => {
  const pub = fresh('pub');
  const priv = fresh('priv');
  const unsubscribed = fresh('unsub');
  await member.post('/users/me/subscriptions', { subscriptions: [{ name: pub }] });
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: priv }], invite_only: true });
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: unsubscribed }] });
  const names = async (c: Client, params: Record<string, unknown> = {}) => (await c.get('/streams', params)).body.streams.map((s: any) => s.name);
  const seen = await names(member);
  assert.ok(seen.includes(pub) && seen.includes(unsubscribed) && !seen.includes(priv));
  assert.deepEqual(seen, [...seen].sort());
  assert.ok(!(await names(member, { include_public: false })).includes(unsubscribed));
  assert.ok((await names(member, { include_public: false })).includes(pub), 'subscribed');
  assert.ok(!(await names(member, { include_public: false, include_subscribed: false })).includes(pub));
  assert.ok((await names(admin, { include_all: true })).includes(priv), 'administrators see every channel');
  assert.ok(!(await names(member, { include_all: true })).includes(priv));
  assert.ok((await names(member, { include_can_access_content: true, include_public: false, include_subscribed: false })).includes(unsubscribed));
  const all = await member.get('/streams', { include_all_active: true });
  assert.equal(all.body.msg, 'User not authorized for this query');
  assert.ok((await names(admin, { include_all_active: true })).includes(priv));
  const withDefault = (await member.get('/streams', { include_default: true })).body.streams;
  assert.equal(typeof withDefault[0].is_default, 'boolean');
  assert.equal('is_default' in (await member.get('/streams')).body.streams[0], false);
  // Guests see only what they are subscribed to.
  assert.deepEqual(await names(guest), []);
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: pub }], principals: [guest.id] });
  assert.deepEqual(await names(guest), [pub]);
});

test("GET /streams: include_owner_subscribed gives a bot its owner's channels", async () => {
  const secret = fresh('owners');
  const secretId = await create(admin, secret, { invite_only: true });
  const bot = await server.createUser();
  await server.svc.db.updateTable('users').set({ is_bot: true, bot_type: 1, bot_owner_id: admin.id }).where('id', '=', bot.id).execute();
  const ids = async (c: Client, params: Record<string, unknown> = {}) => (await c.get('/streams', params)).body.streams.map((s: any) => s.stream_id);
  assert.ok(!(await ids(bot)).includes(secretId));
  assert.ok((await ids(bot, { include_owner_subscribed: true })).includes(secretId));
  assert.ok((await ids(bot, { include_owner_subscribed: true, include_public: false, include_subscribed: false })).includes(secretId));
  // People have no owner: the filter adds nothing for them.
  assert.ok(!(await ids(member, { include_owner_subscribed: true })).includes(secretId));
});

test('single-channel reads check access', async () => {
  const priv = fresh('hidden');
  const id = await create(admin, priv, { invite_only: true });
  assert.deepEqual((await member.get(`/streams/${id}`)).body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
  assert.equal((await member.get(`/streams/${id}/members`)).body.msg, 'Invalid channel ID');
  assert.equal((await member.get('/get_stream_id', { stream: priv })).body.msg, `Invalid channel name '${priv}'`);
  assert.deepEqual((await admin.get(`/streams/${id}/members`)).body.subscribers, [admin.id]);
  assert.equal((await admin.get(`/users/${admin.id}/subscriptions/${id}`)).body.is_subscribed, true);
  assert.equal((await admin.get(`/users/${member.id}/subscriptions/${id}`)).body.is_subscribed, false);
  assert.equal((await member.get(`/users/${admin.id}/subscriptions/${id}`)).body.msg, 'Invalid channel ID');
  assert.equal((await member.get('/streams/999999')).body.msg, 'Invalid channel ID');
});

test('PATCH /streams/{id}: name, description, privacy, retention, topics policy', async () => {
  const name = fresh('edit');
  const id = await create(member, name);
  const renamed = fresh('renamed');
  assert.equal((await member.patch(`/streams/${id}`, { new_name: renamed, description: 'New *text*' })).status, 200);
  let stream = (await member.get(`/streams/${id}`)).body.stream;
  assert.equal(stream.name, renamed);
  assert.equal(stream.rendered_description, '<p>New <em>text</em></p>');
  const taken = fresh('taken');
  await create(member, taken);
  assert.equal((await member.patch(`/streams/${id}`, { new_name: taken.toUpperCase() })).body.msg, 'Channel name is already in use.');
  assert.equal((await member.patch(`/streams/${id}`, { new_name: '' })).body.msg, "Channel name can't be empty.");
  // Privacy: private with hidden history, then public (history always shared).
  assert.equal((await member.patch(`/streams/${id}`, { is_private: true, history_public_to_subscribers: false })).status, 200);
  stream = (await member.get(`/streams/${id}`)).body.stream;
  assert.equal(stream.invite_only, true);
  assert.equal(stream.history_public_to_subscribers, false);
  assert.equal((await member.patch(`/streams/${id}`, { is_private: false, history_public_to_subscribers: false })).body.msg, 'Invalid parameters');
  assert.equal((await member.patch(`/streams/${id}`, { is_private: false })).status, 200);
  stream = (await member.get(`/streams/${id}`)).body.stream;
  assert.equal(stream.history_public_to_subscribers, true);
  assert.equal((await member.patch(`/streams/${id}`, { is_web_public: true })).body.msg, 'Web-public channels are not enabled.');
  assert.equal((await member.patch(`/streams/${id}`, { message_retention_days: 10 })).body.msg, 'Must be an organization owner');
  assert.equal((await server.owner.patch(`/streams/${id}`, { message_retention_days: 10 })).status, 200);
  assert.equal((await member.get(`/streams/${id}`)).body.stream.message_retention_days, 10);
  assert.equal((await server.owner.patch(`/streams/${id}`, { message_retention_days: '"realm_default"' })).status, 200);
  assert.equal((await member.get(`/streams/${id}`)).body.stream.message_retention_days, null);
  // Notification Bot's messages sit in the "channel events" topic: only the general chat topic may remain.
  assert.equal(
    (await member.patch(`/streams/${id}`, { topics_policy: 'empty_topic_only' })).body.msg,
    'To enable this configuration, all messages in this channel must be in the general chat topic. Consider renaming or deleting topics.',
  );
  const narrow = JSON.stringify([['channel', id]]);
  const notices = (await admin.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow })).body.messages;
  assert.ok(notices.length > 1);
  for (const m of notices) assert.equal((await admin.delete(`/messages/${m.id}`)).status, 200);
  assert.equal((await admin.patch(`/streams/${id}`, { topics_policy: 'empty_topic_only' })).status, 200);
  assert.equal((await member.get(`/streams/${id}`)).body.stream.topics_policy, 'empty_topic_only');
  // Others cannot administer it.
  const res = await other.patch(`/streams/${id}`, { description: 'hijack' });
  assert.deepEqual(res.body, { result: 'error', msg: 'You do not have permission to administer this channel.', code: 'CANNOT_ADMINISTER_CHANNEL' });
});

test("changing a private channel's privacy needs its content, even for administrators (as the reference)", async () => {
  const name = fresh('hidden');
  const id = await create(member, name, { invite_only: true });
  // The administrator may manage the channel's metadata without being subscribed ...
  assert.equal((await admin.patch(`/streams/${id}`, { description: 'managed from outside' })).status, 200);
  // ... but not publish a history they cannot read, nor restate its privacy.
  for (const is_private of [false, true]) {
    const res = await admin.patch(`/streams/${id}`, { is_private });
    assert.equal(res.status, 400);
    assert.equal(res.body.msg, 'Invalid channel ID');
  }
  assert.equal((await member.get(`/streams/${id}`)).body.stream.invite_only, true, 'nothing changed');
  // Subscribed, they may.
  assert.equal((await admin.post('/users/me/subscriptions', { subscriptions: [{ name }] })).status, 200);
  assert.equal((await admin.patch(`/streams/${id}`, { is_private: false })).status, 200);
  assert.equal((await member.get(`/streams/${id}`)).body.stream.invite_only, false);
});

test('topics_policy needs can_set_topics_policy_group (members by default, as the reference)', async () => {
  const id = await create(member, fresh('policy'), { topics_policy: 'disable_empty_topic' });
  assert.equal((await member.get(`/streams/${id}`)).body.stream.topics_policy, 'disable_empty_topic');
  const narrowed = await server.owner.patch('/realm', { can_set_topics_policy_group: { new: groups['role:moderators'] } });
  assert.equal(narrowed.status, 200, JSON.stringify(narrowed.body));
  try {
    const name = fresh('policy');
    assert.equal(
      (await member.post('/users/me/subscriptions', { subscriptions: [{ name }], topics_policy: 'allow_empty_topic' })).body.msg,
      'Insufficient permission',
    );
    assert.equal((await member.get('/get_stream_id', { stream: name })).status, 400);
    assert.equal((await member.patch(`/streams/${id}`, { topics_policy: 'allow_empty_topic' })).body.msg, 'Insufficient permission');
    assert.equal((await member.get(`/streams/${id}`)).body.stream.topics_policy, 'disable_empty_topic');
    // Going back to the organization's policy is always allowed.
    assert.equal((await member.patch(`/streams/${id}`, { topics_policy: 'inherit' })).status, 200);
  } finally {
    await server.owner.patch('/realm', { can_set_topics_policy_group: { new: groups['role:members'] } });
  }
});

test('group settings as {new, old}; a mismatch changes nothing', async () => {
  const id = await create(member, fresh('groups'));
  const ok = await member.patch(`/streams/${id}`, {
    can_send_message_group: { new: groups['role:members'], old: groups['role:everyone'] },
    description: 'changed',
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  let stream = (await member.get(`/streams/${id}`)).body.stream;
  assert.equal(stream.can_send_message_group, groups['role:members']);
  const mismatch = await member.patch(`/streams/${id}`, {
    description: 'should not stick',
    can_send_message_group: { new: groups['role:moderators'], old: groups['role:everyone'] },
  });
  assert.equal(mismatch.status, 400);
  assert.deepEqual(mismatch.body, { result: 'error', msg: "'old' value does not match the expected value.", code: 'EXPECTATION_MISMATCH' });
  stream = (await member.get(`/streams/${id}`)).body.stream;
  assert.equal(stream.description, 'changed');
  assert.equal(stream.can_send_message_group, groups['role:members']);
  const anonymous = { direct_members: [other.id], direct_subgroups: [] };
  assert.equal((await member.patch(`/streams/${id}`, { can_administer_channel_group: { new: anonymous } })).status, 200);
  assert.deepEqual((await member.get(`/streams/${id}`)).body.stream.can_administer_channel_group, anonymous);
  // The member gave the channel away: only the new administrator (and organization admins) may edit.
  assert.equal((await member.patch(`/streams/${id}`, { description: 'x' })).body.code, 'CANNOT_ADMINISTER_CHANNEL');
  assert.equal((await other.patch(`/streams/${id}`, { description: 'mine now' })).status, 200);
});

test('per-channel deletion settings need can_set_delete_message_policy_group (moderators by default)', async () => {
  const id = await create(member, fresh('deletions'));
  const before = (await member.get(`/streams/${id}`)).body.stream;
  const refused = await member.patch(`/streams/${id}`, { description: 'not this either', can_delete_own_message_group: { new: groups['role:members'] } });
  assert.deepEqual(refused.body, { result: 'error', msg: 'Insufficient permission', code: 'BAD_REQUEST' });
  const after = (await member.get(`/streams/${id}`)).body.stream;
  assert.equal(after.description, before.description);
  assert.deepEqual(after.can_delete_own_message_group, before.can_delete_own_message_group);
  assert.equal((await admin.patch(`/streams/${id}`, { can_delete_any_message_group: { new: groups['role:moderators'] } })).status, 200);
  assert.equal((await member.get(`/streams/${id}`)).body.stream.can_delete_any_message_group, groups['role:moderators']);
  const moderator = await server.createUser({ role: ROLE.MODERATOR });
  const own = await create(moderator, fresh('moderated'), { can_delete_any_message_group: groups['role:moderators'] });
  assert.equal((await moderator.get(`/streams/${own}`)).body.stream.can_delete_any_message_group, groups['role:moderators']);
  assert.equal((await moderator.patch(`/streams/${own}`, { can_delete_own_message_group: { new: groups['role:members'] } })).status, 200);
});

test('archiving and unarchiving', async () => {
  const name = fresh('old');
  const id = await create(member, name);
  assert.equal((await admin.post('/default_streams', { stream_id: id })).status, 200);
  assert.ok((await member.post('/register', { fetch_event_types: ['default_streams'] })).body.realm_default_streams.includes(id));
  assert.equal((await other.delete(`/streams/${id}`)).body.code, 'CANNOT_ADMINISTER_CHANNEL');
  assert.equal((await member.delete(`/streams/${id}`)).status, 200);
  assert.equal((await member.get(`/streams/${id}`)).body.stream.is_archived, true);
  assert.ok(!(await member.get('/streams')).body.streams.some((s: any) => s.stream_id === id));
  assert.ok((await member.get('/streams', { exclude_archived: false })).body.streams.some((s: any) => s.stream_id === id));
  assert.ok(!(await member.post('/register', { fetch_event_types: ['default_streams'] })).body.realm_default_streams.includes(id));
  assert.equal((await member.delete(`/streams/${id}`)).body.msg, 'Channel is already archived');
  assert.equal((await member.patch(`/streams/${id}`, { is_archived: false })).status, 200);
  assert.equal((await member.get(`/streams/${id}`)).body.stream.is_archived, false);
});

test('POST /channels/create', async () => {
  const name = fresh('created');
  const res = await member.post('/channels/create', { name, description: 'desc', subscribers: [member.id, other.id], invite_only: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const stream = (await member.get(`/streams/${res.body.id}`)).body.stream;
  assert.equal(stream.invite_only, true);
  assert.equal(stream.subscriber_count, 2);
  assert.equal((await member.post('/channels/create', { name, subscribers: [] })).body.msg, `Channel '${name}' already exists`);
  assert.equal((await guest.post('/channels/create', { name: fresh(), subscribers: [] })).body.msg, 'Insufficient permission');
});

test('default channels: administrators choose them, new users join them', async () => {
  const name = fresh('welcome');
  const id = await create(member, name);
  assert.equal((await member.post('/default_streams', { stream_id: id })).body.msg, 'Must be an organization administrator');
  assert.equal((await admin.post('/default_streams', { stream_id: id })).status, 200);
  const newcomer = await server.createUser();
  const subs = (await newcomer.get('/users/me/subscriptions')).body.subscriptions.map((s: any) => s.stream_id);
  assert.ok(subs.includes(id));
  assert.ok((await member.post('/register', { fetch_event_types: ['default_streams'] })).body.realm_default_streams.includes(id));
  // Guests may not see every default channel: they hear of none, and GET /streams shows them none they cannot see.
  assert.deepEqual((await guest.post('/register', { fetch_event_types: ['default_streams'] })).body.realm_default_streams, []);
  assert.ok(!(await guest.get('/streams', { include_default: true })).body.streams.some((s: any) => s.stream_id === id));
  const priv = await create(admin, fresh('privdef'), { invite_only: true });
  assert.equal((await admin.post('/default_streams', { stream_id: priv })).body.msg, 'Private channels cannot be made default.');
  assert.equal((await admin.patch(`/streams/${id}`, { is_private: true })).body.msg, 'A default channel cannot be private.');
  assert.equal((await admin.delete('/default_streams', { stream_id: id })).status, 200);
  assert.equal((await admin.delete('/default_streams', { stream_id: id })).body.msg, 'Channel is not a default channel.');
  assert.equal((await admin.post('/default_streams', { stream_id: 99999 })).body.msg, 'Invalid channel ID');
});

test('ids beyond the database range and NUL characters are refused, never a server error', async () => {
  const id = await create(member, fresh('range'));
  const huge = 2 ** 31;
  const cases: [Promise<{ status: number; body: any }>, string][] = [
    [
      member.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: huge, property: 'pin_to_top', value: true }] }),
      `Not subscribed to channel ID ${huge}`,
    ],
    [
      member.post('/users/me/subscriptions', { subscriptions: [{ name: fresh(), description: 'a\u0000b' }] }),
      'Invalid character in channel description, at position 2.',
    ],
    [member.patch(`/streams/${id}`, { description: 'a\u0000b' }), 'Invalid character in channel description, at position 2.'],
    [member.patch(`/streams/${id}`, { folder_id: huge }), 'Invalid channel folder ID'],
    [member.post('/users/me/subscriptions', { subscriptions: [{ name: fresh() }], folder_id: huge }), 'Invalid channel folder ID'],
    [member.patch(`/streams/${id}`, { can_send_message_group: { new: huge } }), `Invalid user group ID: ${huge}`],
    [member.patch(`/streams/${id}`, { can_send_message_group: { new: { direct_members: [huge], direct_subgroups: [] } } }), `Invalid user ID: ${huge}`],
  ];
  for (const [request, msg] of cases) {
    const res = await request;
    assert.equal(res.status, 400, msg);
    assert.equal(res.body.msg, msg);
  }
});

test('organizations do not share channels', async () => {
  const outsider = await server.createOrganization('elsewhere');
  const name = fresh('shared');
  const id = await create(member, name);
  assert.deepEqual((await outsider.get('/streams')).body.streams, []);
  assert.equal((await outsider.get(`/streams/${id}`)).body.msg, 'Invalid channel ID');
  // The same name is free in another organization.
  assert.equal((await outsider.post('/users/me/subscriptions', { subscriptions: [{ name }] })).status, 200);
  assert.equal((await outsider.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: [member.id] })).body.msg, 'No such user');
});

test('partial subscriber lists: complete below 250, else bots and recently active users', async () => {
  const crowd: Client[] = [];
  for (let i = 0; i < 250; i++) crowd.push(await server.createUser({ email: `crowd${i}@example.com`, fullName: `Crowd ${i}` }));
  const name = fresh('crowded');
  const res = await admin.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: crowd.map((c) => c.id) });
  assert.equal(Object.keys(res.body.subscribed).length, 250);
  // Two of them were active lately.
  for (const c of crowd.slice(0, 2)) assert.equal((await c.post('/users/me/presence', { status: 'active' })).status, 200);
  const state = (await crowd[0].post('/register', { fetch_event_types: ['subscription'], include_subscribers: 'partial' })).body;
  const sub = state.subscriptions.find((s: any) => s.name === name);
  assert.equal('subscribers' in sub, false);
  assert.deepEqual(sub.partial_subscribers, [crowd[0].id, crowd[1].id]);
  assert.equal(sub.subscriber_count, 250);
  const full = (await crowd[0].post('/register', { fetch_event_types: ['subscription'], include_subscribers: true })).body;
  assert.equal(full.subscriptions.find((s: any) => s.name === name).subscribers.length, 250);
  const none = (await crowd[0].post('/register', { fetch_event_types: ['subscription'] })).body;
  assert.equal('subscribers' in none.subscriptions.find((s: any) => s.name === name), false);
});

test('a user group used by a channel setting cannot be deactivated', async () => {
  const group = await admin.post('/user_groups/create', { name: 'posters', description: 'may post', members: [member.id] });
  assert.equal(group.status, 200, JSON.stringify(group.body));
  const id = await create(admin, fresh('restricted'));
  await admin.patch(`/streams/${id}`, { can_send_message_group: { new: group.body.group_id } });
  const refused = await admin.post(`/user_groups/${group.body.group_id}/deactivate`);
  assert.equal(refused.status, 400);
  assert.equal(refused.body.code, 'CANNOT_DEACTIVATE_GROUP_IN_USE');
  assert.deepEqual(refused.body.objections, [{ type: 'channel', channel_id: id, settings: ['can_send_message_group'] }]);
  // Once the channel is archived, it no longer holds the group back.
  await admin.delete(`/streams/${id}`);
  assert.equal((await admin.post(`/user_groups/${group.body.group_id}/deactivate`)).status, 200);
});

test('weekly traffic counts every message, sent at once or not, the creation notice included', async () => {
  const id = await create(member, fresh('busy'));
  // Four weeks old: the traffic is the last 28 days' messages over four weeks.
  await server.svc.db
    .updateTable('channels')
    .set({ date_created: new Date(Date.now() - 28 * 86_400_000) })
    .where('id', '=', id)
    .execute();
  await Promise.all(
    Array.from({ length: 27 }, async (_, i) => {
      const res = await member.post('/messages', { type: 'stream', to: id, topic: `t${i % 3}`, content: `number ${i}` });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }),
  );
  const { stream } = (await member.get(`/streams/${id}`)).body;
  assert.equal(stream.stream_weekly_traffic, 7);
  assert.equal(stream.is_recently_active, true);
});
