// Typing notifications: POST /typing and POST /messages/{message_id}/typing
// (digest section 2 "Typing", 3.3 `typing` and `typing_edit_message`): who is
// told, in which shape, and what is refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { systemGroupIds } from '../../src/user_groups/group-setting.ts';
import { ok, refused, setRealmSetting } from './user-groups.fixture.ts';
import { createChannel, eventsOf, openQueue, sendTo } from './topics.fixture.ts';

let server: TestServer;
let admin: Client;
let alice: Client;
let bob: Client;
let carol: Client;
let guest: Client;
let roomId: number;
let hideoutId: number;
before(async () => {
  // Organization settings are changed in the database by a test: no cached organization rows.
  server = await startTestServer({ credentialCacheMs: 0 });
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com' });
  alice = await server.createUser({ email: 'alice@example.com' });
  bob = await server.createUser({ email: 'bob@example.com' });
  carol = await server.createUser({ email: 'carol@example.com' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com' });
  roomId = await createChannel(admin, 'Room', [alice, bob, guest]);
  hideoutId = await createChannel(alice, 'Hideout', [bob], { invite_only: true });
});
after(() => server.close());

const CHANNEL_TYPING = { client_capabilities: { notification_settings_null: false, stream_typing_notifications: true } };
const ref = (c: Client) => ({ user_id: c.id, email: c.email });
const typing = (c: Client, params: Record<string, unknown>) => c.post('/typing', params);
const typingEvents = async (c: Client, queue: string) => (await eventsOf(c, queue)).filter((e) => e.type === 'typing' || e.type === 'typing_edit_message');

/** Opens a queue for each client, runs the action, and returns what each queue received. */
async function heard(clients: Client[], action: () => Promise<unknown>, params: Record<string, unknown> = CHANNEL_TYPING): Promise<Record<string, any>[][]> {
  const queues = await Promise.all(clients.map((c) => openQueue(c, params)));
  await action();
  return Promise.all(clients.map((c, i) => typingEvents(c, queues[i])));
}

async function setSetting(c: Client, name: string, value: boolean) {
  ok(await c.patch('/settings', { [name]: value }));
}

test('direct: every participant, the typist included, hears start and stop, with the whole conversation listed', async () => {
  const [toBob, toAlice, toCarol] = await heard([bob, alice, carol], async () => {
    ok(await typing(alice, { op: 'start', to: [bob.id] }));
    ok(await typing(alice, { type: 'direct', op: 'stop', to: [bob.id] }));
  });
  const recipients = [ref(alice), ref(bob)].sort((a, b) => a.user_id - b.user_id);
  assert.deepEqual(toBob, [
    { type: 'typing', op: 'start', message_type: 'direct', sender: ref(alice), recipients },
    { type: 'typing', op: 'stop', message_type: 'direct', sender: ref(alice), recipients },
  ]);
  assert.deepEqual(toAlice, toBob, 'the typist is told too, as in the reference');
  assert.deepEqual(toCarol, []);

  // A group conversation; the typist may list themselves, repeated ids count once.
  const [b, c, a] = await heard([bob, carol, alice], () => typing(alice, { op: 'start', to: [carol.id, bob.id, alice.id, bob.id] }));
  const all = [ref(alice), ref(bob), ref(carol)].sort((x, y) => x.user_id - y.user_id);
  assert.deepEqual(b, [{ type: 'typing', op: 'start', message_type: 'direct', sender: ref(alice), recipients: all }]);
  assert.deepEqual(c, b);
  assert.deepEqual(a, b);
  // Direct typing does not need the channel capability.
  const [plain] = await heard([bob], () => typing(alice, { op: 'start', to: [bob.id] }), {});
  assert.equal(plain.length, 1);
});

test('direct: parameters and refusals; a refused request tells nobody', async () => {
  const [toBob] = await heard([bob], async () => {
    refused(await typing(alice, { to: [bob.id] }), "Missing 'op' argument", 'REQUEST_VARIABLE_MISSING');
    refused(await typing(alice, { op: 'typing', to: [bob.id] }), 'Invalid op');
    refused(await typing(alice, { op: 'start', type: 'private', to: [bob.id] }), 'Invalid type');
    refused(await typing(alice, { op: 'start' }), "Missing 'to' argument");
    refused(await typing(alice, { op: 'start', to: [] }), "Empty 'to' list");
    refused(await typing(alice, { op: 'start', to: bob.id }), 'to is not a list');
    refused(await typing(alice, { op: 'start', to: 'bob@example.com' }), 'to is not valid JSON');
    refused(await typing(alice, { op: 'start', to: ['bob@example.com'] }), 'to[0] is not an integer');
    refused(await typing(alice, { op: 'start', to: [bob.id, 999999] }), 'Invalid user ID 999999');
  });
  assert.deepEqual(toBob, []);
});

test('direct: users who are not told (settings, deactivated), and typists who may not tell', async () => {
  await setSetting(carol, 'receives_typing_notifications', false);
  const [toBob, toCarol] = await heard([bob, carol], () => typing(alice, { op: 'start', to: [bob.id, carol.id] }));
  assert.equal(toBob.length, 1);
  assert.deepEqual(toCarol, []);
  await setSetting(carol, 'receives_typing_notifications', true);

  await setSetting(alice, 'send_private_typing_notifications', false);
  const [silenced] = await heard([bob], async () =>
    refused(await typing(alice, { op: 'start', to: [bob.id] }), 'User has disabled typing notifications for direct messages'),
  );
  assert.deepEqual(silenced, []);
  // The channel setting is separate.
  ok(await typing(alice, { type: 'stream', op: 'start', stream_id: roomId, topic: 't' }));
  await setSetting(alice, 'send_private_typing_notifications', true);

  // A deactivated user may be named (the conversation still exists) but is not told.
  const gone = await server.createUser({ email: 'gone@example.com' });
  const [toBob2] = await heard([bob], async () => {
    ok(await admin.delete(`/users/${gone.id}`));
    ok(await typing(alice, { op: 'start', to: [bob.id, gone.id] }));
  });
  assert.deepEqual(
    toBob2.map((e) => e.recipients.length),
    [3],
  );
});

test('direct: users the typist may not see are unknown', async () => {
  const groups = await systemGroupIds(server.svc.db, 1);
  await setRealmSetting(server, 'can_access_all_users_group', groups['role:members']);
  try {
    // The guest shares a channel with alice, not with carol.
    ok(await typing(guest, { op: 'start', to: [alice.id] }));
    refused(await typing(guest, { op: 'start', to: [carol.id] }), `Invalid user ID ${carol.id}`);
    ok(await typing(alice, { op: 'start', to: [carol.id] }));
  } finally {
    await setRealmSetting(server, 'can_access_all_users_group', groups['role:everyone']);
  }
  ok(await typing(guest, { op: 'start', to: [carol.id] }));
});

test('channel: subscribers with the capability hear it, with channel and topic', async () => {
  for (const type of ['stream', 'channel']) {
    const [toBob, toGuest, toAlice, toCarol, toAdmin] = await heard([bob, guest, alice, carol, admin], async () => {
      ok(await typing(alice, { type, op: 'start', stream_id: roomId, topic: 'plans' }));
      ok(await typing(alice, { type, op: 'stop', stream_id: roomId, topic: 'plans' }));
    });
    const event = (op: string) => ({ type: 'typing', op, message_type: 'stream', sender: ref(alice), stream_id: roomId, topic: 'plans' });
    assert.deepEqual(toBob, [event('start'), event('stop')], type);
    assert.deepEqual(toGuest, toBob);
    assert.deepEqual(toAdmin, toBob);
    assert.deepEqual(toAlice, toBob, 'the typist too');
    assert.deepEqual(toCarol, [], 'not a subscriber');
  }
  // Without the capability, no channel typing at all.
  const [plain] = await heard([bob], () => typing(alice, { type: 'stream', op: 'start', stream_id: roomId, topic: 'plans' }), {});
  assert.deepEqual(plain, []);
  // Private channels: only subscribers.
  const [toBob, toAdmin] = await heard([bob, admin], () => typing(alice, { type: 'stream', op: 'start', stream_id: hideoutId, topic: 'x' }));
  assert.equal(toBob.length, 1);
  assert.deepEqual(toAdmin, []);
  // A subscriber who turned them off.
  await setSetting(bob, 'receives_typing_notifications', false);
  const [off, on] = await heard([bob, guest], () => typing(alice, { type: 'stream', op: 'start', stream_id: roomId, topic: 'x' }));
  assert.deepEqual(off, []);
  assert.equal(on.length, 1);
  await setSetting(bob, 'receives_typing_notifications', true);
});

test('channel: the topic as messages store it; the empty topic for each kind of client', async () => {
  const modernParams = { client_capabilities: { ...CHANNEL_TYPING.client_capabilities, empty_topic_name: true } };
  const plainQueue = await openQueue(bob, CHANNEL_TYPING);
  const modernQueue = await openQueue(bob, modernParams);
  ok(await typing(alice, { type: 'stream', op: 'start', stream_id: roomId, topic: '  spaced  ' }));
  for (const topic of ['', 'general chat', '(no topic)']) ok(await typing(alice, { type: 'stream', op: 'start', stream_id: roomId, topic }));
  assert.deepEqual(
    (await typingEvents(bob, plainQueue)).map((e) => e.topic),
    ['spaced', 'general chat', 'general chat', 'general chat'],
  );
  assert.deepEqual(
    (await typingEvents(bob, modernQueue)).map((e) => e.topic),
    ['spaced', '', '', ''],
  );
});

test('channel: parameters and who may type where', async () => {
  const groups = await systemGroupIds(server.svc.db, 1);
  const [toBob] = await heard([bob], async () => {
    refused(await typing(alice, { type: 'stream', op: 'start', topic: 't' }), "Missing 'stream_id' argument");
    refused(await typing(alice, { type: 'channel', op: 'start', stream_id: roomId }), 'Missing topic');
    refused(await typing(alice, { type: 'stream', op: 'start', stream_id: '"x"', topic: 't' }), 'stream_id is not an integer');
    refused(await typing(alice, { type: 'stream', op: 'start', stream_id: 999999, topic: 't' }), 'Invalid channel ID');
    // Not subscribed to a private channel; a guest outside a public one.
    refused(await typing(carol, { type: 'stream', op: 'start', stream_id: hideoutId, topic: 't' }), 'Invalid channel ID');
    const open = await createChannel(admin, 'Open', [bob]);
    refused(await typing(guest, { type: 'stream', op: 'start', stream_id: open, topic: 't' }), 'Invalid channel ID');
    // Administrators know of private channels, but may not post there.
    refused(await typing(admin, { type: 'stream', op: 'start', stream_id: hideoutId, topic: 't' }), "Not authorized to send to channel 'Hideout'");
    await setSetting(alice, 'send_stream_typing_notifications', false);
    refused(await typing(alice, { type: 'stream', op: 'start', stream_id: roomId, topic: 't' }), 'User has disabled typing notifications for channel messages');
    await setSetting(alice, 'send_stream_typing_notifications', true);
  });
  assert.deepEqual(toBob, []);

  // can_send_message_group, and archived channels.
  const announceId = await createChannel(admin, 'Announcements', [alice, bob]);
  ok(await admin.patch(`/streams/${announceId}`, { can_send_message_group: { new: groups['role:administrators'] } }));
  refused(await typing(alice, { type: 'stream', op: 'start', stream_id: announceId, topic: 't' }), 'You do not have permission to post in this channel.');
  const [heardAdmin] = await heard([bob], () => typing(admin, { type: 'stream', op: 'start', stream_id: announceId, topic: 't' }));
  assert.equal(heardAdmin.length, 1);
  ok(await admin.delete(`/streams/${announceId}`));
  refused(await typing(admin, { type: 'stream', op: 'start', stream_id: announceId, topic: 't' }), "Not authorized to send to channel 'Announcements'");
  // A member not subscribed to a public channel may type there (they may post there).
  const [toSubscriber] = await heard([bob], () => typing(carol, { type: 'stream', op: 'start', stream_id: roomId, topic: 't' }));
  assert.equal(toSubscriber.length, 1);
});

test('editing a message: typing_edit_message to those who would see the edit', async () => {
  const dm = ok(await alice.post('/messages', { type: 'direct', to: JSON.stringify([bob.id, carol.id]), content: 'hi' })).id;
  const [toBob, toCarol, toAlice, toAdmin] = await heard(
    [bob, carol, alice, admin],
    async () => {
      ok(await alice.post(`/messages/${dm}/typing`, { op: 'start' }));
      ok(await alice.post(`/messages/${dm}/typing`, { op: 'stop' }));
    },
    {},
  );
  const users = [alice.id, bob.id, carol.id].sort((a, b) => a - b);
  const event = (op: string) => ({ type: 'typing_edit_message', op, sender_id: alice.id, message_id: dm, recipient: { type: 'direct', user_ids: users } });
  assert.deepEqual(toBob, [event('start'), event('stop')]);
  assert.deepEqual(toCarol, toBob);
  assert.deepEqual(toAlice, toBob);
  assert.deepEqual(toAdmin, []);

  const cm = await sendTo(alice, 'Room', '');
  const modern = { client_capabilities: { notification_settings_null: false, empty_topic_name: true } };
  const [inRoom, outside] = await heard([bob, carol], () => alice.post(`/message_edit_typing/${cm}`, { op: 'start' }), modern);
  assert.deepEqual(inRoom, [
    { type: 'typing_edit_message', op: 'start', sender_id: alice.id, message_id: cm, recipient: { type: 'channel', channel_id: roomId, topic: '' } },
  ]);
  assert.deepEqual(outside, []);
  const [plain] = await heard([bob], () => alice.post('/message_edit_typing', { message_id: cm, op: 'stop' }), {});
  assert.deepEqual(
    plain.map((e) => [e.op, e.recipient.topic]),
    [['stop', 'general chat']],
  );
});

test('editing a message: refusals', async () => {
  const dm = ok(await alice.post('/messages', { type: 'direct', to: JSON.stringify([bob.id]), content: 'private' })).id;
  const hidden = await sendTo(alice, 'Hideout', 'secret');
  const [toAlice] = await heard(
    [alice],
    async () => {
      refused(await carol.post(`/messages/${dm}/typing`, { op: 'start' }), 'Invalid message(s)');
      refused(await carol.post(`/messages/${hidden}/typing`, { op: 'start' }), 'Invalid message(s)');
      refused(await admin.post(`/messages/${hidden}/typing`, { op: 'start' }), 'Invalid message(s)');
      refused(await bob.post('/messages/999999/typing', { op: 'start' }), 'Invalid message(s)');
      refused(await bob.post(`/messages/${dm}/typing`, {}), "Missing 'op' argument", 'REQUEST_VARIABLE_MISSING');
      refused(await bob.post(`/messages/${dm}/typing`, { op: 'go' }), 'Invalid op');
      await setSetting(bob, 'send_private_typing_notifications', false);
      refused(await bob.post(`/messages/${dm}/typing`, { op: 'start' }), 'User has disabled typing notifications for direct messages');
      await setSetting(bob, 'send_private_typing_notifications', true);
      await setSetting(bob, 'send_stream_typing_notifications', false);
      refused(await bob.post(`/messages/${hidden}/typing`, { op: 'start' }), 'User has disabled typing notifications for channel messages');
      await setSetting(bob, 'send_stream_typing_notifications', true);
    },
    {},
  );
  assert.deepEqual(toAlice, []);
  // Someone who left a private channel keeps their copies, but may no longer edit there.
  const dave = await server.createUser({ email: 'dave@example.com' });
  ok(await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'Hideout' }], principals: [dave.id] }));
  const seen = await sendTo(alice, 'Hideout', 'for dave');
  ok(await dave.post(`/messages/${seen}/typing`, { op: 'start' }));
  ok(await dave.delete('/users/me/subscriptions', { subscriptions: ['Hideout'] }));
  refused(await dave.post(`/messages/${seen}/typing`, { op: 'start' }), 'Invalid message(s)');
});

test('channels with more than 100 receiving subscribers get no typing notifications', async () => {
  const crowd: Client[] = [];
  for (let i = 0; i < 99; i++) crowd.push(await server.createUser({ email: `crowd${i}@example.com` }));
  // alice, bob and 98 others: 100 in all.
  await createChannel(alice, 'Crowd', [bob, ...crowd.slice(0, 98)]);
  const crowdId = ok(await alice.get('/get_stream_id', { stream: 'Crowd' })).stream_id;
  const [fits] = await heard([bob], () => typing(alice, { type: 'stream', op: 'start', stream_id: crowdId, topic: 't' }));
  assert.equal(fits.length, 1);
  ok(await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'Crowd' }], principals: [crowd[98].id] }));
  const [tooMany] = await heard([bob], () => typing(alice, { type: 'stream', op: 'start', stream_id: crowdId, topic: 't' }));
  assert.deepEqual(tooMany, []);
  // Those who do not receive typing notifications do not count.
  await setSetting(crowd[0], 'receives_typing_notifications', false);
  const [again] = await heard([bob], () => typing(alice, { type: 'stream', op: 'start', stream_id: crowdId, topic: 't' }));
  assert.equal(again.length, 1);
});

test('ids no row can have are unknown users and channels, not a 500', async () => {
  const huge = 99_999_999_999;
  assert.equal((await alice.post('/typing', { op: 'start', to: JSON.stringify([huge]) })).body.msg, `Invalid user ID ${huge}`);
  assert.equal((await alice.post('/typing', { op: 'start', type: 'stream', stream_id: huge, topic: 't' })).body.msg, 'Invalid channel ID');
  assert.equal((await alice.post(`/messages/${huge}/typing`, { op: 'start' })).status, 404);
});
