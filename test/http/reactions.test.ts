// Emoji reactions (spec endpoint 16 and "Reaction"; digest 1.16, section 2
// "Reactions", section 3 `reaction`): the three reaction types, every error,
// who may react, historical copies, and who hears of it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer, ok } from '../support/server.ts';
import { ROLE, type Role } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { FLAG_BITS } from '../../src/messages/flags/flags.ts';

let server: TestServer;
let admin: Client;
let alice: Client;
let bob: Client;
let carol: Client;
let guest: Client;
let denmark: number;

before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com', fullName: 'Ada Admin' });
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  carol = await server.createUser({ email: 'carol@example.com', fullName: 'Carol Cole' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com', fullName: 'Gus Guest' });
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }], principals: [admin.id, alice.id, bob.id] }));
  denmark = (await admin.get('/get_stream_id', { stream: 'Denmark' })).body.stream_id;
});
after(() => server.close());

// --- helpers ---

function expectError(res: { status: number; body: any }, msg: string, code = 'BAD_REQUEST') {
  assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: { result: 'error', msg, code } });
}

let topics = 0;
async function channelMessage(sender: Client = alice, to = 'Denmark', topic = `topic ${++topics}`): Promise<number> {
  return ok(await sender.post('/messages', { type: 'stream', to, topic, content: 'react to me' })).id;
}

const react = (c: Client, id: number, params: Record<string, unknown>) => c.post(`/messages/${id}/reactions`, params);
const unreact = (c: Client, id: number, params: Record<string, unknown>) => c.delete(`/messages/${id}/reactions`, params);

/** The message's reactions, as GET /messages/{id} shows them. */
async function reactionsOf(id: number, viewer: Client = admin): Promise<{ emoji_name: string; emoji_code: string; reaction_type: string; user_id: number }[]> {
  return ok(await viewer.get(`/messages/${id}`)).message.reactions;
}

/** The user's stored copy of a message (flags), if any. */
async function copyOf(userId: number, messageId: number) {
  return server.svc.db.selectFrom('user_messages').select('flags').where('user_id', '=', userId).where('message_id', '=', messageId).executeTakeFirst();
}

/** An event queue for a client; `take()` returns what arrived since the last call. */
async function listen(client: Client, params: Record<string, unknown> = {}) {
  const reg = ok(await client.post('/register', { event_types: ['reaction'], ...params }));
  let last = reg.last_event_id as number;
  return {
    async take(): Promise<any[]> {
      const res = ok(await client.get('/events', { queue_id: reg.queue_id, last_event_id: last, dont_block: true }));
      const events = (res.events as any[]).filter((e) => e.type !== 'heartbeat');
      if (res.events.length > 0) last = res.events.at(-1).id;
      return events;
    },
  };
}

function reactionEvent(op: 'add' | 'remove', messageId: number, user: Client, fullName: string, emoji: [string, string, string]) {
  return {
    type: 'reaction',
    op,
    message_id: messageId,
    user_id: user.id,
    user: { user_id: user.id, email: user.email, full_name: fullName },
    emoji_name: emoji[0],
    emoji_code: emoji[1],
    reaction_type: emoji[2],
  };
}

const withoutId = (events: any[]) => events.map(({ id: _id, ...rest }) => rest);

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==', 'base64');

/** Uploads a custom emoji through the API (multipart, as clients do); returns its id. */
async function uploadEmoji(client: Client, name: string): Promise<string> {
  const boundary = 'confabreactionsboundary';
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="e.png"\r\nContent-Type: image/png\r\n\r\n`),
    PNG,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await server.app.inject({
    method: 'POST',
    url: `/api/v1/realm/emoji/${name}`,
    payload,
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      authorization: `Basic ${Buffer.from(`${client.email}:${client.apiKey}`).toString('base64')}`,
    },
  });
  assert.equal(res.statusCode, 200, res.body);
  const emoji = ok(await client.get('/realm/emoji')).emoji as Record<string, { id: string; name: string; deactivated: boolean }>;
  return Object.values(emoji).find((e) => e.name === name && !e.deactivated)!.id;
}

// --- unicode_emoji ---

test('unicode emoji: by name alone, with code and type, and removal by name or code', async () => {
  const id = await channelMessage();
  ok(await react(bob, id, { emoji_name: 'tada' }));
  ok(await react(alice, id, { emoji_name: 'heart_eyes', emoji_code: '1f60d', reaction_type: 'unicode_emoji' }));
  ok(await react(alice, id, { emoji_name: 'smile', emoji_code: '1f642' }));
  assert.deepEqual(await reactionsOf(id), [
    { emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'unicode_emoji', user_id: bob.id },
    { emoji_name: 'heart_eyes', emoji_code: '1f60d', reaction_type: 'unicode_emoji', user_id: alice.id },
    { emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'unicode_emoji', user_id: alice.id },
  ]);
  // The reaction_type of a removal defaults to unicode_emoji; the name gives the code.
  ok(await unreact(bob, id, { emoji_name: 'tada' }));
  ok(await unreact(alice, id, { emoji_code: '1f60d' }));
  // Any name of the emoji finds it: the code is what identifies a reaction.
  ok(await unreact(alice, id, { emoji_name: 'slightly_smiling_face', reaction_type: 'unicode_emoji' }));
  assert.deepEqual(await reactionsOf(id), []);
});

test("a name from the reference server's own table: the code is looked up", async () => {
  const id = await channelMessage();
  ok(await react(bob, id, { emoji_name: 'holiday_tree' }));
  ok(await react(alice, id, { emoji_name: 'big_smile', emoji_code: '1f604', reaction_type: 'unicode_emoji' }));
  assert.deepEqual(
    (await reactionsOf(id)).map((r) => [r.user_id, r.emoji_name, r.emoji_code, r.reaction_type]),
    [
      [bob.id, 'holiday_tree', '1f384', 'unicode_emoji'],
      [alice.id, 'big_smile', '1f604', 'unicode_emoji'],
    ],
  );
  ok(await unreact(bob, id, { emoji_name: 'holiday_tree' }));
  // The CLDR name of an emoji the table names is not one of its names (the reference's is `tada`).
  expectError(await react(bob, id, { emoji_name: 'party_popper' }), "Emoji 'party_popper' does not exist");
});

test('the names real clients send exist (curated, iamcal and CLDR names)', async () => {
  const id = await channelMessage();
  const names: [string, string][] = [
    ['tada', '1f389'],
    ['heart_eyes', '1f60d'],
    ['+1', '1f44d'],
    ['joy', '1f602'],
    ['smile', '1f642'],
    ['octopus', '1f419'],
    ['-1', '1f44e'],
    ['heart', '2764'],
    ['congratulations', '1f389'],
    ['pleading_face', '1f97a'],
  ];
  for (const [name, code] of names) {
    ok(await react(alice, id, { emoji_name: name, emoji_code: code, reaction_type: 'unicode_emoji' }));
    ok(await unreact(alice, id, { emoji_code: code }));
  }
  // Several names of one emoji; only one of them per reaction.
  ok(await react(alice, id, { emoji_name: 'thumbs_up' }));
  expectError(await react(alice, id, { emoji_name: '+1' }), 'Reaction already exists.', 'REACTION_ALREADY_EXISTS');
});

test('a vote for an existing emoji takes its name, whatever alias the voter used', async () => {
  const id = await channelMessage();
  ok(await react(alice, id, { emoji_name: '+1' }));
  ok(await react(bob, id, { emoji_name: 'thumbs_up', emoji_code: '1f44d', reaction_type: 'unicode_emoji' }));
  // Even a name that is not this emoji's: the code decides.
  ok(await react(admin, id, { emoji_name: 'octopus', emoji_code: '1f44d', reaction_type: 'unicode_emoji' }));
  assert.deepEqual(
    (await reactionsOf(id)).map((r) => [r.user_id, r.emoji_name, r.emoji_code]),
    [
      [alice.id, '+1', '1f44d'],
      [bob.id, '+1', '1f44d'],
      [admin.id, '+1', '1f44d'],
    ],
  );
});

// --- svc_extra_emoji ---

test('the extra emoji `zulip`: inferred from the name, explicit, and removed with its type', async () => {
  const id = await channelMessage();
  const events = await listen(alice);
  ok(await react(bob, id, { emoji_name: 'zulip' }));
  ok(await react(alice, id, { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'svc_extra_emoji' }));
  assert.deepEqual(
    (await reactionsOf(id)).map((r) => [r.emoji_name, r.emoji_code, r.reaction_type]),
    [
      ['zulip', 'zulip', 'svc_extra_emoji'],
      ['zulip', 'zulip', 'svc_extra_emoji'],
    ],
  );
  // Removal's type defaults to unicode_emoji, where there is no `zulip`.
  expectError(await unreact(bob, id, { emoji_name: 'zulip' }), "Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST');
  ok(await unreact(bob, id, { emoji_name: 'zulip', reaction_type: 'svc_extra_emoji' }));
  ok(await unreact(alice, id, { emoji_code: 'zulip', reaction_type: 'svc_extra_emoji' }));
  assert.deepEqual(withoutId(await events.take()), [
    reactionEvent('add', id, bob, 'Bob Baker', ['zulip', 'zulip', 'svc_extra_emoji']),
    reactionEvent('add', id, alice, 'Alice Able', ['zulip', 'zulip', 'svc_extra_emoji']),
    reactionEvent('remove', id, bob, 'Bob Baker', ['zulip', 'zulip', 'svc_extra_emoji']),
    reactionEvent('remove', id, alice, 'Alice Able', ['zulip', 'zulip', 'svc_extra_emoji']),
  ]);
  // The reference's name of the type is read as ours (COMPAT_NAMES, docs/DECISIONS.md).
  assert.equal((await react(bob, id, { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' })).status, 200);
  assert.deepEqual(
    (await reactionsOf(id)).filter((r) => r.user_id === bob.id).map((r) => r.reaction_type),
    ['svc_extra_emoji'],
  );
});

// --- realm_emoji ---

test('custom emoji uploaded through the API: by name, by id, deactivated, and taking over a Unicode name', async () => {
  const parrotId = await uploadEmoji(alice, 'party_parrot');
  const id = await channelMessage();
  ok(await react(alice, id, { emoji_name: 'party_parrot' }));
  ok(await react(bob, id, { emoji_name: 'party_parrot', emoji_code: parrotId, reaction_type: 'realm_emoji' }));
  assert.deepEqual(await reactionsOf(id), [
    { emoji_name: 'party_parrot', emoji_code: parrotId, reaction_type: 'realm_emoji', user_id: alice.id },
    { emoji_name: 'party_parrot', emoji_code: parrotId, reaction_type: 'realm_emoji', user_id: bob.id },
  ]);
  ok(await unreact(bob, id, { emoji_code: parrotId, reaction_type: 'realm_emoji' }));

  // Deactivated: no longer a name, refused by id; but joining an existing reaction and removing still work.
  ok(await alice.delete('/realm/emoji/party_parrot'));
  const other = await channelMessage();
  expectError(await react(bob, other, { emoji_name: 'party_parrot' }), "Emoji 'party_parrot' does not exist");
  expectError(
    await react(bob, other, { emoji_name: 'party_parrot', emoji_code: parrotId, reaction_type: 'realm_emoji' }),
    'This custom emoji has been deactivated.',
  );
  ok(await react(bob, id, { emoji_name: 'party_parrot', emoji_code: parrotId, reaction_type: 'realm_emoji' }));
  ok(await unreact(alice, id, { emoji_code: parrotId, reaction_type: 'realm_emoji' }));
  ok(await unreact(bob, id, { emoji_code: parrotId, reaction_type: 'realm_emoji' }));
  assert.deepEqual(await reactionsOf(id), []);

  // A custom emoji named like a Unicode one wins for a bare name (administrators may override).
  const octopusId = await uploadEmoji(admin, 'octopus');
  const msg = await channelMessage();
  ok(await react(alice, msg, { emoji_name: 'octopus' }));
  ok(await react(bob, msg, { emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji' }));
  assert.deepEqual(
    (await reactionsOf(msg)).map((r) => [r.emoji_name, r.emoji_code, r.reaction_type]),
    [
      ['octopus', octopusId, 'realm_emoji'],
      ['octopus', '1f419', 'unicode_emoji'],
    ],
  );
  // Removing by the bare name looks the code up the same way, under the type given (default unicode).
  expectError(await unreact(alice, msg, { emoji_name: 'octopus' }), "Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST');
  ok(await unreact(alice, msg, { emoji_name: 'octopus', reaction_type: 'realm_emoji' }));
  ok(await admin.delete('/realm/emoji/octopus'));
});

async function dmTo(sender: Client, to: Client[]): Promise<number> {
  return ok(await sender.post('/messages', { type: 'direct', to: JSON.stringify(to.map((c) => c.id)), content: 'a direct message' })).id;
}

// --- errors ---

test('every validation error, and a failed request changes nothing', async () => {
  const id = await channelMessage();
  ok(await react(alice, id, { emoji_name: 'tada' }));
  const events = await listen(bob);
  const before = await reactionsOf(id);
  const cases: [Record<string, unknown>, string][] = [
    [{ emoji_name: 'not_an_emoji' }, "Emoji 'not_an_emoji' does not exist"],
    [{ emoji_name: 'fried_egg' }, "Emoji 'fried_egg' does not exist"],
    [{ emoji_name: 'tada', emoji_code: 'ffffff', reaction_type: 'unicode_emoji' }, 'Invalid emoji code.'],
    [{ emoji_name: 'octopus', emoji_code: '1f60d', reaction_type: 'unicode_emoji' }, 'Invalid emoji name.'],
    [{ emoji_name: 'no_such_name', emoji_code: '1f60d' }, "Emoji 'no_such_name' does not exist"],
    [{ emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'bogus_emoji' }, 'Invalid emoji type.'],
    [{ emoji_name: 'zulip', emoji_code: 'other', reaction_type: 'svc_extra_emoji' }, 'Invalid emoji code.'],
    [{ emoji_name: 'other', emoji_code: 'zulip', reaction_type: 'svc_extra_emoji' }, 'Invalid emoji name.'],
    [{ emoji_name: 'ghost_emoji', emoji_code: '999999', reaction_type: 'realm_emoji' }, 'Invalid custom emoji.'],
    [{ emoji_name: 'ghost_emoji', emoji_code: 'abc', reaction_type: 'realm_emoji' }, 'Invalid custom emoji.'],
  ];
  for (const [params, msg] of cases) expectError(await react(bob, id, params), msg);
  const wrongName = await uploadEmoji(admin, 'blob_wave');
  expectError(await react(bob, id, { emoji_name: 'blob_other', emoji_code: wrongName, reaction_type: 'realm_emoji' }), 'Invalid custom emoji name.');

  expectError(await react(alice, id, { emoji_name: 'tada' }), 'Reaction already exists.', 'REACTION_ALREADY_EXISTS');
  expectError(
    await react(alice, id, { emoji_name: 'party_popper', emoji_code: '1f389', reaction_type: 'unicode_emoji' }),
    'Reaction already exists.',
    'REACTION_ALREADY_EXISTS',
  );
  expectError(await unreact(bob, id, { emoji_name: 'tada' }), "Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST');
  expectError(await unreact(bob, id, { emoji_code: '1f389', reaction_type: 'realm_emoji' }), "Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST');
  expectError(await unreact(bob, id, {}), 'At least one of the following arguments must be present: emoji_name, emoji_code');
  expectError(await unreact(bob, id, { emoji_name: 'not_an_emoji' }), "Emoji 'not_an_emoji' does not exist");
  expectError(await unreact(bob, id, { reaction_type: 'unicode_emoji' }), 'At least one of the following arguments must be present: emoji_name, emoji_code');
  const missing = await react(bob, id, { emoji_code: '1f389' });
  assert.deepEqual(missing.body, { result: 'error', msg: "Missing 'emoji_name' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'emoji_name' });
  expectError(await react(bob, 999_999, { emoji_name: 'tada' }), 'Invalid message(s)');
  expectError(await unreact(bob, 999_999, { emoji_name: 'tada' }), 'Invalid message(s)');

  assert.deepEqual(await reactionsOf(id), before);
  assert.deepEqual(await events.take(), []);
  // Bob has a copy (subscribed); carol has none and her failed attempt made none.
  expectError(await react(carol, id, { emoji_name: 'not_an_emoji' }), "Emoji 'not_an_emoji' does not exist");
  assert.equal(await copyOf(carol.id, id), undefined);
});

// --- who may react ---

test('permission matrix on a public channel message; guests need a subscription', async () => {
  const id = await channelMessage();
  const roles: [Role, boolean][] = [
    [ROLE.GUEST, false],
    [ROLE.MEMBER, true],
    [ROLE.MODERATOR, true],
    [ROLE.ADMINISTRATOR, true],
    [ROLE.OWNER, true],
  ];
  for (const [role, allowed] of roles) {
    const user = await server.createUser({ role });
    const res = await react(user, id, { emoji_name: 'tada' });
    if (allowed) ok(res);
    else expectError(res, 'Invalid message(s)');
    if (allowed) ok(await unreact(user, id, { emoji_name: 'tada' }));
    else expectError(await unreact(user, id, { emoji_name: 'tada' }), 'Invalid message(s)');
  }
  expectError(await react(guest, id, { emoji_name: 'tada' }), 'Invalid message(s)');
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }], principals: [guest.id] }));
  ok(await react(guest, id, { emoji_name: 'tada' }));
  ok(await admin.delete('/users/me/subscriptions', { subscriptions: ['Denmark'], principals: [guest.id] }));
  assert.deepEqual(
    (await reactionsOf(id)).map((r) => r.user_id),
    [guest.id],
  );
});

test('private channels: outsiders cannot react; with protected history, neither can later subscribers', async () => {
  ok(
    await admin.post('/users/me/subscriptions', {
      subscriptions: [{ name: 'Secret' }],
      principals: [admin.id, alice.id],
      invite_only: true,
      history_public_to_subscribers: false,
    }),
  );
  const id = await channelMessage(alice, 'Secret');
  for (const outsider of [bob, carol, guest]) {
    expectError(await react(outsider, id, { emoji_name: 'tada' }), 'Invalid message(s)');
    expectError(await unreact(outsider, id, { emoji_name: 'tada' }), 'Invalid message(s)');
  }
  // Subscribed after the message: no copy, and the history is not theirs.
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Secret' }], principals: [bob.id] }));
  expectError(await react(bob, id, { emoji_name: 'tada' }), 'Invalid message(s)');
  ok(await react(admin, id, { emoji_name: 'tada' }));
  assert.equal(await copyOf(bob.id, id), undefined);
});

test('direct messages: only participants may react', async () => {
  const id = await dmTo(alice, [bob]);
  ok(await react(bob, id, { emoji_name: 'joy' }));
  ok(await react(alice, id, { emoji_name: 'joy' }));
  for (const outsider of [carol, admin, server.owner, guest]) expectError(await react(outsider, id, { emoji_name: 'joy' }), 'Invalid message(s)');
});

test('messages in archived channels can no longer be reacted to', async () => {
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Attic' }], principals: [admin.id, alice.id] }));
  const id = await channelMessage(alice, 'Attic');
  ok(await react(alice, id, { emoji_name: 'tada' }));
  const attic = (await admin.get('/get_stream_id', { stream: 'Attic' })).body.stream_id;
  ok(await admin.delete(`/streams/${attic}`));
  expectError(await react(admin, id, { emoji_name: 'tada' }), 'Invalid message(s)');
  expectError(await unreact(alice, id, { emoji_name: 'tada' }), 'Invalid message(s)');
});

test('other organizations’ messages are invalid', async () => {
  const outsider = await server.createOrganization('elsewhere');
  const id = await channelMessage();
  expectError(await react(outsider, id, { emoji_name: 'tada' }), 'Invalid message(s)');
  assert.deepEqual(await reactionsOf(id), []);
});

// --- historical copies ---

test('reacting to public history creates a read, historical copy; an existing copy keeps its flags', async () => {
  const id = await channelMessage();
  assert.equal(await copyOf(carol.id, id), undefined);
  ok(await react(carol, id, { emoji_name: 'tada' }));
  assert.deepEqual(await copyOf(carol.id, id), { flags: FLAG_BITS.read | FLAG_BITS.historical });
  assert.deepEqual(ok(await carol.get(`/messages/${id}`)).message.flags, ['read', 'historical']);
  // Removing the reaction keeps the copy (it keeps carol hearing of the message).
  ok(await unreact(carol, id, { emoji_name: 'tada' }));
  assert.deepEqual(await copyOf(carol.id, id), { flags: FLAG_BITS.read | FLAG_BITS.historical });

  // Bob received it unread: reacting changes no flags.
  const before = await copyOf(bob.id, id);
  assert.equal(before!.flags & FLAG_BITS.read, 0);
  ok(await react(bob, id, { emoji_name: 'tada' }));
  assert.deepEqual(await copyOf(bob.id, id), before);
});

test('a private channel with shared history: a later subscriber may react, and gets a copy', async () => {
  ok(
    await admin.post('/users/me/subscriptions', {
      subscriptions: [{ name: 'Shared' }],
      principals: [admin.id, alice.id],
      invite_only: true,
      history_public_to_subscribers: true,
    }),
  );
  const id = await channelMessage(alice, 'Shared');
  expectError(await react(carol, id, { emoji_name: 'tada' }), 'Invalid message(s)');
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Shared' }], principals: [carol.id] }));
  const carolEvents = await listen(carol);
  ok(await react(alice, id, { emoji_name: 'tada' }));
  // Carol has no copy yet, but as a subscriber with the history she hears of reactions.
  assert.deepEqual(withoutId(await carolEvents.take()), [reactionEvent('add', id, alice, 'Alice Able', ['tada', '1f389', 'unicode_emoji'])]);
  ok(await react(carol, id, { emoji_name: 'tada' }));
  assert.deepEqual(await copyOf(carol.id, id), { flags: FLAG_BITS.read | FLAG_BITS.historical });
});

// --- events ---

test('reaction events reach the message’s recipients, historical reactors and public-channel listeners', async () => {
  const id = await channelMessage();
  const [onAlice, onBob, onCarol, onGuest] = [await listen(alice), await listen(bob), await listen(carol), await listen(guest)];
  const onAll = await listen(server.owner, { all_public_streams: true });
  ok(await react(bob, id, { emoji_name: 'heart_eyes' }));
  const added = reactionEvent('add', id, bob, 'Bob Baker', ['heart_eyes', '1f60d', 'unicode_emoji']);
  assert.deepEqual(withoutId(await onAlice.take()), [added]);
  assert.deepEqual(withoutId(await onBob.take()), [added]);
  assert.deepEqual(withoutId(await onAll.take()), [added]);
  assert.deepEqual(await onCarol.take(), []);
  assert.deepEqual(await onGuest.take(), []);

  // Carol reacts to history: from now on she hears of this message's reactions.
  ok(await react(carol, id, { emoji_name: 'heart_eyes' }));
  const carolAdded = reactionEvent('add', id, carol, 'Carol Cole', ['heart_eyes', '1f60d', 'unicode_emoji']);
  for (const q of [onAlice, onBob, onCarol, onAll]) assert.deepEqual(withoutId(await q.take()), [carolAdded]);
  ok(await unreact(bob, id, { emoji_code: '1f60d' }));
  const removed = reactionEvent('remove', id, bob, 'Bob Baker', ['heart_eyes', '1f60d', 'unicode_emoji']);
  for (const q of [onAlice, onBob, onCarol, onAll]) assert.deepEqual(withoutId(await q.take()), [removed]);
  assert.deepEqual(await onGuest.take(), []);

  // Direct messages: the participants only, never public-channel listeners.
  const dm = await dmTo(alice, [bob]);
  ok(await react(alice, dm, { emoji_name: 'zulip' }));
  const dmAdded = reactionEvent('add', dm, alice, 'Alice Able', ['zulip', 'zulip', 'svc_extra_emoji']);
  assert.deepEqual(withoutId(await onAlice.take()), [dmAdded]);
  assert.deepEqual(withoutId(await onBob.take()), [dmAdded]);
  for (const q of [onCarol, onGuest, onAll]) assert.deepEqual(await q.take(), []);

  // Private channels: not for public-channel listeners either.
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Hidden' }], principals: [admin.id, alice.id], invite_only: true }));
  const hidden = await channelMessage(alice, 'Hidden');
  ok(await react(alice, hidden, { emoji_name: 'tada' }));
  assert.equal((await onAlice.take()).length, 1);
  for (const q of [onBob, onCarol, onGuest, onAll]) assert.deepEqual(await q.take(), []);
});

test('reactions leave register state in sync', async () => {
  const id = await channelMessage();
  const viewer = await registerViewer(server, bob);
  const author = await registerViewer(server, alice);
  ok(await react(bob, id, { emoji_name: 'tada' }));
  ok(await react(alice, id, { emoji_name: 'zulip' }));
  await expectStateInSync(server, viewer, 'after adding reactions');
  await expectStateInSync(server, author, 'after adding reactions (author)');
  ok(await unreact(bob, id, { emoji_name: 'tada' }));
  await expectStateInSync(server, viewer, 'after removing a reaction');
});

// The historical copy raises the fresh `max_message_id` (register's `message` section counts every
// user_messages row, as Zulip does) while no event tells the queue: see the report to the lead.
test('a historical reaction leaves register state in sync', async () => {
  const id = await channelMessage();
  const outsider = await registerViewer(server, carol);
  ok(await react(carol, id, { emoji_name: 'tada' }));
  await expectStateInSync(server, outsider, 'after a historical reaction');
  ok(await unreact(carol, id, { emoji_name: 'tada' }));
  await expectStateInSync(server, outsider, 'after removing a historical reaction');
});

// --- taking part in a topic ---

test('reacting is taking part: topics are followed or unmuted for users who asked for it', async () => {
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Quiet' }], principals: [admin.id, alice.id, bob.id] }));
  const quiet = (await admin.get('/get_stream_id', { stream: 'Quiet' })).body.stream_id;
  const topicEvents = async (c: Client) => listen(c, { event_types: ['user_topic'] });

  // Default settings: nothing changes.
  const first = await channelMessage(alice, 'Denmark', 'defaults');
  const onBob = await topicEvents(bob);
  ok(await react(bob, first, { emoji_name: 'tada' }));
  assert.deepEqual(await onBob.take(), []);

  // "Follow topics I take part in".
  ok(await bob.patch('/settings', { automatically_follow_topics_policy: 1 }));
  const second = await channelMessage(alice, 'Denmark', 'followed here');
  ok(await react(bob, second, { emoji_name: 'tada' }));
  assert.deepEqual(
    (await onBob.take()).map((e) => [e.type, e.stream_id, e.topic_name, e.visibility_policy]),
    [['user_topic', denmark, 'followed here', 3]],
  );
  // Already followed: no second event; joining someone else's reaction counts too.
  ok(await react(alice, second, { emoji_name: 'joy' }));
  ok(await react(bob, second, { emoji_name: 'joy' }));
  assert.deepEqual(await onBob.take(), []);

  // "Unmute topics I take part in, in muted channels".
  const onAlice = await topicEvents(alice);
  ok(await alice.patch('/settings', { automatically_unmute_topics_in_muted_streams_policy: 1 }));
  ok(await alice.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: quiet, property: 'is_muted', value: true }] }));
  const muted = await channelMessage(bob, 'Quiet', 'in a muted channel');
  ok(await react(alice, muted, { emoji_name: 'tada' }));
  assert.deepEqual(
    (await onAlice.take()).map((e) => [e.topic_name, e.visibility_policy]),
    [['in a muted channel', 2]],
  );

  // Not subscribed (a historical reaction): no policy.
  const onCarol = await topicEvents(carol);
  ok(await carol.patch('/settings', { automatically_follow_topics_policy: 1 }));
  ok(await react(carol, muted, { emoji_name: 'tada' }));
  assert.deepEqual(await onCarol.take(), []);
});

test('names and codes with NUL name no emoji and no reaction; a refused request changes nothing', async () => {
  const id = (await alice.post('/messages', { type: 'stream', to: 'Denmark', topic: 'nul', content: 'x' })).body.id;
  const path = `/messages/${id}/reactions`;
  assert.deepEqual((await bob.post(path, { emoji_name: 'smile\u0000' })).body, {
    result: 'error',
    msg: "Emoji 'smile\u0000' does not exist",
    code: 'BAD_REQUEST',
  });
  assert.equal((await bob.post(path, { emoji_name: 'smile', emoji_code: '1f642\u0000', reaction_type: 'unicode_emoji' })).body.msg, 'Invalid emoji code.');
  assert.equal((await bob.post(path, { emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'unicode\u0000' })).body.msg, 'Invalid emoji type.');
  const removed = await bob.delete(path, { emoji_code: '1f642\u0000' });
  assert.equal(removed.body.code, 'REACTION_DOES_NOT_EXIST');
  assert.deepEqual((await bob.get(`/messages/${id}`)).body.message.reactions, []);
});
