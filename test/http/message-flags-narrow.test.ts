// Flags over a narrow (spec endpoint 12, digest 1.12) and the read-state
// helpers mark_all_as_read, mark_stream_as_read, mark_topic_as_read (digest 2).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { markAllAsRead } from '../../src/messages/flags/flag-actions.ts';
import { getUser } from '../../src/users/queries.ts';
import { channelId as idOf, drain, queueFor, readEvent, sendTo, subscribe } from './message-flags.fixture.ts';

let server: TestServer;
let alice: Client;
let bob: Client;

before(async () => {
  server = await startTestServer();
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  await subscribe(bob, 'Lisbon', [alice, bob]);
  await subscribe(bob, 'Porto', [alice, bob]);
  await subscribe(bob, 'Faro', [bob]);
  await subscribe(bob, 'Braga', [bob], { invite_only: true });
});
after(() => server.close());

const channelId = (name: string) => idOf(bob, name);

async function sendMany(channel: string, topic: string, n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) ids.push(await sendTo(bob, channel, topic, `message ${i}`));
  return ids;
}

const byNarrow = (c: Client, params: Record<string, unknown>) =>
  c.post('/messages/flags/narrow', { anchor: 'oldest', num_before: 0, num_after: 1000, narrow: [], op: 'add', flag: 'read', ...params });

async function unreadIn(c: Client, narrow: unknown[]): Promise<number[]> {
  const res = await c.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 5000, narrow: [...narrow, { operator: 'is', operand: 'unread' }] });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.messages.map((m: any) => m.id);
}

test('a narrow range: counts, ids, ends found, and only changes listed', async () => {
  const ids = await sendMany('Lisbon', 'range', 6);
  const narrow = [
    { operator: 'channel', operand: 'Lisbon' },
    { operator: 'topic', operand: 'range' },
  ];
  const q = await queueFor(alice);
  // Two before the anchor, the anchor, two after.
  const middle = await byNarrow(alice, { anchor: String(ids[2]), num_before: 2, num_after: 2, narrow });
  assert.deepEqual(middle.body, {
    result: 'success',
    msg: '',
    processed_count: 5,
    updated_count: 5,
    first_processed_id: ids[0],
    last_processed_id: ids[4],
    found_oldest: true,
    found_newest: false,
    ignored_because_not_subscribed_channels: [],
  });
  assert.deepEqual(await drain(q), [readEvent(ids.slice(0, 5))]);
  assert.deepEqual(await unreadIn(alice, narrow), [ids[5]]);

  // Again: everything processed, one message changed.
  const all = await byNarrow(alice, { anchor: 'newest', num_before: 10, num_after: 0, narrow });
  assert.deepEqual(
    { ...all.body, result: undefined, msg: undefined },
    {
      result: undefined,
      msg: undefined,
      processed_count: 6,
      updated_count: 1,
      first_processed_id: ids[0],
      last_processed_id: ids[5],
      found_oldest: true,
      found_newest: true,
      ignored_because_not_subscribed_channels: [],
    },
  );
  assert.deepEqual(await drain(q), [readEvent([ids[5]])]);

  // With is:unread nothing is left in range, and no event is sent.
  const none = await byNarrow(alice, { anchor: 'first_unread', num_before: 0, num_after: 10, narrow: [...narrow, { operator: 'is', operand: 'unread' }] });
  assert.equal(none.body.processed_count, 0);
  assert.equal(none.body.updated_count, 0);
  assert.equal(none.body.first_processed_id, null);
  assert.equal(none.body.last_processed_id, null);
  assert.deepEqual(await drain(q), []);

  // Excluding the anchor at one end of the range.
  const excluded = await byNarrow(alice, { anchor: String(ids[3]), include_anchor: false, num_before: 2, num_after: 0, narrow, op: 'remove' });
  assert.equal(excluded.body.processed_count, 2);
  assert.equal(excluded.body.first_processed_id, ids[1]);
  assert.equal(excluded.body.last_processed_id, ids[2]);
  assert.equal(excluded.body.found_oldest, false);
  assert.deepEqual(await unreadIn(alice, narrow), [ids[1], ids[2]]);

  // first_unread anchors at the oldest unread message matching the narrow.
  const first = await byNarrow(alice, { anchor: 'first_unread', num_before: 0, num_after: 0, narrow });
  assert.equal(first.body.first_processed_id, ids[1]);
  assert.deepEqual(await unreadIn(alice, narrow), [ids[2]]);
  await byNarrow(alice, { narrow });
});

test('parameters and errors', async () => {
  const ok = { anchor: 'newest', num_before: 1, num_after: 0, narrow: '[]', op: 'add', flag: 'starred' };
  const cases: [Record<string, unknown>, Record<string, unknown>][] = [
    [{ anchor: undefined }, { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'anchor' argument", var_name: 'anchor' }],
    [{ narrow: undefined }, { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'narrow' argument", var_name: 'narrow' }],
    [{ num_before: undefined }, { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'num_before' argument", var_name: 'num_before' }],
    [{ anchor: 'latest' }, { code: 'BAD_REQUEST', msg: 'Invalid anchor' }],
    [{ num_before: -1 }, { code: 'BAD_REQUEST', msg: 'num_before is too small' }],
    [{ num_after: '"3"' }, { code: 'BAD_REQUEST', msg: 'num_after is not an integer' }],
    [
      { include_anchor: false, num_before: 1, num_after: 1 },
      { code: 'BAD_REQUEST', msg: 'The anchor can only be excluded at an end of the range' },
    ],
    [{ narrow: '{"a":1}' }, { code: 'BAD_REQUEST', msg: 'narrow is not a list' }],
    [
      { narrow: [{ operator: 'channel', operand: 'Atlantis' }] },
      { code: 'BAD_NARROW', msg: 'Invalid narrow operator: unknown channel Atlantis', desc: 'unknown channel Atlantis' },
    ],
    // The narrow is read before the flag.
    [
      { narrow: [{ operator: 'channel', operand: 'Atlantis' }], flag: 'bogus' },
      { code: 'BAD_NARROW', msg: 'Invalid narrow operator: unknown channel Atlantis', desc: 'unknown channel Atlantis' },
    ],
    [{ flag: 'bogus' }, { code: 'BAD_REQUEST', msg: "Invalid flag: 'bogus'" }],
    [{ flag: 'mentioned' }, { code: 'BAD_REQUEST', msg: "Flag not editable: 'mentioned'" }],
    [{ op: 'flip' }, { code: 'BAD_REQUEST', msg: "Invalid message flag operation: 'flip'" }],
  ];
  for (const [change, error] of cases) {
    const res = await alice.post('/messages/flags/narrow', { ...ok, ...change });
    assert.equal(res.status, 400, JSON.stringify(change));
    assert.deepEqual(res.body, { result: 'error', ...error }, JSON.stringify(change));
  }
  // A null narrow is the empty narrow.
  const res = await alice.post('/messages/flags/narrow', { ...ok, narrow: 'null', op: 'remove' });
  assert.equal(res.status, 200, JSON.stringify(res.body));
});

test('history in a narrow: processed, changed only where the flag differs; unsubscribed channels reported', async () => {
  const faro = await channelId('Faro');
  // The channel's history opens with Notification Bot's creation message.
  const creation = (await alice.get(`/streams/${faro}`)).body.stream.first_message_id;
  const ids = [creation, ...(await sendMany('Faro', 'sea', 3))];
  const narrow = [{ operator: 'channel', operand: 'Faro' }];
  const q = await queueFor(alice);
  const read = await byNarrow(alice, { narrow });
  assert.equal(read.body.processed_count, 4);
  assert.equal(read.body.updated_count, 0);
  const star = await byNarrow(alice, { narrow, flag: 'starred' });
  assert.equal(star.body.updated_count, 4);
  assert.deepEqual(await drain(q), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'starred', messages: ids, all: false }]);
  const stored = await server.svc.db
    .selectFrom('user_messages')
    .select(['message_id', 'flags'])
    .where('user_id', '=', alice.id)
    .where('message_id', 'in', ids)
    .orderBy('message_id')
    .execute();
  assert.deepEqual(
    stored.map((r) => r.flags),
    [1 | 2 | 128, 1 | 2 | 128, 1 | 2 | 128, 1 | 2 | 128],
  );
  const unread = await byNarrow(alice, { narrow, op: 'remove' });
  assert.equal(unread.body.processed_count, 4);
  assert.equal(unread.body.updated_count, 0);
  assert.deepEqual(unread.body.ignored_because_not_subscribed_channels, [faro]);
  assert.deepEqual(await drain(q), []);
  // A private channel's history stays out of reach.
  await sendTo(bob, 'Braga', 'hush');
  const hidden = await byNarrow(alice, { narrow: [{ operator: 'channel', operand: 'Braga' }], flag: 'starred' });
  assert.equal(hidden.body.code, 'BAD_NARROW');
});

test('the server clamps the range to 5000 messages, keeping at least 2500 before the anchor', async () => {
  const dana = await server.createUser({ email: 'dana@example.com', fullName: 'Dana Doe' });
  await subscribe(bob, 'Bulk', [dana, bob]);
  const seed = await sendTo(bob, 'Bulk', 'bulk');
  const realm = 1;
  // Many messages at once, straight into storage.
  await sql`insert into messages (realm_id, sender_id, recipient_id, channel_id, topic, content, rendered_content, date_sent, client)
    select realm_id, sender_id, recipient_id, channel_id, topic, content, rendered_content, date_sent, client
    from messages, generate_series(1, 5100) where id = ${seed}`.execute(server.svc.db);
  await sql`insert into user_messages (realm_id, user_id, message_id, flags)
    select ${realm}, ${dana.id}, id, 0 from messages where channel_id = (select channel_id from messages where id = ${seed}) and id > ${seed}`.execute(
    server.svc.db,
  );
  // The seed and its copies; before them, the channel opens with Notification Bot's creation message.
  const ids = (
    await sql<{
      id: number;
    }>`select id from messages where channel_id = (select channel_id from messages where id = ${seed}) and id >= ${seed} order by id`.execute(server.svc.db)
  ).rows.map((r) => r.id);
  assert.equal(ids.length, 5101);
  const creation = (await dana.get(`/streams/${await channelId('Bulk')}`)).body.stream.first_message_id;
  assert.ok(creation < seed);
  const narrow = [{ operator: 'channel', operand: 'Bulk' }];

  const back = await byNarrow(dana, { anchor: 'newest', num_before: 6000, num_after: 0, narrow, flag: 'starred' });
  assert.equal(back.body.processed_count, 5000);
  assert.equal(back.body.first_processed_id, ids[101]);
  assert.equal(back.body.found_oldest, false);
  assert.equal(back.body.found_newest, true);

  const both = await byNarrow(dana, { anchor: String(ids[2600]), num_before: 4000, num_after: 4000, narrow, flag: 'starred', op: 'remove' });
  assert.equal(both.body.processed_count, 5001);
  assert.equal(both.body.first_processed_id, ids[100]);
  assert.equal(both.body.last_processed_id, ids[5100]);
  assert.equal(both.body.found_oldest, false);
  assert.equal(both.body.found_newest, true);

  const forward = await byNarrow(dana, { anchor: 'oldest', num_before: 0, num_after: 9000, narrow, flag: 'collapsed' });
  assert.equal(forward.body.processed_count, 5000);
  assert.equal(forward.body.first_processed_id, creation);
  assert.equal(forward.body.last_processed_id, ids[4998]);
  assert.equal(forward.body.found_newest, false);

  // mark_all_as_read works in batches: a run that runs out of time reports it and says what it did.
  const q = await queueFor(dana);
  const realmRow = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', realm).executeTakeFirstOrThrow();
  const user = (await getUser(server.svc.db, realm, dana.id))!;
  assert.deepEqual(await markAllAsRead(server.svc, realmRow, user, 0), { complete: false });
  const [partial] = await drain(q);
  assert.equal(partial.all, false);
  assert.equal(partial.messages.length, 5000);
  assert.deepEqual(partial.messages, ids.slice(101));
  const finish = await dana.post('/mark_all_as_read');
  assert.deepEqual(finish.body, { result: 'success', msg: '', complete: true });
  assert.deepEqual(await drain(q), [readEvent([], true)]);
  assert.deepEqual(await unreadIn(dana, []), []);
});

test('mark_all_as_read: every unread message, one event with all: true', async () => {
  const carol = await server.createUser({ email: 'carol@example.com', fullName: 'Carol Cole' });
  await subscribe(bob, 'Lisbon', [carol]);
  // Subscribed by Bob, Carol hears of it from Notification Bot: unread too.
  const notices = (
    await carol.get('/messages', {
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: [{ operator: 'sender', operand: 'notification-bot@confab.internal' }],
      apply_markdown: false,
    })
  ).body.messages;
  assert.deepEqual(
    notices.map((m: any) => m.content),
    [`@_**Bob Baker|${bob.id}** subscribed you to #**Lisbon**.`],
  );
  const ids = [await sendTo(bob, 'Lisbon', 'a'), await sendTo(bob, 'Porto', 'b')];
  const dm = (await bob.post('/messages', { type: 'direct', to: JSON.stringify([carol.id]), content: 'hi' })).body.id;
  assert.deepEqual(await unreadIn(carol, []), [notices[0].id, ids[0], dm]);
  const q = await queueFor(carol);
  const res = await carol.post('/mark_all_as_read');
  assert.deepEqual(res.body, { result: 'success', msg: '', complete: true });
  assert.deepEqual(await drain(q), [readEvent([], true)]);
  assert.deepEqual(await unreadIn(carol, []), []);
  // Nothing unread: still complete, still announced.
  assert.deepEqual((await carol.post('/mark_all_as_read')).body.complete, true);
  assert.deepEqual(await drain(q), [readEvent([], true)]);
  assert.deepEqual((await carol.post('/mark_all_as_read', { extra: 1 })).body.ignored_parameters_unsupported, ['extra']);
});

test('mark_stream_as_read and mark_topic_as_read', async () => {
  const lisbon = await channelId('Lisbon');
  const porto = await channelId('Porto');
  await alice.post('/mark_all_as_read');
  const [a1, a2, b1, e1] = [
    await sendTo(bob, 'Lisbon', 'Alpha'),
    await sendTo(bob, 'Lisbon', 'alpha'),
    await sendTo(bob, 'Lisbon', 'beta'),
    await sendTo(bob, 'Lisbon', ''),
  ];
  const p1 = await sendTo(bob, 'Porto', 'alpha');
  const q = await queueFor(alice);

  const missing = await alice.post('/mark_topic_as_read', { stream_id: lisbon, topic_name: 'gamma' });
  assert.deepEqual(missing.body, { result: 'error', msg: "No such topic 'gamma'", code: 'BAD_REQUEST' });
  assert.equal((await alice.post('/mark_topic_as_read', { stream_id: lisbon })).body.code, 'REQUEST_VARIABLE_MISSING');
  assert.equal((await alice.post('/mark_topic_as_read', { stream_id: '"x"', topic_name: 'alpha' })).body.msg, 'stream_id is not an integer');
  // Ids no row can have and topics with NUL: refused plainly, not a 500.
  assert.equal((await alice.post('/mark_topic_as_read', { stream_id: 99_999_999_999, topic_name: 'alpha' })).body.msg, 'Invalid channel ID');
  assert.equal((await alice.post('/mark_stream_as_read', { stream_id: 99_999_999_999 })).body.msg, 'Invalid channel ID');
  assert.equal(
    (await alice.post('/mark_topic_as_read', { stream_id: lisbon, topic_name: 'al\u0000pha' })).body.msg,
    'Invalid character in topic, at position 3!',
  );

  // Topics match without regard to case; other channels keep theirs.
  assert.deepEqual((await alice.post('/mark_topic_as_read', { stream_id: lisbon, topic_name: 'ALPHA' })).body, { result: 'success', msg: '' });
  assert.deepEqual(await drain(q), [readEvent([a1, a2])]);
  assert.deepEqual(await unreadIn(alice, [{ operator: 'channel', operand: 'Lisbon' }]), [b1, e1]);
  assert.deepEqual(await unreadIn(alice, [{ operator: 'channel', operand: 'Porto' }]), [p1]);
  // Again: nothing left, no event.
  await alice.post('/mark_topic_as_read', { stream_id: lisbon, topic_name: 'alpha' });
  assert.deepEqual(await drain(q), []);
  // "general chat" is the empty topic.
  await alice.post('/mark_topic_as_read', { stream_id: lisbon, topic_name: 'general chat' });
  assert.deepEqual(await drain(q), [readEvent([e1])]);

  assert.deepEqual((await alice.post('/mark_stream_as_read', { stream_id: porto })).body, { result: 'success', msg: '' });
  assert.deepEqual(await drain(q), [readEvent([p1])]);
  assert.deepEqual(await unreadIn(alice, [{ operator: 'channel', operand: 'Lisbon' }]), [b1]);
  assert.deepEqual(await unreadIn(bob, [{ operator: 'channel', operand: 'Porto' }]).then((ids) => ids.includes(p1)), true);

  // Channels the user cannot read, and unknown ones, are invalid.
  const braga = await channelId('Braga');
  for (const stream_id of [braga, 99_999]) {
    assert.deepEqual((await alice.post('/mark_stream_as_read', { stream_id })).body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
    assert.deepEqual((await alice.post('/mark_topic_as_read', { stream_id, topic_name: 'x' })).body.msg, 'Invalid channel ID');
  }
  // A public channel without copies: nothing to do.
  assert.equal((await alice.post('/mark_stream_as_read', { stream_id: await channelId('Faro') })).status, 200);
  assert.deepEqual(await drain(q), []);
  // Guests reach only their channels.
  const guest = await server.createUser({ role: ROLE.GUEST });
  assert.equal((await guest.post('/mark_stream_as_read', { stream_id: lisbon })).body.msg, 'Invalid channel ID');
});
