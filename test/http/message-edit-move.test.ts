// Moving messages: topics with each propagate_mode, resolving, moves between
// channels and who may read what afterwards, the move permissions and time
// limits (digest section 2 "Edit / move message", 3.3 `update_message`).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { registerViewer, expectStateInSync } from '../support/state.ts';
import { FLAG_BITS } from '../../src/messages/flags/flags.ts';
import {
  age,
  channel,
  events,
  everyone,
  expectError,
  fetch,
  flagBits,
  listen,
  row,
  send,
  setChannelPermission,
  startOrg,
  withPermissions,
  withSettings,
  type Org,
} from './message-edit.fixture.ts';
import type { Client } from '../support/server.ts';

let o: Org;
let denmark: number;
before(async () => {
  o = await startOrg();
  denmark = await channel(o, [o.admin, o.moderator, o.alice, o.bob, o.carol, o.guest], {}, 'Denmark');
});
after(() => o.server.close());

const edit = (c: Client, id: number, params: Record<string, unknown>) => c.patch(`/messages/${id}`, params);
const topicsOf = async (ids: number[]) => Promise.all(ids.map(async (id) => (await row(o, id))!.topic));

async function topicOf4(topic: string, channelId = denmark): Promise<number[]> {
  return [
    await send(o.alice, channelId, topic, 'one'),
    await send(o.bob, channelId, topic.toUpperCase(), 'two'),
    await send(o.alice, channelId, topic, 'three'),
    await send(o.bob, channelId, topic, 'four'),
  ];
}

test('topic moves: change_one, change_later, change_all; history and last_moved_timestamp', async () => {
  const ids = await topicOf4('plans');
  const elsewhere = await send(o.alice, denmark, 'other', 'not in the topic');
  assert.equal((await edit(o.carol, ids[1], { topic: 'one only' })).status, 200);
  assert.deepEqual(await topicsOf(ids), ['plans', 'one only', 'plans', 'plans']);
  const moved = await fetch(o.alice, ids[1]);
  assert.equal(typeof moved.last_moved_timestamp, 'number');
  assert.equal(moved.last_edit_timestamp, undefined, 'moves are not content edits');
  assert.deepEqual(moved.edit_history, [{ user_id: o.carol.id, timestamp: moved.last_moved_timestamp, prev_topic: 'PLANS', topic: 'one only' }]);

  assert.equal((await edit(o.carol, ids[2], { topic: 'later', propagate_mode: 'change_later' })).status, 200);
  assert.deepEqual(await topicsOf(ids), ['plans', 'one only', 'later', 'later']);
  assert.deepEqual(
    (await fetch(o.alice, ids[3])).edit_history.map((e: any) => [e.prev_topic, e.topic]),
    [['plans', 'later']],
  );

  // change_all takes every message of the topic, whatever the case of its name, wherever the edited one sits.
  await edit(o.carol, ids[1], { topic: 'PLANS' });
  assert.equal((await edit(o.carol, ids[0], { topic: 'all of it', propagate_mode: 'change_all' })).status, 200);
  assert.deepEqual(await topicsOf(ids), ['all of it', 'all of it', 'later', 'later']);
  assert.equal((await row(o, elsewhere))!.topic, 'other');
  const history = (await fetch(o.alice, ids[1])).edit_history.map((e: any) => [e.prev_topic, e.topic]);
  assert.deepEqual(history, [
    ['PLANS', 'all of it'],
    ['one only', 'PLANS'],
    ['PLANS', 'one only'],
  ]);
});

test('update_message for a topic move: every moved id, the move fields, to everyone in the channel', async () => {
  const ids = await topicOf4('events');
  const viewer = await registerViewer(o.server, o.carol);
  const queues = { bob: await listen(o.bob), guest: await listen(o.guest), outsider: await listen(await o.server.createUser()) };
  const linkifier = await o.owner.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://trac.example.com/ticket/{id}' });
  assert.equal(linkifier.status, 200, JSON.stringify(linkifier.body));
  await edit(o.alice, ids[2], { topic: 'moved events #42', propagate_mode: 'change_later' });
  const [event] = await events(queues.bob, 'update_message');
  const m = await fetch(o.bob, ids[2]);
  assert.deepEqual(event, {
    type: 'update_message',
    user_id: o.alice.id,
    edit_timestamp: m.last_moved_timestamp,
    message_id: ids[2],
    message_ids: [ids[2], ids[3]],
    rendering_only: false,
    flags: m.flags,
    stream_name: 'Denmark',
    stream_id: denmark,
    propagate_mode: 'change_later',
    orig_subject: 'events',
    subject: 'moved events #42',
    topic_links: [{ text: '#42', url: 'https://trac.example.com/ticket/42' }],
  });
  assert.equal((await events(queues.guest, 'update_message')).length, 1);
  await expectStateInSync(o.server, viewer, 'unread messages in a moved topic');
  assert.deepEqual(await events(queues.outsider, 'update_message'), []);
});

test('who may move topics: the organization setting, the channel setting, channel administrators; senders have no exception', async () => {
  const id = await send(o.alice, denmark, 'permissions', 'mine');
  // By default everyone may, guests included.
  for (const [role, c] of Object.entries(everyone(o))) {
    const res = await edit(c, id, { topic: `moved by ${role}` });
    assert.equal(res.status, 200, `${role}: ${JSON.stringify(res.body)}`);
  }
  await withPermissions(o, { can_move_messages_between_topics_group: 'role:moderators' }, async () => {
    const before = (await row(o, id))!;
    for (const c of [o.alice, o.bob, o.guest]) expectError(await edit(c, id, { topic: 'refused' }), "You don't have permission to edit this message");
    assert.deepEqual(await row(o, id), before, 'refusals change nothing');
    for (const c of [o.moderator, o.admin, o.owner]) assert.equal((await edit(c, id, { topic: `by ${c.id}` })).status, 200);
    // The channel's own setting.
    const channelId = await channel(o, [o.alice, o.bob, o.guest]);
    const there = await send(o.bob, channelId, 'local', 'x');
    expectError(await edit(o.alice, there, { topic: 'no' }), "You don't have permission to edit this message");
    await setChannelPermission(o, channelId, 'can_move_messages_within_channel_group', 'role:members');
    assert.equal((await edit(o.alice, there, { topic: 'yes' })).status, 200);
    expectError(await edit(o.guest, there, { topic: 'guests no' }), "You don't have permission to edit this message");
    // Channel administrators may.
    const administered = await channel(o, [o.carol]);
    const theirs = await send(o.owner, administered, 'admin', 'x');
    expectError(await edit(o.carol, theirs, { topic: 'no' }), "You don't have permission to edit this message");
    await setChannelPermission(o, administered, 'can_administer_channel_group', 'role:members');
    assert.equal((await edit(o.carol, theirs, { topic: 'administered' })).status, 200);
  });
});

test('the time limit for topic moves spares moderators; change_all past it is refused with the counts', async () => {
  await withSettings(o, { move_messages_within_stream_limit_seconds: 3600 }, async () => {
    const ids = await topicOf4('limits');
    await age(o, [ids[0], ids[1]], 3700);
    expectError(await edit(o.carol, ids[0], { topic: 'too late' }), "The time limit for editing this message's topic has passed.");
    expectError(await edit(o.alice, ids[0], { topic: 'too late' }), "The time limit for editing this message's topic has passed.");
    const res = await edit(o.carol, ids[3], { topic: 'whole topic', propagate_mode: 'change_all' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, {
      result: 'error',
      msg: 'You only have permission to move the 2/4 most recent messages in this topic.',
      code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
      first_message_id_allowed_to_move: ids[2],
      total_messages_in_topic: 4,
      total_messages_allowed_to_move: 2,
    });
    assert.deepEqual(await topicsOf(ids), ['limits', 'LIMITS', 'limits', 'limits']);
    // What the error suggests: change_later from the first movable message.
    assert.equal((await edit(o.carol, ids[2], { topic: 'recent part', propagate_mode: 'change_later' })).status, 200);
    assert.deepEqual(await topicsOf(ids), ['limits', 'LIMITS', 'recent part', 'recent part']);
    // Moderators and above are not limited.
    for (const c of [o.moderator, o.admin]) assert.equal((await edit(c, ids[0], { topic: `old by ${c.id}`, propagate_mode: 'change_all' })).status, 200);
    assert.deepEqual(await topicsOf(ids), [`old by ${o.admin.id}`, `old by ${o.admin.id}`, 'recent part', 'recent part']);
  });
});

test('resolving and unresolving: can_resolve_topics_group, no time limit, not a move', async () => {
  const ids = await topicOf4('bug');
  await age(o, ids, 8 * 86400);
  await withPermissions(o, { can_move_messages_between_topics_group: 'role:nobody' }, async () => {
    assert.equal((await edit(o.carol, ids[3], { topic: '✔ bug', propagate_mode: 'change_all' })).status, 200);
  });
  assert.deepEqual(await topicsOf(ids), ['✔ bug', '✔ bug', '✔ bug', '✔ bug']);
  const resolved = await fetch(o.alice, ids[0]);
  assert.equal(resolved.last_moved_timestamp, undefined, 'resolving is not a move');
  assert.deepEqual(
    resolved.edit_history.map((e: any) => [e.prev_topic, e.topic]),
    [['bug', '✔ bug']],
  );
  await withPermissions(o, { can_resolve_topics_group: 'role:moderators' }, async () => {
    expectError(await edit(o.carol, ids[0], { topic: 'bug', propagate_mode: 'change_all' }), "You don't have permission to resolve topics in this channel.");
    assert.deepEqual(await topicsOf(ids), ['✔ bug', '✔ bug', '✔ bug', '✔ bug']);
    await setChannelPermission(o, denmark, 'can_resolve_topics_group', 'role:members');
    try {
      assert.equal((await edit(o.carol, ids[0], { topic: 'bug', propagate_mode: 'change_all' })).status, 200);
    } finally {
      await setChannelPermission(o, denmark, 'can_resolve_topics_group', 'role:nobody');
    }
  });
  assert.deepEqual(await topicsOf(ids), ['bug', 'bug', 'bug', 'bug']);
  assert.equal((await fetch(o.alice, ids[0])).last_moved_timestamp, undefined);
  // Renaming while resolving is a move like any other: it needs the move permission and counts as one.
  await withPermissions(o, { can_move_messages_between_topics_group: 'role:nobody' }, async () => {
    expectError(await edit(o.carol, ids[0], { topic: '✔ bug fixed' }), "You don't have permission to edit this message");
  });
  assert.equal((await edit(o.moderator, ids[0], { topic: '✔ bug fixed' })).status, 200);
  assert.equal(typeof (await fetch(o.alice, ids[0])).last_moved_timestamp, 'number');
});

test('moves between channels: permissions, the destination, the time limit', async () => {
  const target = await channel(o, [o.admin, o.moderator, o.alice, o.bob, o.guest]);
  const ids = [await send(o.bob, denmark, 'travel', 'a'), await send(o.bob, denmark, 'travel', 'b')];
  // Members may by default (role:members); guests may not.
  expectError(await edit(o.guest, ids[0], { stream_id: target }), "You don't have permission to move this message");
  await withPermissions(o, { can_move_messages_between_channels_group: 'role:moderators' }, async () => {
    expectError(await edit(o.alice, ids[0], { stream_id: target }), "You don't have permission to move this message");
    await setChannelPermission(o, denmark, 'can_move_messages_out_of_channel_group', 'role:members');
    try {
      assert.equal((await edit(o.alice, ids[0], { stream_id: target })).status, 200);
    } finally {
      await setChannelPermission(o, denmark, 'can_move_messages_out_of_channel_group', 'role:nobody');
    }
  });
  // Organization administrators always may; moderators only through the setting.
  await withPermissions(o, { can_move_messages_between_channels_group: 'role:nobody' }, async () => {
    const third = await send(o.bob, denmark, 'travel', 'c');
    expectError(await edit(o.moderator, third, { stream_id: target }), "You don't have permission to move this message");
    assert.equal((await edit(o.admin, third, { stream_id: target })).status, 200);
  });
  const m = await fetch(o.alice, ids[0]);
  assert.equal(m.stream_id, target);
  assert.equal(m.subject, 'travel');
  assert.deepEqual(m.edit_history, [{ user_id: o.alice.id, timestamp: m.last_moved_timestamp, prev_stream: denmark, stream: target }]);
  // The destination: one the mover can post to and read, not archived.
  const closed = await channel(o, [o.alice, o.bob]);
  await setChannelPermission(o, closed, 'can_send_message_group', 'role:administrators');
  expectError(await edit(o.alice, ids[1], { stream_id: closed }), 'You do not have permission to post in this channel.');
  const secret = await channel(o, [o.carol], { invite_only: true });
  expectError(await edit(o.alice, ids[1], { stream_id: secret }), 'Invalid channel ID');
  expectError(await edit(o.alice, ids[1], { stream_id: 999_999 }), 'Invalid channel ID');
  const archived = await channel(o, [o.alice]);
  await o.owner.delete(`/streams/${archived}`);
  expectError(await edit(o.alice, ids[1], { stream_id: archived }), 'Invalid channel ID');
  // Messages in an archived channel cannot be changed at all.
  const frozen = await channel(o, [o.alice]);
  const inFrozen = await send(o.alice, frozen, 'x', 'frozen');
  await o.owner.delete(`/streams/${frozen}`);
  expectError(await edit(o.alice, inFrozen, { content: 'thawed' }), 'Invalid message(s)');
  // The destination's topics policy.
  const named = await channel(o, [o.alice], { topics_policy: 'disable_empty_topic' });
  const general = await send(o.moderator, denmark, '', 'general words');
  expectError(await edit(o.alice, general, { stream_id: named }), 'Sending messages to the general chat topic is not allowed in this channel.');
  // The time limit, from which moderators are spared.
  await withSettings(o, { move_messages_between_streams_limit_seconds: 3600 }, async () => {
    await age(o, [ids[1]], 4000);
    expectError(await edit(o.alice, ids[1], { stream_id: target }), "The time limit for editing this message's channel has passed");
    assert.equal((await edit(o.moderator, ids[1], { stream_id: target, topic: 'moved and renamed' })).status, 200);
  });
  const both = await fetch(o.alice, ids[1]);
  assert.deepEqual(both.edit_history, [
    { user_id: o.moderator.id, timestamp: both.last_moved_timestamp, prev_stream: denmark, stream: target, prev_topic: 'travel', topic: 'moved and renamed' },
  ]);
});

test('a move to a private channel: who can no longer read loses the messages, its subscribers get them', async () => {
  const from = await channel(o, [o.alice, o.bob, o.carol, o.guest]);
  const vault = await channel(o, [o.alice, o.admin], { invite_only: true, history_public_to_subscribers: false });
  const ids = [await send(o.bob, from, 'plan', 'step one'), await send(o.carol, from, 'plan', 'step two @**Alice Able**')];
  const queues = {
    alice: await listen(o.alice),
    bob: await listen(o.bob, { client_capabilities: JSON.stringify({ notification_settings_null: false, bulk_message_deletion: true }) }),
    bobLegacy: await listen(o.bob),
    admin: await listen(o.admin),
    moderator: await listen(o.moderator, { all_public_streams: true }),
  };
  const viewers = [await registerViewer(o.server, o.alice), await registerViewer(o.server, o.bob)];
  const res = await edit(o.alice, ids[1], { stream_id: vault, topic: 'vaulted', propagate_mode: 'change_all' });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  for (const viewer of viewers) await expectStateInSync(o.server, viewer, `${viewer.client.email} after the move to a private channel`);
  for (const c of [o.bob, o.carol, o.guest]) {
    for (const id of ids) {
      expectError(await c.get(`/messages/${id}`), 'Invalid message(s)');
      assert.equal(await flagBits(o, c, id), undefined);
    }
  }
  const lost = { type: 'delete_message', message_ids: ids, message_type: 'stream', stream_id: from, topic: 'plan' };
  const bobs = await events(queues.bob);
  assert.deepEqual(
    bobs.filter((e) => e.type === 'delete_message'),
    [lost],
  );
  assert.deepEqual(
    await events(queues.bobLegacy, 'delete_message'),
    ids.map((message_id) => ({ type: 'delete_message', message_id, message_type: 'stream', stream_id: from, topic: 'plan' })),
  );
  assert.deepEqual(
    bobs.filter((e) => e.type === 'update_message'),
    [],
    'nothing more about messages he cannot read',
  );
  // Bob followed the topic he started; a preference in a channel he cannot read goes away.
  assert.deepEqual(
    bobs.filter((e) => e.type === 'user_topic').map((e) => [e.stream_id, e.topic_name, e.visibility_policy]),
    [[from, 'plan', 0]],
  );
  // The vault's history is protected: its subscribers get copies (read), and hear of the move.
  assert.equal(await flagBits(o, o.admin, ids[0]), FLAG_BITS.read);
  const [adminEvent] = await events(queues.admin, 'update_message');
  assert.deepEqual(adminEvent.message_ids, ids);
  assert.deepEqual(adminEvent.flags, ['read']);
  assert.equal(adminEvent.new_stream_id, vault);
  assert.equal(adminEvent.orig_subject, 'plan');
  assert.equal(adminEvent.subject, 'vaulted');
  assert.equal(adminEvent.stream_id, from);
  assert.equal(adminEvent.propagate_mode, 'change_all');
  const [aliceEvent] = await events(queues.alice, 'update_message');
  assert.ok(aliceEvent.flags.includes('mentioned'), 'the mover keeps their own flags');
  assert.ok((await flagBits(o, o.alice, ids[1]))! & FLAG_BITS.mentioned);
  assert.deepEqual(
    (await events(queues.moderator)).filter((e) => e.type !== 'stream'),
    [],
    'followers of public channels do not hear of private ones',
  );
  assert.equal((await fetch(o.admin, ids[1])).stream_id, vault);
});

test('a move to a public channel: members keep their copies, guests outside it lose theirs; shared history needs no copies', async () => {
  const vault = await channel(o, [o.alice, o.bob, o.guest], { invite_only: true });
  const open = await channel(o, [o.alice, o.carol]);
  const id = await send(o.bob, vault, 'news', 'going public');
  const guestQueue = await listen(o.guest);
  assert.equal((await edit(o.alice, id, { stream_id: open })).status, 200);
  assert.equal((await fetch(o.bob, id)).stream_id, open, 'bob keeps his copy');
  assert.notEqual(await flagBits(o, o.bob, id), undefined);
  expectError(await o.guest.get(`/messages/${id}`), 'Invalid message(s)');
  assert.equal((await events(guestQueue, 'delete_message')).length, 1);
  // Carol, subscribed to the destination, reads it as history.
  assert.equal(await flagBits(o, o.carol, id), undefined);
  assert.deepEqual((await fetch(o.carol, id)).flags, ['read', 'historical']);
});

test('topic preferences follow a whole topic; a partial move lets its sender follow the new topic', async () => {
  const trips = await channel(o, [o.alice, o.bob, o.carol]);
  const ids = await topicOf4('trip', trips);
  await o.bob.post('/user_topics', { stream_id: trips, topic: 'trip', visibility_policy: 3 });
  await o.carol.post('/user_topics', { stream_id: trips, topic: 'trip', visibility_policy: 1 });
  await o.carol.post('/user_topics', { stream_id: trips, topic: 'journey', visibility_policy: 2 });
  const existing = await send(o.alice, trips, 'journey', 'already here');
  const bobQueue = await listen(o.bob);
  const viewers = [await registerViewer(o.server, o.bob), await registerViewer(o.server, o.carol)];
  const policies = async (c: Client) =>
    (
      await o.server.svc.db
        .selectFrom('user_topics')
        .select(['topic', 'visibility_policy'])
        .where('user_id', '=', c.id)
        .where('channel_id', '=', trips)
        .orderBy('topic')
        .execute()
    ).map((r) => [r.topic, r.visibility_policy]);
  assert.equal((await edit(o.alice, ids[0], { topic: 'journey', propagate_mode: 'change_all' })).status, 200);
  assert.deepEqual(await policies(o.bob), [['journey', 3]]);
  // Carol muted the old topic and unmuted the one it joined: the more visible wins.
  assert.deepEqual(await policies(o.carol), [['journey', 2]]);
  for (const viewer of viewers) await expectStateInSync(o.server, viewer, `${viewer.client.email} after a whole topic moved`);
  const bobEvents = await events(bobQueue, 'user_topic');
  assert.deepEqual(
    bobEvents.map((e) => [e.topic_name, e.visibility_policy]),
    [
      ['trip', 0],
      ['journey', 3],
    ],
  );
  assert.ok(existing);
  // A single message into a new topic: its sender (who follows topics they start) follows it.
  await o.server.svc.db.deleteFrom('user_topics').where('user_id', '=', o.alice.id).execute();
  await edit(o.bob, ids[2], { topic: 'a fresh start' });
  assert.deepEqual(await policies(o.alice), [['a fresh start', 3]]);
});

test('first_message_id follows moves; register stays in sync', async () => {
  const streams = async () =>
    Object.fromEntries(((await o.bob.get('/users/me/subscriptions')).body.subscriptions as any[]).map((s) => [s.stream_id, s.first_message_id]));
  const a = await channel(o, [o.alice, o.bob]);
  // Without Notification Bot's creation message, Alice's messages are the first of `a`.
  assert.equal((await o.owner.delete(`/messages/${(await streams())[a]}`)).status, 200);
  assert.equal((await streams())[a], null);
  const viewer = await registerViewer(o.server, o.bob);
  const ids = [await send(o.alice, a, 'first', 'one'), await send(o.alice, a, 'first', 'two')];
  // `b` is created after them: its creation message is newer than what moves in.
  const b = await channel(o, [o.alice, o.bob]);
  const bCreation = (await streams())[b];
  assert.ok(bCreation > ids[1]);
  await expectStateInSync(o.server, viewer, 'after sending');
  await edit(o.alice, ids[0], { stream_id: b });
  assert.equal((await streams())[a], ids[1]);
  assert.equal((await streams())[b], ids[0]);
  await expectStateInSync(o.server, viewer, 'after moving the first message');
  // The rename's breadcrumb ("This topic was moved here") is in the topic, and leaves with it.
  await edit(o.alice, ids[1], { topic: 'renamed', propagate_mode: 'change_all' });
  await edit(o.alice, ids[1], { stream_id: b, propagate_mode: 'change_all' });
  assert.equal((await streams())[a], null);
  await expectStateInSync(o.server, viewer, 'after emptying a channel');
});

test('empty_topic_only asks whether a channel has named topics (PATCH /streams)', async () => {
  const id = await channel(o, [o.alice]);
  const db = o.server.svc.db;
  const policy = async (value: string, channelId = id) => {
    const before =
      (
        await db
          .selectFrom('messages')
          .select((eb) => eb.fn.max<number>('id').as('id'))
          .executeTakeFirstOrThrow()
      ).id ?? 0;
    const res = await o.owner.patch(`/streams/${channelId}`, { topics_policy: value });
    // A change is told in the channel (Notification Bot): taken away again, so that only this test's messages count.
    for (const m of await db.selectFrom('messages').select('id').where('channel_id', '=', channelId).where('id', '>', before).execute()) {
      assert.equal((await o.owner.delete(`/messages/${m.id}`)).status, 200);
    }
    return res;
  };
  const namedTopics = 'To enable this configuration, all messages in this channel must be in the general chat topic. Consider renaming or deleting topics.';
  // A new channel opens with Notification Bot's message in the "channel events" topic.
  const firstOf = async (channelId: number) => (await o.alice.get(`/streams/${channelId}`)).body.stream.first_message_id as number;
  const creation = await firstOf(id);
  assert.equal((await fetch(o.alice, creation)).subject, 'channel events');
  expectError(await policy('empty_topic_only'), namedTopics);
  assert.equal((await o.owner.delete(`/messages/${creation}`)).status, 200);
  assert.equal((await policy('empty_topic_only')).status, 200, 'no messages at all');
  assert.equal((await policy('inherit')).status, 200);
  const general = await send(o.alice, id, '', 'in general chat');
  assert.equal((await policy('empty_topic_only')).status, 200, 'only the empty topic');
  assert.equal((await policy('inherit')).status, 200);
  // Without Notification Bot's breadcrumbs, which would stay in the topics behind.
  await edit(o.alice, general, { topic: 'named', send_notification_to_new_thread: false });
  expectError(await policy('empty_topic_only'), namedTopics);
  await edit(o.alice, general, { topic: '', send_notification_to_new_thread: false });
  assert.equal((await policy('empty_topic_only')).status, 200, 'renamed back');
  // In such a channel, messages cannot move to a named topic.
  expectError(await edit(o.alice, general, { topic: 'named again' }), 'Only the general chat topic is allowed in this channel.');
  // A channel created with the policy gets its creation message in the general chat topic.
  const born = await channel(o, [o.alice], { topics_policy: 'empty_topic_only' });
  assert.equal((await fetch(o.alice, await firstOf(born))).subject, '');
  assert.equal((await policy('inherit', born)).status, 200);
  assert.equal((await policy('empty_topic_only', born)).status, 200, 'its creation message is in the general chat topic');
});
