// Sending messages (spec endpoint 1; digest 1.1).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { systemGroupIds } from '../../src/user_groups/group-setting.ts';

let server: TestServer;
let admin: Client;
let alice: Client;
let bob: Client;
let carol: Client;
let guest: Client;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com', fullName: 'Ada Admin' });
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  carol = await server.createUser({ email: 'carol@example.com', fullName: 'Carol Cole' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com', fullName: 'Gus Guest' });
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }], principals: [admin.id, alice.id, bob.id] });
});
after(() => server.close());

const send = (c: Client, params: Record<string, unknown>) => c.post('/messages', params);
const channelMessage = (c: Client, content: string, topic = 'general', to = 'Denmark') => send(c, { type: 'stream', to, topic, content });

async function stored(id: number, viewer: Client = admin) {
  const res = await viewer.get(`/messages/${id}`, { apply_markdown: false, allow_empty_topic_name: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.message;
}

test('every type alias and the `to` forms of channel messages', async () => {
  const channelId = (await admin.get('/get_stream_id', { stream: 'Denmark' })).body.stream_id;
  for (const [type, to] of [
    ['stream', 'Denmark'],
    ['channel', 'denmark'],
    ['stream', '"Denmark"'],
    ['channel', String(channelId)],
    ['stream', JSON.stringify(['Denmark'])],
    ['stream', JSON.stringify([channelId])],
  ]) {
    const res = await send(alice, { type, to, topic: 'aliases', content: `to ${to}` });
    assert.equal(res.status, 200, `${type} ${to}: ${JSON.stringify(res.body)}`);
    assert.equal(typeof res.body.id, 'number');
    const m = await stored(res.body.id);
    assert.equal(m.type, 'stream');
    assert.equal(m.stream_id, channelId);
    assert.equal(m.display_recipient, 'Denmark');
  }
  assert.equal((await send(alice, { type: 'broadcast', to: 'Denmark', topic: 't', content: 'x' })).body.msg, 'Invalid type');
  assert.equal(
    (await send(alice, { type: 'stream', to: JSON.stringify(['Denmark', 'Other']), topic: 't', content: 'x' })).body.msg,
    'Expected exactly one channel',
  );
  assert.equal((await send(alice, { type: 'stream', to: '{"a":1}', topic: 't', content: 'x' })).body.msg, 'Invalid data type for channel');
  assert.equal((await send(alice, { type: 'stream', topic: 't', content: 'x' })).body.msg, 'Missing channel');
});

test('unknown channels, by name and by id', async () => {
  const byName = await send(alice, { type: 'stream', to: 'Nowhere <b>', topic: 't', content: 'x' });
  assert.equal(byName.status, 400);
  assert.deepEqual(byName.body, {
    result: 'error',
    msg: "Channel 'Nowhere &lt;b&gt;' does not exist",
    code: 'STREAM_DOES_NOT_EXIST',
    stream: 'Nowhere <b>',
  });
  const byId = await send(alice, { type: 'stream', to: '9999', topic: 't', content: 'x' });
  assert.deepEqual(byId.body, { result: 'error', msg: "Channel with ID '9999' does not exist", code: 'STREAM_DOES_NOT_EXIST', stream_id: 9999 });
});

test('direct messages: the forms of `to`, one recipient_id per conversation both ways', async () => {
  const ab = await send(alice, { type: 'direct', to: JSON.stringify([bob.id]), content: 'hi bob' });
  const ba = await send(bob, { type: 'private', to: JSON.stringify(['alice@example.com']), content: 'hi alice' });
  const ba2 = await send(bob, { type: 'direct', to: 'alice@example.com', content: 'again' });
  const [m1, m2, m3] = [await stored(ab.body.id, alice), await stored(ba.body.id, alice), await stored(ba2.body.id, alice)];
  assert.equal(m1.type, 'private');
  assert.equal(m1.recipient_id, m2.recipient_id);
  assert.equal(m2.recipient_id, m3.recipient_id);
  assert.deepEqual(
    m1.display_recipient.map((u: any) => u.id),
    [alice.id, bob.id].sort((a, b) => a - b),
  );
  assert.equal(m1.subject, '');
  assert.equal('stream_id' in m1, false);
  // Group conversations: the same recipient whatever the order of `to`.
  const g1 = await send(alice, { type: 'direct', to: JSON.stringify([bob.id, carol.id]), content: 'group' });
  const g2 = await send(carol, { type: 'direct', to: 'bob@example.com,alice@example.com', content: 'group reply' });
  assert.equal((await stored(g1.body.id, carol)).recipient_id, (await stored(g2.body.id, carol)).recipient_id);
  assert.notEqual((await stored(g1.body.id, carol)).recipient_id, m1.recipient_id);
  // To oneself.
  const self = await send(alice, { type: 'direct', to: JSON.stringify([alice.id]), content: 'note to self' });
  assert.deepEqual(
    (await stored(self.body.id, alice)).display_recipient.map((u: any) => u.id),
    [alice.id],
  );
  const errors: [unknown, string][] = [
    [JSON.stringify([bob.id, 'carol@example.com']), 'Recipient lists may contain emails or user IDs, but not both.'],
    ['[]', 'Message must have recipients'],
    ['{"a":1}', 'Invalid data type for recipients'],
    [JSON.stringify([99999]), 'Invalid user ID 99999'],
    ['nobody@example.com', "Invalid email 'nobody@example.com'"],
  ];
  for (const [to, msg] of errors) assert.equal((await send(alice, { type: 'direct', to, content: 'x' })).body.msg, msg);
  assert.equal((await send(alice, { type: 'direct', content: 'x' })).body.code, 'REQUEST_VARIABLE_MISSING');
});

test('topics: required, stripped, empty-topic names, truncated at 60, printable', async () => {
  assert.equal((await send(alice, { type: 'stream', to: 'Denmark', content: 'x' })).body.msg, 'Missing topic');
  for (const topic of ['', '  ', '(no topic)', 'general chat']) {
    const res = await channelMessage(alice, 'empty topic', topic);
    assert.equal(res.status, 200);
    assert.equal((await stored(res.body.id)).subject, '');
    // Clients that do not allow the empty topic see its display name.
    assert.equal((await admin.get(`/messages/${res.body.id}`)).body.message.subject, 'general chat');
  }
  const long = 'x'.repeat(70);
  assert.equal((await stored((await channelMessage(alice, 'long', long)).body.id)).subject, `${'x'.repeat(57)}...`);
  assert.equal((await stored((await send(alice, { type: 'stream', to: 'Denmark', subject: ' spaced ', content: 'x' })).body.id)).subject, 'spaced');
  assert.equal((await channelMessage(alice, 'x', 'bad\u0007topic')).body.msg, 'Invalid character in topic, at position 4!');
  const both = await send(alice, { type: 'stream', to: 'Denmark', topic: 'a', subject: 'b', content: 'x' });
  assert.equal(both.body.code, 'REQUEST_CONFUSING_VAR');
});

test('topics_policy refusals', async () => {
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'strict' }] });
  const strict = (await admin.get('/get_stream_id', { stream: 'strict' })).body.stream_id;
  assert.equal((await admin.patch(`/streams/${strict}`, { topics_policy: 'disable_empty_topic' })).status, 200);
  // Created with the policy: a channel with its creation message in a named topic could not take it later.
  assert.equal((await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'chatty' }], topics_policy: 'empty_topic_only' })).status, 200);
  const chatty = (await admin.get('/get_stream_id', { stream: 'chatty' })).body.stream_id;
  assert.equal((await admin.get(`/streams/${chatty}`)).body.stream.topics_policy, 'empty_topic_only');
  assert.equal((await channelMessage(admin, 'x', '', 'strict')).body.msg, 'Sending messages to the general chat topic is not allowed in this channel.');
  assert.equal((await channelMessage(admin, 'x', 'named', 'strict')).status, 200);
  assert.equal((await channelMessage(admin, 'x', 'named', 'chatty')).body.msg, 'Only the general chat topic is allowed in this channel.');
  assert.equal((await channelMessage(admin, 'x', 'general chat', 'chatty')).status, 200);
});

test('content: required, no NUL, truncated at 10000', async () => {
  assert.equal((await channelMessage(alice, '   \n  ')).body.msg, 'Message must not be empty');
  assert.equal((await channelMessage(alice, 'a\u0000b')).body.msg, 'Message must not contain null bytes');
  const long = (await stored((await channelMessage(alice, 'y'.repeat(12000))).body.id)).content;
  assert.equal([...long].length, 10000);
  assert.ok(long.endsWith('\n[message truncated]'));
  assert.equal((await stored((await channelMessage(alice, '\n\n  indented\n\n  ')).body.id)).content, '  indented');
  assert.equal((await send(alice, { type: 'stream', to: 'Denmark', topic: 't' })).body.var_name, 'content');
});

test('who may post: private channels, archived channels, can_send_message_group', async () => {
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'hideout' }], invite_only: true });
  assert.equal((await channelMessage(alice, 'x', 't', 'hideout')).body.msg, "Not authorized to send to channel 'hideout'");
  assert.equal((await channelMessage(guest, 'x', 't', 'Denmark')).body.msg, "Not authorized to send to channel 'Denmark'");
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'announcements' }] });
  const id = (await admin.get('/get_stream_id', { stream: 'announcements' })).body.stream_id;
  const groups = await systemGroupIds(server.svc.db, 1);
  await admin.patch(`/streams/${id}`, { can_send_message_group: { new: groups['role:administrators'] } });
  assert.equal((await channelMessage(alice, 'x', 't', 'announcements')).body.msg, 'You do not have permission to post in this channel.');
  assert.equal((await channelMessage(admin, 'x', 't', 'announcements')).status, 200);
  await admin.delete(`/streams/${id}`);
  assert.equal((await channelMessage(admin, 'x', 't', 'announcements')).body.msg, "Not authorized to send to channel 'announcements'");
});

test('mentions set flags; wildcards need permission in large channels', async () => {
  const res = await channelMessage(alice, 'hey @**Bob Baker** and @_**Ada Admin**', 'mentions');
  const flagsOf = async (c: Client, id: number) => (await c.get(`/messages/${id}`)).body.message.flags;
  assert.ok((await flagsOf(bob, res.body.id)).includes('mentioned'));
  assert.ok(!(await flagsOf(admin, res.body.id)).includes('mentioned'), 'silent mentions do not notify');
  const all = await channelMessage(alice, '@**all** look', 'mentions');
  const bobFlags = await flagsOf(bob, all.body.id);
  assert.ok(bobFlags.includes('stream_wildcard_mentioned') && bobFlags.includes('wildcard_mentioned'));
  const topic = await channelMessage(bob, '@**topic** here', 'mentions');
  assert.ok((await flagsOf(alice, topic.body.id)).includes('topic_wildcard_mentioned'));
  assert.ok(!(await flagsOf(admin, topic.body.id)).includes('topic_wildcard_mentioned'), 'not a participant of the topic');

  // A channel of more than 15 subscribers.
  const crowd: Client[] = [];
  for (let i = 0; i < 16; i++) crowd.push(await server.createUser({ email: `crowd${i}@example.com` }));
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'crowded' }], principals: [admin.id, alice.id, ...crowd.map((c) => c.id)] });
  const refused = await channelMessage(alice, 'hi @**all**', 'big', 'crowded');
  assert.deepEqual(refused.body, {
    result: 'error',
    msg: 'You do not have permission to use channel wildcard mentions in this channel.',
    code: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED',
  });
  assert.equal((await channelMessage(admin, 'hi @**all**', 'big', 'crowded')).status, 200);
  for (const c of crowd) await channelMessage(c, 'joining the topic', 'busy', 'crowded');
  const topicRefused = await channelMessage(alice, 'hi @**topic**', 'busy', 'crowded');
  assert.equal(topicRefused.body.code, 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED');
  assert.equal(topicRefused.body.msg, 'You do not have permission to use topic wildcard mentions in this topic.');
});

test('read_by_sender and its heuristic', async () => {
  const flags = async (params: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const res = await alice.post('/messages', { type: 'stream', to: 'Denmark', topic: 'read', content: 'x', ...params }, headers);
    return (await alice.get(`/messages/${res.body.id}`)).body.message.flags;
  };
  assert.ok((await flags({ read_by_sender: true })).includes('read'));
  assert.ok(!(await flags({ read_by_sender: false }, { 'user-agent': 'ZulipMobile/27.0' })).includes('read'));
  assert.ok((await flags({}, { 'user-agent': 'ZulipMobile/27.0 (Android)' })).includes('read'));
  assert.ok(!(await flags({}, { 'user-agent': 'curl/8.0' })).includes('read'));
  const other = await alice.post('/messages', { type: 'stream', to: 'Denmark', topic: 'read', content: 'x' }, { 'user-agent': 'ZulipMobile/1' });
  assert.ok(!(await bob.get(`/messages/${other.body.id}`)).body.message.flags.includes('read'), 'recipients have it unread');
});

test('message events: recipients, public-channel followers, local echo', async () => {
  const register = async (c: Client, params: Record<string, unknown> = {}) =>
    (await c.post('/register', { event_types: ['message'], ...params })).body.queue_id;
  const queues = {
    alice: await register(alice),
    aliceOther: await register(alice),
    bob: await register(bob, { apply_markdown: true }),
    carol: await register(carol),
    carolAll: await register(carol, { all_public_streams: true }),
    carolNarrow: await register(carol, {
      narrow: [
        ['stream', 'Denmark'],
        ['topic', 'events'],
      ],
    }),
    bobNarrow: await register(bob, {
      narrow: [
        ['stream', 'Denmark'],
        ['topic', 'events'],
      ],
    }),
  };
  const res = await send(alice, { type: 'stream', to: 'Denmark', topic: 'events', content: 'hello @**Bob Baker**', queue_id: queues.alice, local_id: '1.01' });
  await channelMessage(alice, 'other topic', 'elsewhere');
  const events = async (c: Client, q: string) => (await c.get('/events', { queue_id: q, last_event_id: -1, dont_block: true })).body.events;
  const [mine] = await events(alice, queues.alice);
  assert.equal(mine.message.id, res.body.id);
  assert.equal(mine.local_message_id, '1.01');
  assert.equal((await events(alice, queues.aliceOther))[0].local_message_id, undefined);
  const [bobs] = await events(bob, queues.bob);
  assert.deepEqual(bobs.flags, ['mentioned']);
  assert.equal(bobs.message.content, '<p>hello <span class="user-mention" data-user-id="' + bob.id + '">@Bob Baker</span></p>');
  assert.equal(bobs.message.content_type, 'text/html');
  assert.equal(mine.message.content, 'hello @**Bob Baker**', 'register defaults to apply_markdown false');
  assert.equal(mine.message.content_type, 'text/x-markdown');
  assert.deepEqual(await events(carol, queues.carol), [], 'not a subscriber');
  const followed = await events(carol, queues.carolAll);
  assert.deepEqual(
    followed.map((e: any) => e.flags),
    [[], []],
  );
  assert.deepEqual(await events(carol, queues.carolNarrow), [], 'a narrow filters; it does not reach channels one is not in');
  assert.deepEqual(
    (await events(bob, queues.bobNarrow)).map((e: any) => e.message.id),
    [res.body.id],
    'the narrow keeps one topic',
  );
  assert.equal((await send(alice, { type: 'stream', to: 'Denmark', topic: 't', content: 'x', queue_id: queues.alice })).body.var_name, 'local_id');
  // Private channel messages never reach queues that follow public channels.
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'quiet-room' }], invite_only: true });
  await channelMessage(admin, 'secret', 't', 'quiet-room');
  assert.deepEqual(await events(carol, queues.carolAll), followed);
});

test('automatic topic follow and unmute (automatic_new_visibility_policy)', async () => {
  const first = await channelMessage(bob, 'starting a topic', 'brand new topic');
  assert.equal(first.body.automatic_new_visibility_policy, 3, 'initiating a topic follows it');
  const second = await channelMessage(alice, 'joining it', 'brand new topic');
  assert.equal('automatic_new_visibility_policy' in second.body, false);
  const again = await channelMessage(bob, 'still here', 'brand new topic');
  assert.equal('automatic_new_visibility_policy' in again.body, false, 'already followed');
  // In a muted channel, sending unmutes the topic.
  const denmark = (await admin.get('/get_stream_id', { stream: 'Denmark' })).body.stream_id;
  await carol.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }] });
  await carol.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: denmark, property: 'is_muted', value: true }] });
  const muted = await channelMessage(carol, 'in a muted channel', 'brand new topic');
  assert.equal(muted.body.automatic_new_visibility_policy, 2);
});

test('automatic policies read what each user stored: any case of the topic, senders who are not subscribed, mentioned users', async () => {
  const denmark = (await admin.get('/get_stream_id', { stream: 'Denmark' })).body.stream_id;
  const policy = async (userId: number, topic: string) =>
    (
      await server.svc.db
        .selectFrom('user_topics')
        .select('visibility_policy')
        .where('user_id', '=', userId)
        .where('channel_id', '=', denmark)
        .where('topic', '=', topic)
        .executeTakeFirst()
    )?.visibility_policy;
  // Carol unmuted "brand new topic" in her muted channel (the test above): the same topic in another case is unmuted already.
  const recased = await channelMessage(carol, 'shouting', 'BRAND NEW TOPIC');
  assert.equal('automatic_new_visibility_policy' in recased.body, false);
  // Dave is not subscribed: his own policy for the topic is read all the same.
  const dave = await server.createUser({ email: 'dave@example.com', fullName: 'Dave Dunn' });
  assert.equal((await dave.post('/user_topics', { stream_id: denmark, topic: 'Outside View', visibility_policy: 3 })).status, 200);
  const outside = await channelMessage(dave, 'from outside', 'outside view');
  assert.equal(outside.status, 200, JSON.stringify(outside.body));
  assert.equal('automatic_new_visibility_policy' in outside.body, false, 'already followed');
  assert.equal((await channelMessage(dave, 'from outside again', 'outside two')).body.automatic_new_visibility_policy, 3, 'initiated');
  // A mentioned subscriber follows the topic (automatically_follow_topics_where_mentioned); one who follows it already keeps it.
  await channelMessage(dave, 'hello @**Alice Able** and @**Bob Baker**', 'brand new topic');
  assert.equal(await policy(alice.id, 'brand new topic'), 3);
  assert.equal(await policy(bob.id, 'brand new topic'), 3);
});

test('direct message policies', async () => {
  const groups = await systemGroupIds(server.svc.db, 1);
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const set = async (settings: Record<string, number>) => {
    await server.svc.db
      .updateTable('realms')
      .set({ group_settings: JSON.stringify({ ...realm.group_settings, ...settings }) })
      .where('id', '=', 1)
      .execute();
    server.svc.credentials.clear();
  };
  try {
    await set({ direct_message_permission_group: groups['role:nobody'] });
    assert.equal(
      (await send(alice, { type: 'direct', to: JSON.stringify([bob.id]), content: 'x' })).body.msg,
      'Direct messages are disabled in this organization.',
    );
    assert.equal((await send(alice, { type: 'direct', to: JSON.stringify([alice.id]), content: 'x' })).status, 200, 'notes to self stay possible');
    await set({ direct_message_initiator_group: groups['role:administrators'] });
    assert.equal(
      (await send(carol, { type: 'direct', to: JSON.stringify([guest.id]), content: 'x' })).body.msg,
      'You do not have permission to initiate direct message conversations.',
    );
    assert.equal((await send(admin, { type: 'direct', to: JSON.stringify([guest.id]), content: 'x' })).status, 200);
    assert.equal((await send(guest, { type: 'direct', to: JSON.stringify([admin.id]), content: 'reply' })).status, 200, 'an existing conversation');
  } finally {
    await server.svc.db
      .updateTable('realms')
      .set({ group_settings: JSON.stringify(realm.group_settings) })
      .where('id', '=', 1)
      .execute();
    server.svc.credentials.clear();
  }
});

test('a refused send stores nothing', async () => {
  const before = await admin.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0 });
  const crowdRefusal = await channelMessage(alice, '@**all**', 'big', 'crowded');
  assert.equal(crowdRefusal.status, 400);
  const after = await admin.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0 });
  assert.deepEqual(
    after.body.messages.map((m: any) => m.id),
    before.body.messages.map((m: any) => m.id),
  );
});

test('ids no row can have and text with NUL name nothing: 400, not 500, and nothing stored', async () => {
  const before = (await admin.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0 })).body.messages[0].id;
  const huge = '99999999999';
  assert.deepEqual((await send(alice, { type: 'stream', to: huge, topic: 't', content: 'x' })).body, {
    result: 'error',
    msg: `Channel with ID '${huge}' does not exist`,
    code: 'STREAM_DOES_NOT_EXIST',
    stream_id: Number(huge),
  });
  assert.equal((await send(alice, { type: 'stream', to: 'Den\u0000mark', topic: 't', content: 'x' })).body.code, 'STREAM_DOES_NOT_EXIST');
  for (const [to, msg] of [
    [`[${huge}]`, `Invalid user ID ${huge}`],
    ['[-1]', 'Invalid user ID -1'],
    ['bob\u0000@example.com', "Invalid email 'bob\u0000@example.com'"],
  ]) {
    const res = await send(alice, { type: 'direct', to, content: 'x' });
    assert.equal(res.status, 400, to);
    assert.equal(res.body.msg, msg);
  }
  assert.equal((await admin.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0 })).body.messages[0].id, before);
});
