// Personal message flags by id (digest 1.27, 1.12 errors) and their events.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE, type Role } from '../../src/users/roles.ts';
import { channelId as idOf, drain, queueFor, sendDm, sendTo, subscribe } from './message-flags.fixture.ts';

let server: TestServer;
let admin: Client;
let alice: Client;
let bob: Client;
let carol: Client;
let guest: Client;
let denmark: number;
let verona: number;
let secret: number;

before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com', fullName: 'Ada Admin' });
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  carol = await server.createUser({ email: 'carol@example.com', fullName: 'Carol Cole' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com', fullName: 'Gus Guest' });
  await subscribe(admin, 'Denmark', [admin, alice, bob, guest]);
  // Verona: public, alice never subscribed (its history is public to her).
  await subscribe(admin, 'Verona', [admin, bob]);
  await subscribe(admin, 'Secret', [admin, bob], { invite_only: true });
  [denmark, verona, secret] = [await idOf(admin, 'Denmark'), await idOf(admin, 'Verona'), await idOf(admin, 'Secret')];
});
after(() => server.close());

async function flagsOf(c: Client, id: number): Promise<string[]> {
  const res = await c.get(`/messages/${id}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.message.flags;
}

const flag = (c: Client, messages: number[], op: string, name: string) => c.post('/messages/flags', { messages, op, flag: name });

test('flag and operation errors, in the reference order and words', async () => {
  const id = await sendTo(bob, 'Denmark', 'errors');
  const cases: [string, string, string][] = [
    ['add', 'bogus', "Invalid flag: 'bogus'"],
    ['bogus', 'bogus', "Invalid flag: 'bogus'"],
    ['add', 'wildcard_mentioned', "Invalid flag: 'wildcard_mentioned'"],
    ['add', 'mentioned', "Flag not editable: 'mentioned'"],
    ['remove', 'historical', "Flag not editable: 'historical'"],
    ['add', 'has_alert_word', "Flag not editable: 'has_alert_word'"],
    ['add', 'stream_wildcard_mentioned', "Flag not editable: 'stream_wildcard_mentioned'"],
    ['add', 'topic_wildcard_mentioned', "Flag not editable: 'topic_wildcard_mentioned'"],
    ['add', 'group_mentioned', "Flag not editable: 'group_mentioned'"],
    ['add', 'force_expand', "Flag not editable: 'force_expand'"],
    ['add', 'force_collapse', "Flag not editable: 'force_collapse'"],
    ['toggle', 'starred', "Invalid message flag operation: 'toggle'"],
  ];
  for (const [op, name, msg] of cases) {
    const res = await flag(alice, [id], op, name);
    assert.equal(res.status, 400, `${op} ${name}`);
    assert.deepEqual(res.body, { result: 'error', msg, code: 'BAD_REQUEST' });
  }
  const missing = await alice.post('/messages/flags', { op: 'add', flag: 'read' });
  assert.deepEqual(missing.body, { result: 'error', msg: "Missing 'messages' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'messages' });
  assert.equal((await alice.post('/messages/flags', { messages: '[1,"x"]', op: 'add', flag: 'read' })).body.msg, 'messages[1] is not an integer');
  assert.equal((await alice.post('/messages/flags', { messages: '5', op: 'add', flag: 'read' })).body.msg, 'messages is not a list');
  assert.equal((await alice.post('/messages/flags', { messages: [id], flag: 'read' })).body.code, 'REQUEST_VARIABLE_MISSING');
  assert.deepEqual(await flagsOf(alice, id), []);
  // Only users change their flags: no credentials, no flags.
  for (const path of ['/messages/flags', '/messages/flags/narrow', '/mark_all_as_read', '/mark_stream_as_read', '/mark_topic_as_read']) {
    assert.equal((await server.anonymous.post(path, { messages: [id], op: 'add', flag: 'read' })).body.code, 'UNAUTHORIZED', path);
  }
});

test('starring and unstarring: the reply echoes the ids, the event lists what changed', async () => {
  const q = await queueFor(alice);
  const [a, b, c] = [await sendTo(bob, 'Denmark', 'stars'), await sendTo(bob, 'Denmark', 'stars'), await sendTo(bob, 'Denmark', 'stars')];
  const res = await flag(alice, [b, a], 'add', 'starred');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { result: 'success', msg: '', messages: [b, a], ignored_because_not_subscribed_channels: [] });
  assert.deepEqual(await flagsOf(alice, a), ['starred']);
  assert.deepEqual(await drain(q), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'starred', messages: [b, a], all: false }]);

  // Already starred ones are left out of the event; repeated ids count once.
  const again = await flag(alice, [a, c, c, b], 'add', 'starred');
  assert.deepEqual(again.body.messages, [a, c, c, b]);
  assert.deepEqual(await drain(q), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'starred', messages: [c], all: false }]);

  // Nothing changes: no event.
  await flag(alice, [a, b, c], 'add', 'starred');
  assert.deepEqual(await drain(q), []);

  await flag(alice, [a, c], 'remove', 'starred');
  assert.deepEqual(await flagsOf(alice, a), []);
  assert.deepEqual(await flagsOf(alice, b), ['starred']);
  assert.deepEqual(await drain(q), [{ type: 'update_message_flags', op: 'remove', operation: 'remove', flag: 'starred', messages: [a, c], all: false }]);
  // Only alice's copy changed.
  assert.deepEqual(await flagsOf(bob, b), []);

  await flag(alice, [a], 'add', 'collapsed');
  assert.deepEqual(await flagsOf(alice, a), ['collapsed']);
  await flag(alice, [a], 'remove', 'collapsed');
  assert.deepEqual(await flagsOf(alice, a), []);
});

test('read and unread, with message_details for each kind of conversation', async () => {
  const topicMessage = await sendTo(bob, 'Denmark', 'details', `@**Alice Able** look`);
  const wildcard = await sendTo(bob, 'Denmark', 'details', '@**all** everyone');
  const plain = await sendTo(bob, 'Denmark', '', 'in general chat');
  const dm = await sendDm(bob, [alice]);
  const group = await sendDm(bob, [alice, carol]);
  const self = await sendDm(alice, [alice]);
  const ids = [topicMessage, wildcard, plain, dm, group, self];
  await flag(alice, ids, 'add', 'read');
  for (const id of ids) assert.ok((await flagsOf(alice, id)).includes('read'));

  const legacy = await queueFor(alice);
  const modern = await queueFor(alice, { client_capabilities: { notification_settings_null: false, empty_topic_name: true } });
  const res = await flag(alice, ids, 'remove', 'read');
  assert.deepEqual(res.body.ignored_because_not_subscribed_channels, []);
  const details = {
    [topicMessage]: { type: 'stream', stream_id: denmark, topic: 'details', unmuted_stream_msg: true, mentioned: true },
    [wildcard]: { type: 'stream', stream_id: denmark, topic: 'details', unmuted_stream_msg: true, mentioned: true },
    [plain]: { type: 'stream', stream_id: denmark, topic: '', unmuted_stream_msg: true },
    [dm]: { type: 'private', user_ids: [bob.id] },
    [group]: { type: 'private', user_ids: [bob.id, carol.id].sort((x, y) => x - y) },
    [self]: { type: 'private', user_ids: [] },
  };
  const expected = { type: 'update_message_flags', op: 'remove', operation: 'remove', flag: 'read', messages: ids, all: false, message_details: details };
  assert.deepEqual(await drain(modern), [expected]);
  const shown = { ...details, [plain]: { ...details[plain], topic: 'general chat' } };
  assert.deepEqual(await drain(legacy), [{ ...expected, message_details: shown }]);

  // In a muted topic a wildcard mention is not a mention, nor is the message counted.
  assert.equal((await alice.post('/user_topics', { stream_id: denmark, topic: 'details', visibility_policy: 1 })).status, 200);
  await flag(alice, [wildcard, topicMessage], 'add', 'read');
  await drain(modern);
  await flag(alice, [wildcard, topicMessage], 'remove', 'read');
  const [event] = await drain(modern);
  assert.deepEqual(event.message_details, {
    [wildcard]: { type: 'stream', stream_id: denmark, topic: 'details', unmuted_stream_msg: false },
    [topicMessage]: { type: 'stream', stream_id: denmark, topic: 'details', unmuted_stream_msg: false, mentioned: true },
  });
  await alice.post('/user_topics', { stream_id: denmark, topic: 'details', visibility_policy: 0 });
});

test('messages the user has no copy of: historical rows, access, silent skips', async () => {
  const old = await sendTo(bob, 'Verona', 'history');
  const hidden = await sendTo(bob, 'Secret', 'hush');
  const theirs = await sendDm(bob, [carol]);
  const q = await queueFor(alice);

  // Without a copy a message reads as read + historical: adding read or removing star changes nothing.
  assert.deepEqual(await flagsOf(alice, old), ['read', 'historical']);
  for (const [op, name] of [
    ['add', 'read'],
    ['remove', 'starred'],
    ['remove', 'collapsed'],
  ]) {
    const res = await flag(alice, [old, hidden, theirs, 999_999, -4], op, name);
    assert.equal(res.status, 200, `${op} ${name}: ${JSON.stringify(res.body)}`);
  }
  assert.deepEqual(await drain(q), []);
  const rows = await server.svc.db
    .selectFrom('user_messages')
    .select('message_id')
    .where('user_id', '=', alice.id)
    .where('message_id', 'in', [old, hidden, theirs])
    .execute();
  assert.deepEqual(rows, []);

  // Starring needs access: other people's direct messages, a private channel, unknown ids are refused,
  // and a refused request changes nothing, not even its valid part.
  for (const id of [hidden, theirs, 999_999, -4, 2 ** 40]) {
    const res = await flag(alice, [old, id], 'add', 'starred');
    assert.deepEqual(res.body, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' }, `id ${id}`);
  }
  assert.deepEqual(await flagsOf(alice, old), ['read', 'historical']);
  assert.deepEqual(await drain(q), []);

  // Public history: starring stores a historical copy.
  const res = await flag(alice, [old], 'add', 'starred');
  assert.equal(res.status, 200);
  assert.deepEqual(await flagsOf(alice, old), ['read', 'starred', 'historical']);
  assert.deepEqual(await drain(q), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'starred', messages: [old], all: false }]);
  await flag(alice, [old], 'remove', 'starred');
  assert.deepEqual(await flagsOf(alice, old), ['read', 'historical']);

  // Marking unread in a channel the user is not subscribed to is skipped and reported.
  const unread = await flag(alice, [old, hidden], 'remove', 'read');
  assert.deepEqual(unread.body, {
    result: 'success',
    msg: '',
    messages: [old, hidden],
    ignored_because_not_subscribed_channels: [verona, secret].sort((a, b) => a - b),
  });
  assert.deepEqual(await flagsOf(alice, old), ['read', 'historical']);
  assert.deepEqual(
    (await drain(q)).filter((e) => e.flag === 'read'),
    [],
  );

  // Other users' direct messages cannot be marked unread either.
  assert.equal((await flag(alice, [theirs], 'remove', 'read')).body.msg, 'Invalid message(s)');

  // Once subscribed, older history can be marked unread: a historical copy without `read`.
  await subscribe(alice, 'Verona', [alice]);
  const marked = await flag(alice, [old], 'remove', 'read');
  assert.deepEqual(marked.body.ignored_because_not_subscribed_channels, []);
  assert.deepEqual(await flagsOf(alice, old), ['historical']);
  const [event] = await drain(q);
  assert.deepEqual(event.message_details, { [old]: { type: 'stream', stream_id: verona, topic: 'history', unmuted_stream_msg: true } });
  await flag(alice, [old], 'add', 'read');
});

test('who may change flags: every role on their own messages, history by content access', async () => {
  const matrix: [Role, boolean][] = [
    [ROLE.GUEST, false],
    [ROLE.MEMBER, true],
    [ROLE.MODERATOR, true],
    [ROLE.ADMINISTRATOR, true],
    [ROLE.OWNER, true],
  ];
  const history = await sendTo(bob, 'Verona', 'matrix');
  for (const [role, readsHistory] of matrix) {
    const user = role === ROLE.OWNER ? server.owner : await server.createUser({ role });
    const dm = await sendDm(bob, [user]);
    const res = await flag(user, [dm], 'add', 'starred');
    assert.equal(res.status, 200, `role ${role}`);
    assert.deepEqual(await flagsOf(user, dm), ['starred']);
    const star = await flag(user, [history], 'add', 'starred');
    if (readsHistory) assert.equal(star.status, 200, `role ${role}: ${JSON.stringify(star.body)}`);
    else assert.deepEqual(star.body, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
  }
  // A guest reads what their channels show them.
  const seen = await sendTo(bob, 'Denmark', 'guests');
  assert.equal((await flag(guest, [seen], 'add', 'starred')).status, 200);
});

test('GET /users/me: max_message_id', async () => {
  const fresh = await server.createUser();
  assert.equal((await fresh.get('/users/me')).body.max_message_id, -1);
  const id = await sendDm(bob, [fresh]);
  await sendTo(bob, 'Denmark', 'not for fresh');
  assert.equal((await fresh.get('/users/me')).body.max_message_id, id);
});
