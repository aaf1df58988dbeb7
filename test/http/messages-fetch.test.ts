// Reading messages: anchors, windows, every narrow operator, history access
// (spec endpoints 5 and 9; digest 1.5, 1.9).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { sql } from 'kysely';
import { FLAG_BITS } from '../../src/messages/flags/flags.ts';

let server: TestServer;
let admin: Client;
let alice: Client;
let bob: Client;
let carol: Client;
let guest: Client;
const ids: Record<string, number> = {};

before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com', fullName: 'Ada Admin' });
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  carol = await server.createUser({ email: 'carol@example.com', fullName: 'Carol Cole' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com', fullName: 'Gus Guest' });
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }, { name: 'Sweden' }], principals: [admin.id, alice.id, bob.id] });
  await admin.post('/users/me/subscriptions', {
    subscriptions: [{ name: 'Vault' }],
    invite_only: true,
    history_public_to_subscribers: false,
    principals: [admin.id, alice.id],
  });
  // Each new channel opens with Notification Bot's creation message.
  for (const [key, name] of [
    ['newDenmark', 'Denmark'],
    ['newSweden', 'Sweden'],
    ['newVault', 'Vault'],
  ]) {
    const id = (await admin.get('/get_stream_id', { stream: name })).body.stream_id;
    ids[key] = (await admin.get(`/streams/${id}`)).body.stream.first_message_id;
  }
  const send = async (key: string, c: Client, params: Record<string, unknown>) => {
    const res = await c.post('/messages', params);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    ids[key] = res.body.id;
  };
  await send('d1', alice, { type: 'stream', to: 'Denmark', topic: 'Castles', content: 'Kronborg is a castle with a link https://example.com' });
  await send('d2', bob, { type: 'stream', to: 'Denmark', topic: 'castles', content: 'the elephant gate @**Alice Able**' });
  await send('d3', alice, { type: 'stream', to: 'Denmark', topic: '✔ solved', content: 'a resolved topic' });
  await send('s1', bob, { type: 'stream', to: 'Sweden', topic: 'Food', content: 'meatballs ![image](https://example.com/a.png)' });
  await send('v1', admin, { type: 'stream', to: 'Vault', topic: 'secrets', content: 'before bob' });
  await send('dm1', alice, { type: 'direct', to: JSON.stringify([bob.id]), content: 'private words' });
  await send('gdm', carol, { type: 'direct', to: JSON.stringify([alice.id, bob.id]), content: 'group words' });
  await send('self', alice, { type: 'direct', to: JSON.stringify([alice.id]), content: 'note to self' });
  await send('d4', bob, { type: 'stream', to: 'Denmark', topic: '', content: '@**all** general chat words' });
  // Bob joins the vault late: the history before him stays hidden (protected history).
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Vault' }], principals: [bob.id] });
  // ... and Notification Bot tells him who subscribed him.
  const notice = await get(bob, { anchor: 'newest', num_before: 1, num_after: 0, narrow: JSON.stringify([['dm', 'notification-bot@confab.internal']]) });
  ids.joinedVault = notice.body.messages[0].id;
  await send('v2', admin, { type: 'stream', to: 'Vault', topic: 'secrets', content: 'after bob' });
});
after(() => server.close());

const get = (c: Client, params: Record<string, unknown>) => c.get('/messages', params);
async function idsOf(c: Client, narrow: unknown, extra: Record<string, unknown> = {}): Promise<number[]> {
  const res = await get(c, { anchor: 'newest', num_before: 100, num_after: 0, narrow: JSON.stringify(narrow), ...extra });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.messages.map((m: any) => m.id);
}
const pick = (...keys: string[]) => keys.map((k) => ids[k]).sort((a, b) => a - b);

test('the response shape and the message object', async () => {
  const res = await get(alice, { anchor: ids.d1, num_before: 0, num_after: 0 });
  assert.deepEqual(Object.keys(res.body).sort(), ['anchor', 'found_anchor', 'found_newest', 'found_oldest', 'history_limited', 'messages', 'msg', 'result']);
  const [m] = res.body.messages;
  assert.deepEqual(
    Object.keys(m).sort(),
    [
      'avatar_url',
      'client',
      'content',
      'content_type',
      'display_recipient',
      'flags',
      'id',
      'is_me_message',
      'reactions',
      'recipient_id',
      'sender_email',
      'sender_full_name',
      'sender_id',
      'sender_realm_str',
      'stream_id',
      'subject',
      'submessages',
      'timestamp',
      'topic_links',
      'type',
    ].sort(),
  );
  assert.equal(m.id, ids.d1);
  assert.equal(m.sender_email, 'alice@example.com');
  assert.equal(m.sender_full_name, 'Alice Able');
  assert.equal(m.content_type, 'text/html');
  assert.match(m.content, /^<p>Kronborg is a castle with a link <a href="https:\/\/example.com">/);
  assert.equal(m.avatar_url, null, 'client_svcavatar defaults to true');
  const raw = (await get(alice, { anchor: ids.d1, num_before: 0, num_after: 0, apply_markdown: false, client_svcavatar: false })).body.messages[0];
  assert.equal(raw.content, 'Kronborg is a castle with a link https://example.com');
  assert.equal(raw.content_type, 'text/x-markdown');
  assert.match(raw.avatar_url, /gravatar/);
});

test('anchors and windows', async () => {
  const all = await idsOf(alice, []);
  assert.deepEqual(
    all,
    [...all].sort((a, b) => a - b),
  );
  const newest = await get(alice, { anchor: 'newest', num_before: 2, num_after: 0 });
  assert.deepEqual(
    newest.body.messages.map((m: any) => m.id),
    all.slice(-2),
  );
  assert.equal(newest.body.found_newest, true);
  assert.equal(newest.body.found_oldest, false);
  assert.equal(newest.body.anchor, 10000000000000000);
  const oldest = await get(alice, { anchor: 'oldest', num_before: 0, num_after: 2 });
  assert.deepEqual(
    oldest.body.messages.map((m: any) => m.id),
    all.slice(0, 2),
  );
  assert.equal(oldest.body.found_oldest, true);
  assert.equal(oldest.body.found_newest, false);
  const around = await get(alice, { anchor: String(all[2]), num_before: 1, num_after: 1 });
  assert.deepEqual(
    around.body.messages.map((m: any) => m.id),
    all.slice(1, 4),
  );
  assert.equal(around.body.found_anchor, true);
  assert.equal(around.body.anchor, all[2]);
  const excluded = await get(alice, { anchor: String(all[2]), num_before: 0, num_after: 1, include_anchor: false });
  assert.deepEqual(
    excluded.body.messages.map((m: any) => m.id),
    [all[3]],
  );
  assert.equal(excluded.body.found_anchor, false);
  const between = await get(alice, { anchor: String(all[2] + 100000), num_before: 1, num_after: 0 });
  assert.equal(between.body.found_anchor, false);
  assert.equal((await get(alice, { anchor: '-5', num_before: 0, num_after: 1 })).body.anchor, 0);
  assert.equal((await get(alice, { anchor: '99999999999999999999', num_before: 0, num_after: 0 })).body.anchor, 10000000000000000);
  // Defaults of zero are served, as the reference does.
  assert.deepEqual(
    (await get(alice, { anchor: String(all[0]) })).body.messages.map((m: any) => m.id),
    [all[0]],
  );
});

test('first_unread, and use_first_unread_anchor', async () => {
  const unread = await server.svc.db
    .selectFrom('user_messages')
    .select('message_id')
    .where('user_id', '=', bob.id)
    .where(sql<number>`flags & ${FLAG_BITS.read}`, '=', 0)
    .orderBy('message_id')
    .executeTakeFirstOrThrow();
  const res = await get(bob, { anchor: 'first_unread', num_before: 0, num_after: 0 });
  assert.equal(res.body.anchor, unread.message_id);
  assert.equal(res.body.found_anchor, true);
  const legacy = await get(bob, { use_first_unread_anchor: true, num_before: 0, num_after: 0 });
  assert.equal(legacy.body.anchor, unread.message_id);
  // Nothing unread: past the newest message.
  const none = await get(bob, { anchor: 'first_unread', num_before: 1, num_after: 0, narrow: JSON.stringify([['id', '999999']]) });
  assert.equal(none.body.anchor, 10000000000000000);
});

test('parameter errors', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ num_before: 1, num_after: 1 }, "Missing 'anchor' argument."],
    [{ anchor: 'middle', num_before: 1, num_after: 1 }, 'Invalid anchor'],
    [{ anchor: 'newest', num_before: -1, num_after: 1 }, 'num_before is too small'],
    [{ anchor: 'newest', num_before: 4000, num_after: 1001 }, 'Too many messages requested (maximum 5000).'],
    [{ anchor: '5', num_before: 1, num_after: 1, include_anchor: false }, 'The anchor can only be excluded at an end of the range'],
    [{ anchor: 'newest', num_before: 1, num_after: 1, narrow: '[["stream"]]' }, 'Invalid narrow[0]: Value error, element is not a string pair'],
    [{ anchor: 'newest', num_before: 1, num_after: 1, narrow: '[{"operator":"stream"}]' }, 'Invalid narrow[0]: Value error, operand is missing'],
    [{ anchor: 'newest', num_before: 1, num_after: 1, narrow: 'nope' }, 'narrow is not valid JSON'],
  ];
  for (const [params, msg] of cases) {
    const res = await get(alice, params);
    assert.equal(res.status, 400, msg);
    assert.equal(res.body.msg, msg);
    assert.equal(res.body.code, 'BAD_REQUEST');
  }
  const combo = await get(alice, { message_ids: JSON.stringify([ids.d1]), anchor: 'newest' });
  assert.deepEqual(combo.body, {
    result: 'error',
    msg: 'Unsupported parameter combination: num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor',
    code: 'BAD_REQUEST',
    parameters: 'num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor',
  });
});

test('message_ids: the accessible ones, filtered by the narrow', async () => {
  const res = await get(bob, { message_ids: JSON.stringify([ids.d1, ids.s1, ids.v1, ids.dm1, 999999]) });
  assert.deepEqual(
    res.body.messages.map((m: any) => m.id),
    pick('d1', 's1', 'dm1'),
    'no protected history, no unknown ids',
  );
  assert.equal('anchor' in res.body, false);
  assert.equal(res.body.found_anchor, false);
  const narrowed = await get(bob, { message_ids: JSON.stringify([ids.d1, ids.s1]), narrow: JSON.stringify([['channel', 'Sweden']]) });
  assert.deepEqual(
    narrowed.body.messages.map((m: any) => m.id),
    [ids.s1],
  );
});

test('narrows: channels, topics, senders', async () => {
  assert.deepEqual(await idsOf(bob, [['stream', 'denmark']]), pick('newDenmark', 'd1', 'd2', 'd3', 'd4'));
  const denmarkId = (await bob.get('/get_stream_id', { stream: 'Denmark' })).body.stream_id;
  assert.deepEqual(await idsOf(bob, [{ operator: 'channel', operand: denmarkId }]), pick('newDenmark', 'd1', 'd2', 'd3', 'd4'));
  assert.deepEqual(
    await idsOf(bob, [
      ['channel', 'Denmark'],
      ['topic', 'CASTLES'],
    ]),
    pick('d1', 'd2'),
  );
  assert.deepEqual(
    await idsOf(bob, [
      ['channel', 'Denmark'],
      ['topic', 'general chat'],
    ]),
    pick('d4'),
  );
  assert.deepEqual(await idsOf(bob, [['channel', 'Denmark'], { operator: 'topic', operand: 'castles', negated: true }]), pick('newDenmark', 'd3', 'd4'));
  assert.deepEqual(await idsOf(bob, [['sender', 'alice@example.com']]), pick('d1', 'd3', 'dm1'));
  assert.deepEqual(
    await idsOf(bob, [
      ['sender', String(alice.id)],
      ['channel', 'Denmark'],
    ]),
    pick('d1', 'd3'),
  );
  assert.deepEqual(await idsOf(bob, [['channels', 'public']]), pick('newDenmark', 'newSweden', 'd1', 'd2', 'd3', 's1', 'd4'));
  // Notification Bot's: the public channels' creation messages, not the vault's (from before Bob joined), and its direct message.
  assert.deepEqual(await idsOf(bob, [['sender', 'notification-bot@confab.internal']]), pick('newDenmark', 'newSweden', 'joinedVault'));
  const errors: [unknown, string][] = [
    [[['channel', 'Atlantis']], 'Invalid narrow operator: unknown channel Atlantis'],
    [[['sender', 'nobody@example.com']], 'Invalid narrow operator: unknown user nobody@example.com'],
    [[['is', 'happy']], "Invalid narrow operator: unknown 'is' operand happy"],
    [[['frobnicate', 'x']], 'Invalid narrow operator: unknown operator frobnicate'],
    [[['channels', 'all']], 'Invalid narrow operator: unknown channels operand all'],
    [
      [
        ['channel', 'Denmark'],
        ['is', 'dm'],
      ],
      'Invalid narrow operator: No message can be both a channel message and direct message',
    ],
    [[['id', 'abc']], 'Invalid narrow operator: Invalid message ID'],
  ];
  for (const [narrow, msg] of errors) {
    const res = await get(bob, { anchor: 'newest', num_before: 1, num_after: 0, narrow: JSON.stringify(narrow) });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'BAD_NARROW');
    assert.equal(res.body.msg, msg);
  }
  // A private channel one cannot see reads as unknown: no hint it exists.
  assert.equal(
    (await get(carol, { anchor: 'newest', num_before: 1, num_after: 0, narrow: '[["channel","Vault"]]' })).body.msg,
    'Invalid narrow operator: unknown channel Vault',
  );
  const dupWith = await get(bob, {
    anchor: 'newest',
    num_before: 1,
    num_after: 0,
    narrow: JSON.stringify([
      ['with', String(ids.d1)],
      ['with', String(ids.d2)],
    ]),
  });
  assert.equal(dupWith.body.msg, "Invalid narrow operator combination: Duplicate 'with' operators.");
});

test('narrows: direct messages', async () => {
  assert.deepEqual(await idsOf(alice, [['dm', 'bob@example.com']]), pick('dm1'));
  assert.deepEqual(await idsOf(bob, [['dm', [alice.id]]]), pick('dm1'));
  assert.deepEqual(await idsOf(alice, [['dm', 'bob@example.com,carol@example.com']]), pick('gdm'));
  assert.deepEqual(await idsOf(alice, [['dm', [alice.id]]]), pick('self'));
  assert.deepEqual(await idsOf(alice, [['dm-including', 'bob@example.com']]), pick('dm1', 'gdm'));
  assert.deepEqual(await idsOf(alice, [['group-pm-with', 'bob@example.com']]), pick('gdm'));
  assert.deepEqual(await idsOf(alice, [['is', 'dm']]), pick('dm1', 'gdm', 'self'));
  assert.deepEqual(await idsOf(alice, [['is', 'private']]), pick('dm1', 'gdm', 'self'));
  assert.deepEqual(await idsOf(carol, [['pm-with', 'alice@example.com']]), [], 'legacy alias; no such conversation for carol');
  assert.deepEqual(await idsOf(admin, [['is', 'dm']]), [], "others' direct messages stay private");
});

test('narrows: flags, content, ids', async () => {
  await server.svc.db
    .updateTable('user_messages')
    .set((eb) => ({ flags: eb('flags', '|', FLAG_BITS.starred) }))
    .where('user_id', '=', bob.id)
    .where('message_id', '=', ids.d1)
    .execute();
  assert.deepEqual(await idsOf(bob, [['is', 'starred']]), pick('d1'));
  assert.deepEqual(await idsOf(alice, [['is', 'mentioned']]), pick('d2', 'd4'));
  assert.deepEqual(await idsOf(alice, [['is', 'alerted']]), pick('d2', 'd4'));
  assert.deepEqual(await idsOf(bob, [['is', 'resolved']]), pick('d3'));
  // A channel link is a link too (the reference counts every <a>): Notification Bot's "subscribed you to #**Vault**".
  assert.deepEqual(await idsOf(bob, [['has', 'link']]), pick('d1', 's1', 'joinedVault'));
  assert.deepEqual(await idsOf(bob, [['has', 'image']]), pick('s1'));
  assert.deepEqual(await idsOf(bob, [['has', 'attachment']]), []);
  await server.svc.db
    .insertInto('reactions')
    .values({ realm_id: 1, message_id: ids.d2, user_id: alice.id, emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'unicode_emoji' })
    .execute();
  assert.deepEqual(await idsOf(bob, [['has', 'reaction']]), pick('d2'));
  assert.deepEqual(await idsOf(bob, [['id', String(ids.s1)]]), pick('s1'));
  assert.deepEqual(
    await idsOf(bob, [
      ['near', String(ids.s1)],
      ['channel', 'Sweden'],
    ]),
    pick('newSweden', 's1'),
    'near does not filter',
  );
  assert.deepEqual(
    await idsOf(bob, [
      ['in', 'all'],
      ['channel', 'Sweden'],
    ]),
    pick('newSweden', 's1'),
  );
  const unread = await idsOf(bob, [['is', 'unread']]);
  assert.ok(unread.includes(ids.d1) && !unread.includes(ids.v1));
  assert.deepEqual(await idsOf(bob, [{ operator: 'is', operand: 'unread', negated: true }, ['channel', 'Denmark']]), [], 'nothing read yet');
});

test('narrows: muted, followed, in:home', async () => {
  const denmark = (await carol.get('/get_stream_id', { stream: 'Denmark' })).body.stream_id;
  await server.svc.db
    .insertInto('user_topics')
    .values({ realm_id: 1, user_id: bob.id, channel_id: denmark, topic: 'Castles', visibility_policy: 1, last_updated: new Date() })
    .execute();
  await server.svc.db
    .insertInto('user_topics')
    .values({ realm_id: 1, user_id: bob.id, channel_id: denmark, topic: '✔ solved', visibility_policy: 3, last_updated: new Date() })
    .execute();
  assert.deepEqual(await idsOf(bob, [['is', 'muted']]), pick('d1', 'd2'));
  // Bob also follows the topics he started (sending follows a topic one initiates).
  assert.deepEqual(await idsOf(bob, [['is', 'followed']]), pick('d3', 's1', 'd4'));
  const home = await idsOf(bob, [['in', 'home']]);
  assert.ok(!home.includes(ids.d1) && home.includes(ids.d3) && home.includes(ids.dm1));
});

test('full-text search with highlights', async () => {
  const res = await get(bob, { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify([['search', 'elephants']]) });
  assert.deepEqual(
    res.body.messages.map((m: any) => m.id),
    [ids.d2],
    'stemmed',
  );
  assert.match(res.body.messages[0].match_content, /<span class="highlight">elephant<\/span>/);
  assert.equal(typeof res.body.messages[0].match_subject, 'string');
  assert.deepEqual(
    await idsOf(bob, [
      ['search', 'castle'],
      ['channel', 'Denmark'],
    ]),
    pick('d1', 'd2'),
    'topics are searched too',
  );
  assert.deepEqual(await idsOf(bob, [['search', 'words']]), pick('dm1', 'gdm', 'd4'));
  assert.equal((await get(bob, { anchor: 'newest', num_before: 1, num_after: 0, narrow: '[["search","  "]]' })).body.msg, 'operand cannot be blank');
});

test('history: public channels in full, protected history only from when one joined', async () => {
  const res = await get(carol, { anchor: 'newest', num_before: 10, num_after: 0, narrow: '[["channel","Denmark"]]' });
  assert.deepEqual(
    res.body.messages.map((m: any) => m.id),
    pick('newDenmark', 'd1', 'd2', 'd3', 'd4'),
  );
  for (const m of res.body.messages) assert.deepEqual(m.flags, ['read', 'historical']);
  assert.deepEqual(await idsOf(carol, []), pick('gdm'), 'without a channel term: own messages only');
  assert.deepEqual(await idsOf(bob, [['channel', 'Vault']]), pick('v2'));
  assert.deepEqual(await idsOf(alice, [['channel', 'Vault']]), pick('newVault', 'v1', 'v2'));
  assert.deepEqual(await idsOf(guest, [['channels', 'public']]), [], 'guests do not read public channels they are not in');
  assert.equal((await get(guest, { anchor: 'newest', num_before: 1, num_after: 0, narrow: '[["channel","Denmark"]]' })).body.code, 'BAD_NARROW');
});

test('with: follows the message to its conversation', async () => {
  assert.deepEqual(await idsOf(bob, [['with', String(ids.d1)]]), pick('d1', 'd2'));
  assert.deepEqual(await idsOf(bob, [['with', String(ids.dm1)]]), pick('dm1'));
  assert.deepEqual(
    await idsOf(bob, [
      ['channel', 'Sweden'],
      ['with', String(ids.d4)],
    ]),
    pick('d4'),
  );
});

test('GET /messages/{id}: raw content, flags, access', async () => {
  const res = await bob.get(`/messages/${ids.d2}`);
  assert.equal(res.status, 200);
  assert.equal(res.body.raw_content, 'the elephant gate @**Alice Able**');
  assert.equal(res.body.message.id, ids.d2);
  assert.deepEqual(res.body.message.flags, []);
  const historical = await carol.get(`/messages/${ids.d1}`);
  assert.deepEqual(historical.body.message.flags, ['read', 'historical']);
  for (const [c, id] of [
    [carol, ids.v1],
    [bob, ids.v1],
    [carol, ids.dm1],
    [bob, 999999],
  ] as [Client, number][]) {
    const denied = await c.get(`/messages/${id}`);
    assert.equal(denied.status, 400);
    assert.deepEqual(denied.body, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
  }
  assert.equal((await bob.get('/messages/abc')).status, 404);
});

test('matches_narrow and render', async () => {
  const res = await bob.get('/messages/matches_narrow', {
    msg_ids: JSON.stringify([ids.d1, ids.d2, ids.s1]),
    narrow: JSON.stringify([['search', 'elephant']]),
  });
  assert.deepEqual(Object.keys(res.body.messages), [String(ids.d2)]);
  assert.match(res.body.messages[String(ids.d2)].match_content, /highlight/);
  const rendered = await bob.post('/messages/render', { content: '**bold** @**Alice Able**' });
  assert.equal(rendered.body.rendered, `<p><strong>bold</strong> <span class="user-mention" data-user-id="${alice.id}">@Alice Able</span></p>`);
});

test('leaving a private channel ends access to its messages, copies or not', async () => {
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Leaving' }], invite_only: true, principals: [admin.id, carol.id] });
  const sent = await admin.post('/messages', { type: 'stream', to: 'Leaving', topic: 't', content: 'for members only' });
  assert.equal((await carol.get(`/messages/${sent.body.id}`)).status, 200);
  await carol.delete('/users/me/subscriptions', { subscriptions: ['Leaving'] });
  assert.equal((await carol.get(`/messages/${sent.body.id}`)).body.msg, 'Invalid message(s)');
});

test('a narrow read again after each change sees it: made private, subscribed, renamed, left', async () => {
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Changing' }], principals: [admin.id] });
  const id = (await admin.get('/get_stream_id', { stream: 'Changing' })).body.stream_id;
  const sent = (await admin.post('/messages', { type: 'stream', to: 'Changing', topic: 't', content: 'kept or not' })).body.id;
  const read = async (name: string) => {
    const res = await carol.get('/messages', { anchor: 'newest', num_before: 5, num_after: 0, narrow: JSON.stringify([['channel', name]]) });
    return res.status === 200 ? res.body.messages.map((m: { id: number }) => m.id).includes(sent) : res.body.msg;
  };
  assert.equal(await read('Changing'), true, 'public history');
  assert.equal((await admin.patch(`/streams/${id}`, { is_private: true, history_public_to_subscribers: true })).status, 200);
  assert.equal(await read('Changing'), 'Invalid narrow operator: unknown channel Changing');
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Changing' }], principals: [carol.id] });
  assert.equal(await read('Changing'), true, 'subscribed: the history is shared');
  assert.equal((await admin.patch(`/streams/${id}`, { new_name: 'Changed' })).status, 200);
  assert.equal(await read('Changed'), true);
  assert.equal(await read('Changing'), 'Invalid narrow operator: unknown channel Changing');
  await carol.delete('/users/me/subscriptions', { subscriptions: ['Changed'] });
  assert.equal(await read('Changed'), 'Invalid narrow operator: unknown channel Changed');
});

test('ids no row can have and operands with NUL: found nowhere, refused plainly, never a 500', async () => {
  const huge = 99_999_999_999;
  const window = { anchor: 'newest', num_before: 5, num_after: 0 };
  const some = await alice.get('/messages', window);
  assert.ok(some.body.messages.length > 0);
  const byIds = await alice.get('/messages', { message_ids: [huge, some.body.messages[0].id] });
  assert.equal(byIds.status, 200, JSON.stringify(byIds.body));
  assert.deepEqual(
    byIds.body.messages.map((m: any) => m.id),
    [some.body.messages[0].id],
  );
  assert.deepEqual((await alice.get('/messages', { ...window, narrow: [['id', String(huge)]] })).body.messages, []);
  // A `with` that names no message is dropped, as for any message that does not exist.
  assert.equal((await alice.get('/messages', { ...window, narrow: [['with', String(huge)]] })).body.messages.length, some.body.messages.length);
  assert.equal(
    (await alice.get('/messages', { ...window, narrow: [{ operator: 'sender', operand: huge }] })).body.msg,
    `Invalid narrow operator: unknown user ${huge}`,
  );
  assert.equal((await alice.get('/messages', { ...window, narrow: [['channel', String(huge)]] })).body.code, 'BAD_NARROW');
  assert.equal((await alice.get('/messages', { ...window, narrow: [{ operator: 'dm', operand: [huge] }] })).body.code, 'BAD_NARROW');
  for (const narrow of [[['topic', 'a\u0000b']], [{ operator: 'search', operand: 'x\u0000' }], [['sender', 'a\u0000@example.com']]]) {
    const res = await alice.get('/messages', { ...window, narrow });
    assert.equal(res.status, 400, JSON.stringify(narrow));
    assert.equal(res.body.msg, 'Invalid narrow[0]: Value error, operand contains a null byte');
  }
  assert.deepEqual((await alice.get('/messages/matches_narrow', { msg_ids: [huge], narrow: [] })).body.messages, {});
  // A path id beyond any row's range names no resource, as a path id that is not a number.
  for (const path of [`/messages/${huge}`, `/messages/${huge}/history`]) assert.equal((await alice.get(path)).status, 404, path);
  assert.equal((await alice.patch(`/messages/${huge}`, { content: 'x' })).status, 404);
  assert.equal((await alice.delete(`/messages/${huge}`)).status, 404);
});

test('match_subject is HTML: the topic escaped, search words highlighted', async () => {
  const res = await alice.post('/messages', { type: 'stream', to: 'Sweden', topic: '<b>Moose</b> & "antlers"', content: 'a moose crossing' });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const id = res.body.id as number;
  const found = await get(bob, { anchor: 'newest', num_before: 5, num_after: 0, narrow: JSON.stringify([['search', 'moose']]) });
  const m = found.body.messages.find((x: any) => x.id === id);
  assert.equal(m.match_subject, '&lt;b&gt;<span class="highlight">Moose</span>&lt;/b&gt; &amp; &quot;antlers&quot;');
  assert.match(m.match_content, /<span class="highlight">moose<\/span>/);
  const plain = await bob.get('/messages/matches_narrow', { msg_ids: JSON.stringify([id]), narrow: JSON.stringify([['channel', 'Sweden']]) });
  assert.equal(plain.body.messages[String(id)].match_subject, '&lt;b&gt;Moose&lt;/b&gt; &amp; &quot;antlers&quot;');
});

test('each message of a window is what GET /messages/{id} gives: senders, channels, reactions, submessages, linkifiers', async () => {
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Norway' }], principals: [admin.id, alice.id, bob.id] });
  await admin.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example/{id}' });
  const post = async (c: Client, content: string, to = 'Norway') =>
    (await c.post('/messages', { type: 'stream', to, topic: 'fjord #12', content })).body.id as number;
  const submit = (c: Client, message_id: number, content: unknown) =>
    c.post('/submessage', { message_id, msg_type: 'widget', content: JSON.stringify(content) });
  const first = await post(alice, '/poll Lunch?\n- Pizza\n- Sushi');
  const second = await post(bob, 'plain words');
  const third = await post(admin, '/poll Dinner?\n- Soup');
  await post(bob, 'in Sweden', 'Sweden');
  await alice.post('/messages', { type: 'direct', to: JSON.stringify([bob.id]), content: 'between us' });
  assert.equal((await submit(bob, first, { type: 'new_option', idx: 1, option: 'Tacos' })).status, 200);
  assert.equal((await submit(alice, first, { type: 'vote', key: 'canned,0', vote: 1 })).status, 200);
  assert.equal((await submit(bob, third, { type: 'vote', key: 'canned,0', vote: 1 })).status, 200);
  for (const [c, id, emoji_name] of [
    [bob, first, 'tada'],
    [alice, first, 'smile'],
    [alice, second, 'heart'],
    [bob, third, 'smile'],
    [alice, third, 'tada'],
  ] as const) {
    assert.equal((await c.post(`/messages/${id}/reactions`, { emoji_name })).status, 200);
  }
  const one = async (id: number) => (await alice.get(`/messages/${id}`)).body.message;
  const pages = [
    { anchor: 'newest', num_before: 8, num_after: 0 },
    { anchor: String(third), num_before: 2, num_after: 1 },
    { anchor: 'newest', num_before: 3, num_after: 0, narrow: JSON.stringify([['channel', 'Norway']]) },
    { anchor: String(second), num_before: 0, num_after: 5 },
  ];
  for (const page of pages) {
    const messages = (await get(alice, { ...page, client_svcavatar: false })).body.messages;
    assert.ok(messages.length >= 3);
    for (const m of messages) assert.deepEqual(m, await one(m.id), `message ${m.id} of ${JSON.stringify(page)}`);
  }
  const window = (await get(alice, pages[2])).body.messages;
  assert.deepEqual(
    window.map((m: any) => m.reactions.map((r: any) => r.emoji_name)),
    [['tada', 'smile'], ['heart'], ['smile', 'tada']],
  );
  assert.deepEqual(
    window.map((m: any) => m.submessages.length),
    [3, 0, 2],
  );
  assert.deepEqual(window[1].topic_links, [{ text: '#12', url: 'https://tracker.example/12' }]);
});
