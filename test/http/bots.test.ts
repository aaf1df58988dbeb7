// Bots (issue 17.1): creating, listing, changing, deactivating bots, their API
// keys, the organization's bot-creation settings, realm_bots and its events.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, Client, type TestServer } from '../support/server.ts';
import { registerViewer, expectStateInSync } from '../support/state.ts';
import { ROLE } from '../../src/users/roles.ts';
import { systemGroupIds } from '../../src/user_groups/group-setting.ts';

let server: TestServer;
let admin: Client;
let member: Client;
let other: Client;
let guest: Client;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com', fullName: 'Ada Admin' });
  member = await server.createUser({ email: 'member@example.com', fullName: 'Mem Ber' });
  other = await server.createUser({ email: 'other@example.com', fullName: 'Oth Er' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com', fullName: 'Gue St' });
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals: [admin.id, member.id, other.id] });
});
after(() => server.close());

/** A client speaking as the bot, with the key it was given. */
const asBot = (id: number, email: string, apiKey: string) => new Client(server, id, email, apiKey);

async function createBot(by: Client, params: Record<string, unknown>) {
  const res = await by.post('/bots', params);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { user_id: number; api_key: string; avatar_url: string; default_sending_stream: string | null };
}

test('a member creates a generic bot; it is announced and authenticates with its own key', async () => {
  const adminView = await registerViewer(server, admin);
  const ownerView = await registerViewer(server, member);
  const otherView = await registerViewer(server, other);
  const bot = await createBot(member, { full_name: 'Testy Bot', short_name: 'testy', default_sending_stream: 'general' });
  assert.match(bot.api_key, /^[A-Za-z0-9]{32}$/);
  assert.equal(bot.default_sending_stream, 'general');
  await expectStateInSync(server, adminView, 'admin after create');
  await expectStateInSync(server, ownerView, 'owner after create');
  await expectStateInSync(server, otherView, 'other member after create');

  const owned = (await member.post('/register', { fetch_event_types: ['realm_bot'] })).body.realm_bots;
  const entry = owned.find((b: any) => b.user_id === bot.user_id);
  assert.deepEqual(
    { ...entry, avatar_url: undefined },
    {
      email: 'testy-bot@confab.test',
      user_id: bot.user_id,
      full_name: 'Testy Bot',
      bot_type: 1,
      is_active: true,
      api_key: bot.api_key,
      default_sending_stream: 'general',
      default_events_register_stream: null,
      default_all_public_streams: false,
      avatar_url: undefined,
      owner_id: member.id,
      services: [],
    },
  );
  // Only those who administer it see its key.
  const theirs = (await other.post('/register', { fetch_event_types: ['realm_bot'] })).body.realm_bots;
  assert.equal(
    theirs.some((b: any) => b.user_id === bot.user_id),
    false,
  );
  const user = (await other.get(`/users/${bot.user_id}`)).body.user;
  assert.equal(user.is_bot, true);
  assert.equal(user.bot_owner_id, member.id);

  const me = await asBot(bot.user_id, 'testy-bot@confab.test', bot.api_key).get('/users/me');
  assert.equal(me.status, 200);
  assert.equal(me.body.user_id, bot.user_id);
  assert.equal(me.body.bot_type, 1);
  assert.equal(me.body.bot_owner_id, member.id);

  const listed = await member.get('/bots');
  assert.deepEqual(
    listed.body.bots.map((b: any) => [b.username, b.full_name, b.api_key]),
    [['testy-bot@confab.test', 'Testy Bot', bot.api_key]],
  );
});

test('POST /bots refuses bad names, taken names and unknown types, changing nothing', async () => {
  const before = await server.svc.db.selectFrom('users').select('id').execute();
  const cases: [Record<string, unknown>, string][] = [
    [{ full_name: 'Blank Short', short_name: '  ' }, 'Bad name or username'],
    [{ full_name: 'Second Testy', short_name: 'testy' }, 'Username already in use'],
    [{ full_name: 'Testy Bot', short_name: 'testy2' }, 'Name is already in use!'],
    [{ full_name: 'Mem Ber', short_name: 'clash' }, 'Name is already in use!'],
    [{ full_name: 'X', short_name: 'tiny' }, 'Name too short!'],
    [{ full_name: 'Typed Bot', short_name: 'typed', bot_type: 7 }, 'Invalid bot type'],
    [{ full_name: 'Embedded Bot', short_name: 'embedded', bot_type: 4 }, 'Embedded bots are not enabled.'],
    [{ full_name: 'Hook Bot', short_name: 'hook', bot_type: 3, payload_url: JSON.stringify('not a url') }, 'payload_url is not a URL'],
    [
      { full_name: 'Hook Bot', short_name: 'hook', bot_type: 3, payload_url: JSON.stringify('http://example.com'), interface_type: 9 },
      'Invalid interface type',
    ],
    [{ full_name: 'Lost Bot', short_name: 'lost', default_sending_stream: 'no such channel' }, "Channel 'no such channel' does not exist"],
  ];
  for (const [params, msg] of cases) {
    const res = await member.post('/bots', params);
    assert.equal(res.status, 400, JSON.stringify(params));
    assert.equal(res.body.msg, msg);
  }
  const guestTry = await guest.post('/bots', { full_name: 'Guest Bot', short_name: 'guestbot' });
  assert.equal(guestTry.body.msg, 'Not allowed for guest users');
  assert.equal((await server.svc.db.selectFrom('users').select('id').execute()).length, before.length);
});

test('can_create_bots_group and can_create_write_only_bots_group decide who creates which bots', async () => {
  const groups = await systemGroupIds(server.svc.db, 1);
  const set = await server.owner.patch('/realm', {
    can_create_bots_group: JSON.stringify({ new: groups['role:administrators'] }),
    can_create_write_only_bots_group: JSON.stringify({ new: groups['role:administrators'] }),
  });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  try {
    const refused = await member.post('/bots', { full_name: 'Nope Bot', short_name: 'nope' });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.msg, 'Insufficient permission');
    await server.owner.patch('/realm', { can_create_write_only_bots_group: JSON.stringify({ new: groups['role:members'] }) });
    const generic = await member.post('/bots', { full_name: 'Nope Bot', short_name: 'nope' });
    assert.equal(generic.body.msg, 'Invalid bot type');
    const incoming = await member.post('/bots', { full_name: 'Incoming Bot', short_name: 'incoming', bot_type: 2, service_name: 'github' });
    assert.equal(incoming.status, 200, JSON.stringify(incoming.body));
    // An incoming-webhook bot sends messages, and nothing else.
    const bot = asBot(incoming.body.user_id, 'incoming-bot@confab.test', incoming.body.api_key);
    const me = await bot.get('/users/me');
    assert.equal(me.status, 401);
    assert.equal(me.body.msg, 'This API is not available to incoming webhook bots.');
    const sent = await bot.post('/messages', { type: 'stream', to: 'general', topic: 'hooks', content: 'hello' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const config = await server.svc.db.selectFrom('bot_config').select(['key', 'value']).where('bot_id', '=', incoming.body.user_id).execute();
    assert.deepEqual(config, [{ key: 'integration_id', value: 'github' }]);
    // Administrators are always allowed.
    assert.equal((await admin.post('/bots', { full_name: 'Admin Bot', short_name: 'adminbot' })).status, 200);
  } finally {
    await server.owner.patch('/realm', {
      can_create_bots_group: JSON.stringify({ new: groups['role:members'] }),
      can_create_write_only_bots_group: JSON.stringify({ new: groups['role:members'] }),
    });
  }
});

test('PATCH /bots changes name, channels, owner and service; others may not', async () => {
  const bot = await createBot(member, {
    full_name: 'Hook Bot',
    short_name: 'hooky',
    bot_type: 3,
    payload_url: JSON.stringify('http://hooks.example.com/in'),
    interface_type: 2,
  });
  const service = (await member.post('/register', { fetch_event_types: ['realm_bot'] })).body.realm_bots.find((b: any) => b.user_id === bot.user_id).services;
  assert.equal(service.length, 1);
  assert.equal(service[0].base_url, 'http://hooks.example.com/in');
  assert.equal(service[0].interface, 2);
  assert.match(service[0].token, /^[A-Za-z0-9]{32}$/);

  const refused = await other.patch(`/bots/${bot.user_id}`, { full_name: 'Stolen Bot' });
  assert.equal(refused.body.msg, 'Insufficient permission');
  assert.equal((await other.patch(`/bots/${member.id}`, { full_name: 'Not A Bot' })).body.msg, 'No such bot');

  const adminView = await registerViewer(server, admin);
  const ownerView = await registerViewer(server, member);
  const newOwnerView = await registerViewer(server, other);
  const renamed = await member.patch(`/bots/${bot.user_id}`, {
    full_name: 'Hook Bot Two',
    default_events_register_stream: 'general',
    default_all_public_streams: true,
    service_payload_url: JSON.stringify('http://hooks.example.com/v2'),
    service_interface: 1,
  });
  assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
  assert.equal(renamed.body.full_name, 'Hook Bot Two');
  assert.equal(renamed.body.default_events_register_stream, 'general');
  assert.equal(renamed.body.bot_owner, 'member@example.com');
  await expectStateInSync(server, adminView, 'admin after rename');
  await expectStateInSync(server, ownerView, 'owner after rename');

  const moved = await member.patch(`/bots/${bot.user_id}`, { bot_owner_id: other.id });
  assert.equal(moved.status, 200, JSON.stringify(moved.body));
  await expectStateInSync(server, adminView, 'admin after owner change');
  await expectStateInSync(server, ownerView, 'old owner after owner change');
  await expectStateInSync(server, newOwnerView, 'new owner after owner change');
  assert.equal((await member.patch(`/bots/${bot.user_id}`, { full_name: 'Mine Again' })).body.msg, 'Insufficient permission');
  assert.equal((await other.patch(`/bots/${bot.user_id}`, { bot_owner_id: bot.user_id })).body.msg, "Failed to change owner, bots can't own other bots");
  assert.equal((await other.patch(`/bots/${bot.user_id}`, { role: ROLE.ADMINISTRATOR })).body.msg, 'Must be an organization administrator');
});

test('a regenerated key works at once and the old one stops at once', async () => {
  const bot = await createBot(member, { full_name: 'Keyed Bot', short_name: 'keyed' });
  const old = asBot(bot.user_id, 'keyed-bot@confab.test', bot.api_key);
  assert.equal((await old.get('/users/me')).status, 200); // now remembered by the credential cache
  const view = await registerViewer(server, member);
  assert.equal((await other.post(`/bots/${bot.user_id}/api_key/regenerate`)).body.msg, 'Insufficient permission');
  const res = await member.post(`/bots/${bot.user_id}/api_key/regenerate`);
  assert.equal(res.status, 200);
  assert.notEqual(res.body.api_key, bot.api_key);
  const refused = await old.get('/users/me');
  assert.equal(refused.status, 401);
  assert.equal(refused.body.msg, 'Invalid API key');
  assert.equal((await asBot(bot.user_id, 'keyed-bot@confab.test', res.body.api_key).get('/users/me')).status, 200);
  await expectStateInSync(server, view, 'after regenerating');
});

test('DELETE /bots deactivates; administrators reactivate', async () => {
  const bot = await createBot(member, { full_name: 'Brief Bot', short_name: 'brief' });
  const client = asBot(bot.user_id, 'brief-bot@confab.test', bot.api_key);
  assert.equal((await other.delete(`/bots/${bot.user_id}`)).body.msg, 'Insufficient permission');
  const ownerView = await registerViewer(server, member);
  const adminView = await registerViewer(server, admin);
  const res = await member.delete(`/bots/${bot.user_id}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal((await client.get('/users/me')).body.msg, 'Account is deactivated');
  assert.equal(
    (await member.get('/bots')).body.bots.some((b: any) => b.full_name === 'Brief Bot'),
    false,
  );
  await expectStateInSync(server, ownerView, 'owner after deactivation');
  await expectStateInSync(server, adminView, 'admin after deactivation');
  const inRegister = (await member.post('/register', { fetch_event_types: ['realm_bot'] })).body.realm_bots.find((b: any) => b.user_id === bot.user_id);
  assert.equal(inRegister.is_active, false);

  assert.equal((await member.post(`/users/${bot.user_id}/reactivate`)).body.msg, 'Must be an organization administrator');
  assert.equal((await admin.post(`/users/${bot.user_id}/reactivate`)).status, 200);
  await expectStateInSync(server, ownerView, 'owner after reactivation');
  await expectStateInSync(server, adminView, 'admin after reactivation');
  assert.equal((await client.get('/users/me')).status, 200);
});

test('bots may not manage bots, and register lists the integrations', async () => {
  const bot = await createBot(member, { full_name: 'Meta Bot', short_name: 'meta' });
  const client = asBot(bot.user_id, 'meta-bot@confab.test', bot.api_key);
  const res = await client.post('/bots', { full_name: 'Child Bot', short_name: 'child' });
  assert.equal(res.body.msg, 'This endpoint does not accept bot requests.');
  const state = (await member.post('/register', { fetch_event_types: ['realm_incoming_webhook_bots', 'realm_embedded_bots'] })).body;
  assert.deepEqual(state.realm_embedded_bots, []);
  assert.deepEqual(
    state.realm_incoming_webhook_bots.map((i: any) => i.name),
    ['alertmanager', 'github', 'gitlab', 'grafana', 'slack_incoming'],
  );
});

test('a bot posts where its owner is subscribed, and nowhere else the owner cannot', async () => {
  await member.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], invite_only: true });
  const bot = await createBot(member, { full_name: 'Secret Bot', short_name: 'secret' });
  const client = asBot(bot.user_id, 'secret-bot@confab.test', bot.api_key);
  const sent = await client.post('/messages', { type: 'stream', to: 'secret', topic: 'x', content: 'in the owner’s channel' });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const stranger = await createBot(other, { full_name: 'Stranger Bot', short_name: 'stranger' });
  const refused = await asBot(stranger.user_id, 'stranger-bot@confab.test', stranger.api_key).post('/messages', {
    type: 'stream',
    to: 'secret',
    topic: 'x',
    content: 'let me in',
  });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.msg, "Not authorized to send to channel 'secret'");
});

test('deactivating a user deactivates their bots', async () => {
  const leaver = await server.createUser({ email: 'leaver@example.com', fullName: 'Lea Ver' });
  const bot = await createBot(leaver, { full_name: 'Orphan Bot', short_name: 'orphan' });
  const adminView = await registerViewer(server, admin);
  assert.equal((await admin.delete(`/users/${leaver.id}`)).status, 200);
  const row = await server.svc.db.selectFrom('users').select('is_active').where('id', '=', bot.user_id).executeTakeFirstOrThrow();
  assert.equal(row.is_active, false);
  assert.equal((await asBot(bot.user_id, 'orphan-bot@confab.test', bot.api_key).get('/users/me')).body.msg, 'Account is deactivated');
  await expectStateInSync(server, adminView, 'admin after the owner left');
});
