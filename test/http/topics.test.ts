// GET /users/me/{stream_id}/topics (digest section 2): the topics of a channel
// with their newest message, newest first, counting only messages the caller
// may read.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { ok, refused } from './user-groups.fixture.ts';
import { createChannel, sendTo, subscribe, unsubscribe } from './topics.fixture.ts';

let server: TestServer;
let admin: Client;
let alice: Client;
let bob: Client;
let guest: Client;
before(async () => {
  server = await startTestServer();
  await server.svc.db
    .updateTable('realms')
    .set({ settings: JSON.stringify({ enable_spectator_access: true }) })
    .execute();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com' });
  alice = await server.createUser({ email: 'alice@example.com' });
  bob = await server.createUser({ email: 'bob@example.com' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com' });
});
after(() => server.close());

const topicsOf = async (c: Client, id: number, params: Record<string, unknown> = {}) => ok(await c.get(`/users/me/${id}/topics`, params)).topics;
/** A new channel's first message: Notification Bot's, in the "channel events" topic. */
const creationOf = async (c: Client, id: number): Promise<number> => ok(await c.get(`/streams/${id}`)).stream.first_message_id;

test('newest first, one entry per topic (any case, named as its newest message), the empty topic as "general chat"', async () => {
  const id = await createChannel(admin, 'Public', [alice]);
  const a1 = await sendTo(alice, 'Public', 'Apples');
  const b1 = await sendTo(alice, 'Public', 'bananas');
  const e1 = await sendTo(alice, 'Public', '');
  const a2 = await sendTo(admin, 'Public', 'APPLES');
  // Direct messages are not in any channel.
  ok(await alice.post('/messages', { type: 'direct', to: JSON.stringify([bob.id]), content: 'hi' }));
  const created = await creationOf(alice, id);
  assert.ok(created < a1 && a1 < b1 && b1 < e1 && e1 < a2);
  const expected = [
    { name: 'APPLES', max_id: a2 },
    { name: 'general chat', max_id: e1 },
    { name: 'bananas', max_id: b1 },
    { name: 'channel events', max_id: created },
  ];
  assert.deepEqual(await topicsOf(alice, id), expected);
  assert.deepEqual(await topicsOf(alice, id, { allow_empty_topic_name: false }), expected);
  assert.deepEqual(
    (await topicsOf(alice, id, { allow_empty_topic_name: true })).map((t: any) => t.name),
    ['APPLES', '', 'bananas', 'channel events'],
  );
  // A public channel's history is everyone's (but guests'): members who never subscribed see it all.
  assert.deepEqual(await topicsOf(bob, id), expected);
  assert.deepEqual(await topicsOf(server.owner, id), expected);
  refused(await guest.get(`/users/me/${id}/topics`), 'Invalid channel ID');
  await subscribe(admin, 'Public', [guest]);
  assert.deepEqual(await topicsOf(guest, id), expected);
  refused(await alice.get(`/users/me/${id}/topics`, { allow_empty_topic_name: 'yes' }), 'allow_empty_topic_name is not valid JSON');
});

test('a channel without messages has no topics; unknown channels and ids', async () => {
  const id = await createChannel(admin, 'Quiet');
  const created = await creationOf(admin, id);
  assert.deepEqual(await topicsOf(alice, id), [{ name: 'channel events', max_id: created }]);
  // Without its creation message, the channel has no messages at all.
  ok(await admin.delete(`/messages/${created}`));
  assert.deepEqual(await topicsOf(alice, id), []);
  refused(await alice.get('/users/me/999999/topics'), 'Invalid channel ID');
  assert.equal((await alice.get('/users/me/abc/topics')).status, 404);
});

test('protected history: only topics of messages the user received', async () => {
  const id = await createChannel(alice, 'Protected', [], { invite_only: true, history_public_to_subscribers: false });
  const early = await sendTo(alice, 'Protected', 'before bob');
  const both1 = await sendTo(alice, 'Protected', 'shared');
  await subscribe(alice, 'Protected', [bob]);
  const both2 = await sendTo(alice, 'Protected', 'shared');
  const late = await sendTo(bob, 'Protected', 'after bob');
  assert.deepEqual(await topicsOf(alice, id), [
    { name: 'after bob', max_id: late },
    { name: 'shared', max_id: both2 },
    { name: 'before bob', max_id: early },
    { name: 'channel events', max_id: await creationOf(alice, id) },
  ]);
  assert.ok(both1 < both2);
  // Bob did not receive the creation message either.
  assert.deepEqual(await topicsOf(bob, id), [
    { name: 'after bob', max_id: late },
    { name: 'shared', max_id: both2 },
  ]);
  // Not subscribed: a member may not know of it, an administrator may but received nothing.
  const carol = await server.createUser({ email: 'carol@example.com' });
  refused(await carol.get(`/users/me/${id}/topics`), 'Invalid channel ID');
  refused(await guest.get(`/users/me/${id}/topics`), 'Invalid channel ID');
  assert.deepEqual(await topicsOf(admin, id), []);
});

test('shared history: subscribers see the topics from before they joined', async () => {
  const id = await createChannel(alice, 'Shared', [], { invite_only: true, history_public_to_subscribers: true });
  const early = await sendTo(alice, 'Shared', 'old news');
  const expected = [
    { name: 'old news', max_id: early },
    { name: 'channel events', max_id: await creationOf(alice, id) },
  ];
  refused(await bob.get(`/users/me/${id}/topics`), 'Invalid channel ID');
  await subscribe(alice, 'Shared', [bob, guest]);
  assert.deepEqual(await topicsOf(bob, id), expected);
  assert.deepEqual(await topicsOf(guest, id), expected);
  // Unsubscribed again, a member loses the channel.
  await unsubscribe(admin, 'Shared', [bob]);
  refused(await bob.get(`/users/me/${id}/topics`), 'Invalid channel ID');
});

test('spectators: web-public channels only', async () => {
  const webId = await createChannel(server.owner, 'Web', [], { is_web_public: true });
  const id = await sendTo(server.owner, 'Web', 'for everyone');
  assert.deepEqual(await topicsOf(server.anonymous, webId), [
    { name: 'for everyone', max_id: id },
    { name: 'channel events', max_id: await creationOf(server.owner, webId) },
  ]);
  const publicId = ok(await admin.get('/get_stream_id', { stream: 'Public' })).stream_id;
  refused(await server.anonymous.get(`/users/me/${publicId}/topics`), 'Invalid channel ID');
  await server.svc.db
    .updateTable('realms')
    .set({ settings: JSON.stringify({ enable_spectator_access: false }) })
    .execute();
  assert.equal((await server.anonymous.get(`/users/me/${webId}/topics`)).status, 401);
});
