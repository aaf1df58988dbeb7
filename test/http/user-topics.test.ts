// Topic visibility policies: POST /user_topics (spec endpoint 4, digest 1.4), the
// deprecated PATCH /users/me/subscriptions/muted_topics (spec endpoint 6, digest
// 1.6), their events and register's `user_topics` and `muted_topics`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { ok, refused } from './user-groups.fixture.ts';
import { createChannel, eventsOf, openQueue, sendTo, subscribe, unsubscribe } from './topics.fixture.ts';

let server: TestServer;
let admin: Client;
let moderator: Client;
let alice: Client;
let bob: Client;
let guest: Client;
let publicId: number;
let secretId: number;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com' });
  moderator = await server.createUser({ role: ROLE.MODERATOR, email: 'mod@example.com' });
  alice = await server.createUser({ email: 'alice@example.com' });
  bob = await server.createUser({ email: 'bob@example.com' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com' });
  publicId = await createChannel(admin, 'Public', [alice, guest]);
  secretId = await createChannel(alice, 'Secret', [], { invite_only: true });
});
after(() => server.close());

const setPolicy = (c: Client, stream_id: number, topic: string, visibility_policy: number) => c.post('/user_topics', { stream_id, topic, visibility_policy });
const policiesOf = async (c: Client, params: Record<string, unknown> = {}) =>
  ok(await c.post('/register', { fetch_event_types: ['user_topic'], ...params })).user_topics as Record<string, unknown>[];
const mutedOf = async (c: Client) => ok(await c.post('/register', { fetch_event_types: ['muted_topics'] })).muted_topics as unknown[];
const now = () => Math.floor(Date.now() / 1000);

test('each policy is stored, sent as user_topic and listed by register; 0 removes it', async () => {
  const queue = await openQueue(alice, { event_types: ['user_topic'] });
  for (const policy of [1, 2, 3]) {
    const before = now();
    ok(await setPolicy(alice, publicId, 'no messages yet', policy));
    const [event] = await eventsOf(alice, queue).then((e) => e.slice(-1));
    assert.deepEqual(Object.keys(event).sort(), ['last_updated', 'stream_id', 'topic_name', 'type', 'visibility_policy']);
    assert.equal(event.type, 'user_topic');
    assert.equal(event.stream_id, publicId);
    assert.equal(event.topic_name, 'no messages yet');
    assert.equal(event.visibility_policy, policy);
    assert.ok(event.last_updated >= before && event.last_updated <= now());
    assert.deepEqual(
      await policiesOf(alice),
      [event].map(({ type: _t, ...e }) => e),
    );
  }
  ok(await setPolicy(alice, publicId, 'no messages yet', 0));
  const events = await eventsOf(alice, queue);
  assert.equal(events.length, 4);
  assert.equal(events[3].visibility_policy, 0);
  assert.deepEqual(await policiesOf(alice), []);
  // Removing what is not there still succeeds, and still tells the clients.
  ok(await setPolicy(alice, publicId, 'never set', 0));
  assert.equal((await eventsOf(alice, queue)).length, 5);
  // Other users hear nothing.
  assert.deepEqual(await policiesOf(bob), []);
});

test('parameters: missing, wrong types, unknown policies, long topics; a failed request changes nothing', async () => {
  ok(await setPolicy(alice, publicId, 'kept', 1));
  const before = await policiesOf(alice);
  const queue = await openQueue(alice, { event_types: ['user_topic', 'muted_topics'] });
  const missing = refused(await alice.post('/user_topics', { topic: 't', visibility_policy: 1 }), "Missing 'stream_id' argument", 'REQUEST_VARIABLE_MISSING');
  assert.equal(missing.var_name, 'stream_id');
  refused(await alice.post('/user_topics', { stream_id: publicId, visibility_policy: 1 }), "Missing 'topic' argument", 'REQUEST_VARIABLE_MISSING');
  refused(await alice.post('/user_topics', { stream_id: publicId, topic: 't' }), "Missing 'visibility_policy' argument", 'REQUEST_VARIABLE_MISSING');
  for (const bad of [4, -1, 100]) {
    refused(await setPolicy(alice, publicId, 'kept', bad), 'Invalid visibility_policy: Value error, Not in the list of possible values');
  }
  refused(await alice.post('/user_topics', { stream_id: publicId, topic: 'kept', visibility_policy: '"1"' }), 'visibility_policy is not an integer');
  refused(await alice.post('/user_topics', { stream_id: 'x', topic: 'kept', visibility_policy: 1 }), 'stream_id is not valid JSON');
  refused(await setPolicy(alice, publicId, 'x'.repeat(61), 1), 'topic is too long (limit: 60 characters)');
  refused(await setPolicy(alice, publicId, 'é'.repeat(61), 1), 'topic is too long (limit: 60 characters)');
  refused(await setPolicy(alice, 999999, 'kept', 1), 'Invalid channel ID');
  refused(await setPolicy(alice, 999999, 'kept', 0), 'Invalid channel ID');
  assert.deepEqual(await policiesOf(alice), before);
  assert.deepEqual(await eventsOf(alice, queue), []);
  // 60 characters (not code units) are allowed.
  ok(await setPolicy(alice, publicId, '😀'.repeat(60), 3));
  ok(await setPolicy(alice, publicId, '😀'.repeat(60), 0));
  ok(await setPolicy(alice, publicId, 'kept', 0));
});

test('who may set and remove policies, by role and channel', async () => {
  const owner = server.owner;
  const openId = await createChannel(admin, 'Open'); // public; only the admin subscribed
  const cases: [string, Client, number, boolean, boolean][] = [
    // who, channel, may set 1..3, may remove (0)
    ['guest, subscribed public', guest, publicId, true, true],
    ['guest, unsubscribed public', guest, openId, false, false],
    ['guest, private', guest, secretId, false, false],
    ['member, unsubscribed public', bob, openId, true, true],
    ['member, private not subscribed', bob, secretId, false, false],
    ['member, private subscribed', alice, secretId, true, true],
    ['moderator, unsubscribed public', moderator, openId, true, true],
    ['moderator, private not subscribed', moderator, secretId, false, false],
    // Administrators may know of private channels but not read them.
    ['administrator, private not subscribed', admin, secretId, false, true],
    ['owner, unsubscribed public', owner, publicId, true, true],
    ['owner, private not subscribed', owner, secretId, false, true],
  ];
  for (const [label, c, id, maySet, mayRemove] of cases) {
    for (const policy of [1, 2, 3]) {
      const res = await setPolicy(c, id, 'matrix', policy);
      if (maySet) ok(res);
      else refused(res, 'Invalid channel ID');
    }
    const res = await setPolicy(c, id, 'matrix', 0);
    if (mayRemove) ok(res);
    else refused(res, 'Invalid channel ID');
    assert.deepEqual(await policiesOf(c), [], label);
  }
});

test('policies can be removed after losing access to the channel, but not set', async () => {
  const carol = await server.createUser({ email: 'carol@example.com' });
  const name = 'Leaving';
  const id = await createChannel(alice, name, [carol], { invite_only: true });
  ok(await setPolicy(carol, id, 'mine', 1));
  await unsubscribe(admin, name, [carol]);
  refused(await setPolicy(carol, id, 'mine', 3), 'Invalid channel ID');
  ok(await setPolicy(carol, id, 'mine', 0));
  assert.deepEqual(await policiesOf(carol), []);
  // With nothing left there, the channel is unknown to them again.
  refused(await setPolicy(carol, id, 'mine', 0), 'Invalid channel ID');
});

test('topics are matched without regard to case; the newest spelling is kept', async () => {
  ok(await setPolicy(bob, publicId, 'Lunch', 1));
  ok(await setPolicy(bob, publicId, 'lunch', 3));
  const list = await policiesOf(bob);
  assert.equal(list.length, 1);
  assert.equal(list[0].topic_name, 'lunch');
  assert.equal(list[0].visibility_policy, 3);
  ok(await setPolicy(bob, publicId, 'LUNCH', 0));
  assert.deepEqual(await policiesOf(bob), []);
});

test('the empty topic: "general chat" names it; clients without empty_topic_name see that name', async () => {
  const plain = await openQueue(bob, { event_types: ['user_topic'] });
  const modern = await openQueue(bob, { event_types: ['user_topic'], client_capabilities: { notification_settings_null: false, empty_topic_name: true } });
  ok(await setPolicy(bob, publicId, 'general chat', 1));
  assert.equal((await eventsOf(bob, plain))[0].topic_name, 'general chat');
  assert.equal((await eventsOf(bob, modern))[0].topic_name, '');
  assert.equal((await policiesOf(bob))[0].topic_name, 'general chat');
  assert.equal((await policiesOf(bob, { client_capabilities: { notification_settings_null: false, empty_topic_name: true } }))[0].topic_name, '');
  assert.deepEqual(
    (await mutedOf(bob)).map((e: any) => e[1]),
    [''],
  );
  // The empty string itself names the same topic; surrounding spaces are not part of a topic.
  ok(await setPolicy(bob, publicId, '', 3));
  ok(await setPolicy(bob, publicId, '  general chat ', 0));
  assert.deepEqual(await policiesOf(bob), []);
});

test('the legacy muted_topics event and list', async () => {
  const dave = await server.createUser({ email: 'dave@example.com' });
  const legacy = await openQueue(dave, { event_types: ['muted_topics'] });
  const both = await openQueue(dave, { event_types: ['muted_topics', 'user_topic'] });
  const all = await openQueue(dave, { event_types: undefined });
  const before = now();
  ok(await setPolicy(dave, publicId, 'noise', 1));
  ok(await setPolicy(dave, publicId, 'fun', 3));
  const legacyEvents = await eventsOf(dave, legacy);
  assert.deepEqual(
    legacyEvents.map((e) => e.type),
    ['muted_topics', 'muted_topics'],
  );
  const [[name, topic, ts]] = legacyEvents[0].muted_topics;
  assert.deepEqual([name, topic], ['Public', 'noise']);
  assert.ok(ts >= before && ts <= now());
  // Following is not muting: the list is unchanged but sent again.
  assert.deepEqual(legacyEvents[1].muted_topics, legacyEvents[0].muted_topics);
  // A client that takes user_topic does not also get the legacy list.
  assert.deepEqual(
    (await eventsOf(dave, both)).map((e) => e.type),
    ['user_topic', 'user_topic'],
  );
  assert.deepEqual(
    (await eventsOf(dave, all)).filter((e) => ['user_topic', 'muted_topics'].includes(e.type)).map((e) => e.type),
    ['muted_topics', 'user_topic', 'muted_topics', 'user_topic'],
  );
  assert.deepEqual(await mutedOf(dave), legacyEvents[0].muted_topics);
});

test('PATCH muted_topics: by id or name, idempotent, the same events', async () => {
  const erin = await server.createUser({ email: 'erin@example.com' });
  await subscribe(admin, 'Public', [erin]);
  const queue = await openQueue(erin, { event_types: ['user_topic'] });
  ok(await erin.patch('/users/me/subscriptions/muted_topics', { stream_id: publicId, topic: 'Spam', op: 'add' }));
  ok(await erin.patch('/users/me/subscriptions/muted_topics', { stream: 'public', topic: 'spam', op: 'add' }));
  let list = await policiesOf(erin);
  assert.equal(list.length, 1);
  assert.deepEqual([list[0].stream_id, list[0].topic_name, list[0].visibility_policy], [publicId, 'spam', 1]);
  ok(await erin.patch('/users/me/subscriptions/muted_topics', { stream_id: publicId, topic: 'spam', op: 'remove' }));
  ok(await erin.patch('/users/me/subscriptions/muted_topics', { stream: 'Public', topic: 'spam', op: 'remove' }));
  assert.deepEqual(await policiesOf(erin), []);
  const events = await eventsOf(erin, queue);
  assert.deepEqual(
    events.map((e) => [e.type, e.topic_name, e.visibility_policy]),
    [
      ['user_topic', 'Spam', 1],
      ['user_topic', 'spam', 1],
      ['user_topic', 'spam', 0],
      ['user_topic', 'spam', 0],
    ],
  );
  // Un-muting a followed topic clears it.
  ok(await setPolicy(erin, publicId, 'followed', 3));
  ok(await erin.patch('/users/me/subscriptions/muted_topics', { stream_id: publicId, topic: 'followed', op: 'remove' }));
  list = await policiesOf(erin);
  assert.deepEqual(list, []);
});

test('PATCH muted_topics errors, and a failed request changes nothing', async () => {
  const path = '/users/me/subscriptions/muted_topics';
  ok(await setPolicy(bob, publicId, 'keep', 1));
  const before = await policiesOf(bob);
  const queue = await openQueue(bob, { event_types: ['user_topic', 'muted_topics'] });
  refused(await bob.patch(path, { topic: 't', op: 'add' }), "Missing 'stream_id' argument");
  const both = refused(
    await bob.patch(path, { stream_id: publicId, stream: 'Public', topic: 't', op: 'add' }),
    'Unsupported parameter combination: stream_id, stream',
  );
  assert.equal(both.parameters, 'stream_id, stream');
  refused(await bob.patch(path, { stream_id: publicId, op: 'add' }), "Missing 'topic' argument", 'REQUEST_VARIABLE_MISSING');
  refused(await bob.patch(path, { stream_id: publicId, topic: 't' }), "Missing 'op' argument", 'REQUEST_VARIABLE_MISSING');
  refused(await bob.patch(path, { stream_id: publicId, topic: 't', op: 'mute' }), 'Invalid op');
  refused(await bob.patch(path, { stream_id: publicId, topic: 'x'.repeat(61), op: 'add' }), 'topic is too long (limit: 60 characters)');
  refused(await bob.patch(path, { stream: 'Nowhere', topic: 't', op: 'add' }), "Invalid channel name 'Nowhere'");
  refused(await bob.patch(path, { stream: 'Secret', topic: 't', op: 'add' }), "Invalid channel name 'Secret'");
  refused(await bob.patch(path, { stream_id: secretId, topic: 't', op: 'add' }), 'Invalid channel ID');
  refused(await bob.patch(path, { stream_id: 999999, topic: 't', op: 'add' }), 'Invalid channel ID');
  refused(await bob.patch(path, { stream_id: 999999, topic: 'keep', op: 'remove' }), 'Topic is not muted');
  refused(await bob.patch(path, { stream: 'Nowhere', topic: 'keep', op: 'remove' }), 'Topic is not muted');
  refused(await bob.patch(path, { stream: 'Secret', topic: 'keep', op: 'remove' }), 'Topic is not muted');
  assert.deepEqual(await policiesOf(bob), before);
  assert.deepEqual(await eventsOf(bob, queue), []);
  ok(await setPolicy(bob, publicId, 'keep', 0));
});

test('register stays in sync: settings, renames, and sends that follow topics automatically', async () => {
  const frank = await server.createUser({ email: 'frank@example.com' });
  await subscribe(admin, 'Public', [frank]);
  const registrations: Record<string, unknown>[] = [
    {},
    { client_capabilities: { notification_settings_null: false, empty_topic_name: true } },
    { fetch_event_types: ['user_topic', 'muted_topics'], event_types: ['user_topic', 'muted_topics', 'stream'] },
    { fetch_event_types: ['muted_topics'], event_types: ['muted_topics', 'stream'] },
    // The legacy list followed through user_topic events (channel names come from stream events).
    { fetch_event_types: ['user_topic', 'muted_topics'], event_types: ['user_topic', 'stream'] },
  ];
  const viewers = await Promise.all(registrations.map((params) => registerViewer(server, frank, params)));
  const check = async (label: string) => {
    for (const [i, viewer] of viewers.entries()) await expectStateInSync(server, viewer, `${label} (registration ${i})`);
  };
  const renamed = await createChannel(frank, 'Frank channel');
  ok(await setPolicy(frank, publicId, 'muted one', 1));
  ok(await setPolicy(frank, renamed, 'MUTED two', 1));
  ok(await setPolicy(frank, publicId, 'general chat', 1));
  await check('after muting');
  ok(await frank.patch(`/streams/${renamed}`, { new_name: 'Frank renamed' }));
  await check('after a rename');
  // Starting a topic follows it (the default automatically_follow_topics_policy).
  await sendTo(frank, 'Public', 'started by frank');
  await sendTo(frank, 'Frank renamed', 'muted TWO');
  await check('after sends');
  assert.ok((await policiesOf(frank)).some((e) => e.topic_name === 'started by frank' && e.visibility_policy === 3));
  ok(await setPolicy(frank, renamed, 'muted two', 0));
  ok(await frank.patch('/users/me/subscriptions/muted_topics', { stream: 'Frank renamed', topic: 'again', op: 'add' }));
  ok(await setPolicy(frank, publicId, '', 2));
  await check('after changes');
});

test('a channel id no row can have is an invalid channel; a topic with NUL an invalid character', async () => {
  const huge = 99_999_999_999;
  assert.equal((await alice.post('/user_topics', { stream_id: huge, topic: 't', visibility_policy: 1 })).body.msg, 'Invalid channel ID');
  assert.equal((await alice.patch('/users/me/subscriptions/muted_topics', { stream_id: huge, topic: 't', op: 'add' })).body.msg, 'Invalid channel ID');
  const nul = await alice.post('/user_topics', { stream_id: publicId, topic: 'a\u0000b', visibility_policy: 1 });
  assert.deepEqual(nul.body, { result: 'error', msg: 'Invalid character in topic, at position 2!', code: 'BAD_REQUEST' });
  assert.equal((await alice.patch('/users/me/subscriptions/muted_topics', { stream: 'a\u0000', topic: 't', op: 'add' })).status, 400);
  assert.equal((await alice.get(`/users/me/${huge}/topics`)).status, 404);
  const state = await alice.post('/register', { fetch_event_types: ['user_topic'] });
  assert.ok(!state.body.user_topics.some((t: any) => t.topic_name.includes('\u0000')));
});
