// Deleting messages: who may delete what, the time limit, and the
// `delete_message` event (digest section 2 "Delete message", 3.2, 3.3).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { registerViewer, expectStateInSync } from '../support/state.ts';
import type { Client } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import {
  age,
  channel,
  events,
  everyone,
  expectError,
  listen,
  row,
  send,
  sendDirect,
  setChannelPermission,
  startOrg,
  withPermissions,
  withSettings,
  type Org,
} from './message-edit.fixture.ts';

let o: Org;
let denmark: number;
before(async () => {
  o = await startOrg();
  denmark = await channel(o, [o.admin, o.moderator, o.alice, o.bob, o.carol, o.guest], {}, 'Denmark');
});
after(() => o.server.close());

const del = (c: Client, id: number) => c.delete(`/messages/${id}`);
const exists = async (id: number) => (await row(o, id)) !== undefined;
const noPermission = "You don't have permission to delete this message";
const bulk = { client_capabilities: JSON.stringify({ notification_settings_null: false, bulk_message_deletion: true }) };

test('by default: administrators delete any message, everyone else only their own', async () => {
  const roles = everyone(o);
  for (const [role, sender] of Object.entries(roles)) {
    for (const [otherRole, other] of Object.entries(roles)) {
      if (other === sender) continue;
      const id = await send(sender, denmark, 'matrix', `${role}'s message`);
      const res = await del(other, id);
      if (otherRole === 'owner' || otherRole === 'admin') {
        assert.equal(res.status, 200, `${otherRole} deletes the ${role}'s: ${JSON.stringify(res.body)}`);
        assert.equal(await exists(id), false);
      } else {
        expectError(res, noPermission);
        assert.equal(await exists(id), true, `${otherRole} changed nothing`);
      }
    }
    const own = await send(sender, denmark, 'matrix', 'my own');
    const res = await del(sender, own);
    assert.deepEqual(res.body, { result: 'success', msg: '' }, role);
    assert.equal(await exists(own), false);
    expectError(await sender.get(`/messages/${own}`), 'Invalid message(s)');
  }
});

test('can_delete_own_message_group, for the organization and per channel', async () => {
  const dm = await sendDirect(o.alice, [o.bob], 'direct');
  const inDenmark = await send(o.alice, denmark, 'own', 'channel');
  await withPermissions(o, { can_delete_own_message_group: 'role:nobody' }, async () => {
    expectError(await del(o.alice, dm), noPermission);
    expectError(await del(o.alice, inDenmark), noPermission);
    await setChannelPermission(o, denmark, 'can_delete_own_message_group', 'role:members');
    try {
      // The channel's setting covers its messages, never direct messages, and never others' messages.
      expectError(await del(o.alice, dm), noPermission);
      expectError(await del(o.bob, inDenmark), noPermission);
      assert.equal((await del(o.alice, inDenmark)).status, 200);
    } finally {
      await setChannelPermission(o, denmark, 'can_delete_own_message_group', 'role:nobody');
    }
  });
  assert.equal(await exists(dm), true);
  assert.equal(await exists(inDenmark), false);
});

test('can_delete_any_message_group, for the organization and per channel', async () => {
  const mine = await send(o.alice, denmark, 'any', 'alice wrote this');
  const dm = await sendDirect(o.alice, [o.moderator], 'direct to the moderator');
  await withPermissions(o, { can_delete_any_message_group: 'role:moderators' }, async () => {
    expectError(await del(o.bob, mine), noPermission);
    assert.equal((await del(o.moderator, dm)).status, 200, 'any message they can read');
  });
  await withPermissions(o, { can_delete_any_message_group: 'role:owners' }, async () => {
    expectError(await del(o.admin, mine), noPermission);
  });
  await setChannelPermission(o, denmark, 'can_delete_any_message_group', 'role:members');
  try {
    expectError(await del(o.guest, mine), noPermission);
    assert.equal((await del(o.bob, mine)).status, 200);
  } finally {
    await setChannelPermission(o, denmark, 'can_delete_any_message_group', 'role:nobody');
  }
});

test('the time limit binds senders, not those who may delete any message', async () => {
  const [fresh, old, adminsOld] = [
    await send(o.alice, denmark, 'limit', 'fresh'),
    await send(o.alice, denmark, 'limit', 'old'),
    await send(o.alice, denmark, 'limit', 'old too'),
  ];
  await age(o, [old, adminsOld], 120);
  await withSettings(o, { message_content_delete_limit_seconds: 60 }, async () => {
    expectError(await del(o.alice, old), 'The time limit for deleting this message has passed');
    assert.equal(await exists(old), true);
    assert.equal((await del(o.alice, fresh)).status, 200);
    assert.equal((await del(o.admin, adminsOld)).status, 200);
  });
  // No limit by default.
  assert.equal((await del(o.alice, old)).status, 200);
});

test("a bot's owner may delete what the bot sent", async () => {
  const bot = await o.server.createUser({ fullName: 'Alice Bot' });
  await o.server.svc.db.updateTable('users').set({ is_bot: true, bot_type: 1, bot_owner_id: o.alice.id }).where('id', '=', bot.id).execute();
  await o.owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }], principals: [bot.id] });
  const id = await send(bot, denmark, 'bots', 'beep');
  expectError(await del(o.bob, id), noPermission);
  assert.equal((await del(o.alice, id)).status, 200);
});

test('what cannot be reached: unknown, not received, private, already deleted, archived', async () => {
  expectError(await del(o.alice, 999_999), 'Invalid message(s)');
  const dm = await sendDirect(o.alice, [o.bob], 'between us');
  expectError(await del(o.admin, dm), 'Invalid message(s)', 'BAD_REQUEST');
  const vault = await channel(o, [o.alice], { invite_only: true });
  const secret = await send(o.alice, vault, 'x', 'secret');
  expectError(await del(o.admin, secret), 'Invalid message(s)');
  assert.equal((await del(o.alice, dm)).status, 200);
  expectError(await del(o.alice, dm), 'Invalid message(s)');
  const closing = await channel(o, [o.alice]);
  const last = await send(o.alice, closing, 'x', 'last words');
  await o.owner.delete(`/streams/${closing}`);
  expectError(await del(o.owner, last), 'Invalid message(s)');
  assert.equal(await exists(last), true);
});

test('delete_message: one event with every id, or one per id for older clients; to everyone who had it', async () => {
  const id = await send(o.bob, denmark, '', 'to be deleted');
  const queues = {
    alice: await listen(o.alice, bulk),
    aliceLegacy: await listen(o.alice),
    aliceNamed: await listen(o.alice, {
      client_capabilities: JSON.stringify({ notification_settings_null: false, bulk_message_deletion: true, empty_topic_name: true }),
    }),
    owner: await listen(o.owner, bulk),
    follower: await listen(await o.server.createUser(), { ...bulk, all_public_streams: true }),
    stranger: await listen(await o.server.createUser(), bulk),
  };
  // Deleted by an administrator who is not subscribed: they hear of it too.
  const outsiderAdmin = await o.server.createUser({ role: ROLE.ADMINISTRATOR });
  const adminQueue = await listen(outsiderAdmin, bulk);
  assert.equal((await del(outsiderAdmin, id)).status, 200);
  const event = { type: 'delete_message', message_ids: [id], message_type: 'stream', stream_id: denmark, topic: 'general chat' };
  assert.deepEqual(await events(queues.alice, 'delete_message'), [event]);
  assert.deepEqual(await events(queues.aliceLegacy, 'delete_message'), [
    { type: 'delete_message', message_id: id, message_type: 'stream', stream_id: denmark, topic: 'general chat' },
  ]);
  assert.deepEqual(await events(queues.aliceNamed, 'delete_message'), [{ ...event, topic: '' }]);
  assert.deepEqual(await events(queues.follower, 'delete_message'), [event], 'follows all public channels');
  assert.deepEqual(await events(adminQueue, 'delete_message'), [event], 'the deleting user');
  assert.deepEqual(await events(queues.owner, 'delete_message'), [event], 'a subscriber');
  assert.deepEqual(await events(queues.stranger, 'delete_message'), []);
  // Direct messages: their participants.
  const dm = await sendDirect(o.alice, [o.bob], 'oops');
  await del(o.alice, dm);
  assert.deepEqual(await events(queues.alice, 'delete_message'), [{ type: 'delete_message', message_ids: [dm], message_type: 'private' }]);
  assert.deepEqual(await events(queues.follower, 'delete_message'), []);
  assert.deepEqual(await events(queues.owner, 'delete_message'), [], 'not in the conversation');
});

test('deleting the first message of a channel moves first_message_id; register stays in sync', async () => {
  const id = await channel(o, [o.alice, o.bob]);
  const viewer = await registerViewer(o.server, o.bob);
  const [first, second] = [await send(o.alice, id, 'a', 'first'), await send(o.alice, id, 'b', 'second')];
  await o.bob.post('/messages/flags', { messages: JSON.stringify([second]), op: 'add', flag: 'starred' });
  // The channel opens with Notification Bot's creation message: deleting it makes Alice's first.
  const creation = (await o.bob.get(`/streams/${id}`)).body.stream.first_message_id;
  assert.equal(typeof creation, 'number');
  assert.ok(creation < first);
  const q = await listen(o.bob, bulk);
  assert.equal((await del(o.owner, creation)).status, 200);
  let streamEvents = await events(q, 'stream');
  assert.deepEqual(streamEvents, [{ type: 'stream', op: 'update', stream_id: id, name: streamEvents[0]?.name, property: 'first_message_id', value: first }]);
  await expectStateInSync(o.server, viewer, 'after deleting the creation message');
  assert.equal((await del(o.alice, first)).status, 200);
  streamEvents = await events(q, 'stream');
  assert.deepEqual(streamEvents, [{ type: 'stream', op: 'update', stream_id: id, name: streamEvents[0]?.name, property: 'first_message_id', value: second }]);
  await expectStateInSync(o.server, viewer, 'after deleting the first message');
  assert.equal((await del(o.alice, second)).status, 200);
  assert.deepEqual(
    (await events(q, 'stream')).map((e) => e.value),
    [null],
  );
  await expectStateInSync(o.server, viewer, 'after deleting every message');
  // What hung off the messages went with them.
  const left = await o.server.svc.db.selectFrom('user_messages').select('message_id').where('message_id', 'in', [creation, first, second]).execute();
  assert.deepEqual(left, []);
});
