// User status (issue 11 point 3; OpenAPI update-status, get-user-status, the
// `user_status` event and register key): text, emoji, `away` as the legacy face
// of presence_enabled, who sees it, and every refusal.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer, ok } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';

let server: TestServer;
let alice: Client;
let bob: Client;
let guest: Client;
let bot: Client;

before(async () => {
  server = await startTestServer();
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com', fullName: 'Gus Guest' });
  // No API creates bots yet: a user made one, as other tests do.
  bot = await server.createUser({ fullName: 'Helper Bot' });
  await server.svc.db.updateTable('users').set({ is_bot: true, bot_type: 1, bot_owner_id: alice.id }).where('id', '=', bot.id).execute();
});
after(() => server.close());

function expectError(res: { status: number; body: any }, msg: string) {
  assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: { result: 'error', msg, code: 'BAD_REQUEST' } });
}

const statusOf = async (viewer: Client, userId: number) => ok(await viewer.get(`/users/${userId}/status`)).status;
const registered = async (viewer: Client) => ok(await viewer.post('/register', { fetch_event_types: ['user_status'] })).user_status;

async function statusEvents(c: Client, queueId: string): Promise<any[]> {
  const res = ok(await c.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true }));
  return res.events.filter((e: any) => e.type === 'user_status').map(({ id: _id, ...e }: any) => e);
}

test('text and emoji: set, read back, registered, announced with only what changed', async () => {
  const viewers = [await registerViewer(server, bob), await registerViewer(server, alice)];
  const queue = ok(await bob.post('/register', { event_types: ['user_status'] })).queue_id;
  assert.deepEqual(await statusOf(bob, alice.id), {}, 'no status yet');
  assert.equal((await registered(bob))[alice.id], undefined);

  ok(await alice.post('/users/me/status', { status_text: '  on vacation  ', emoji_name: 'car' }));
  const full = { status_text: 'on vacation', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' };
  assert.deepEqual(await statusOf(bob, alice.id), full);
  assert.deepEqual(ok(await alice.get('/users/me/status')).status, full);
  assert.deepEqual((await registered(bob))[alice.id], full);
  for (const v of viewers) await expectStateInSync(server, v, 'after setting text and emoji');

  // Only the text: the emoji stays, the event names the text only.
  ok(await alice.post('/users/me/status', { status_text: 'back soon' }));
  assert.deepEqual(await statusOf(bob, alice.id), { ...full, status_text: 'back soon' });
  // An empty name clears the emoji.
  ok(await alice.post('/users/me/status', { emoji_name: '' }));
  assert.deepEqual(await statusOf(bob, alice.id), { status_text: 'back soon' });
  for (const v of viewers) await expectStateInSync(server, v, 'after partial changes');
  // Empty text: nothing left to show, and register lists only users with a status.
  ok(await alice.post('/users/me/status', { status_text: '' }));
  assert.deepEqual(await statusOf(bob, alice.id), {});
  assert.equal((await registered(bob))[alice.id], undefined);
  for (const v of viewers) await expectStateInSync(server, v, 'after clearing');

  assert.deepEqual(await statusEvents(bob, queue), [
    { type: 'user_status', user_id: alice.id, ...full },
    { type: 'user_status', user_id: alice.id, status_text: 'back soon' },
    { type: 'user_status', user_id: alice.id, emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji' },
    { type: 'user_status', user_id: alice.id, status_text: '' },
  ]);
});

test('emoji given by code and type, custom and extra emoji, and every emoji refusal', async () => {
  ok(await bob.post('/users/me/status', { emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'unicode_emoji' }));
  const cases: [Record<string, string>, string][] = [
    [{ emoji_name: 'no_such_emoji' }, "Emoji 'no_such_emoji' does not exist"],
    // Nothing among away, status_text and emoji_name: that is said first.
    [{ emoji_code: '1f697' }, 'Client did not pass any new values.'],
    [{ reaction_type: 'unicode_emoji', status_text: 'x' }, 'Client must pass emoji_name if they pass either emoji_code or reaction_type.'],
    [{ emoji_name: 'car', emoji_code: 'zzzz', reaction_type: 'unicode_emoji' }, 'Invalid emoji code.'],
    [{ emoji_name: 'car', emoji_code: '1f642', reaction_type: 'unicode_emoji' }, 'Invalid emoji name.'],
    [{ emoji_name: 'car', emoji_code: '1f697', reaction_type: 'nonsense' }, 'Invalid emoji type.'],
    [{ emoji_name: 'car', emoji_code: '999', reaction_type: 'realm_emoji' }, 'Invalid custom emoji.'],
    [{}, 'Client did not pass any new values.'],
    [{ status_text: 'x'.repeat(61) }, 'status_text is too long (limit: 60 characters)'],
  ];
  const before = await statusOf(alice, bob.id);
  for (const [params, msg] of cases) expectError(await bob.post('/users/me/status', params), msg);
  assert.deepEqual(await statusOf(alice, bob.id), before, 'failed requests changed nothing');
  // Sixty characters after stripping are fine.
  ok(await bob.post('/users/me/status', { status_text: ` ${'y'.repeat(60)} ` }));
  ok(await bob.post('/users/me/status', { emoji_name: 'zulip' }));
  assert.deepEqual(await statusOf(alice, bob.id), { status_text: 'y'.repeat(60), emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'svc_extra_emoji' });
});

test('away is presence_enabled turned off: in the status, the settings, and register', async () => {
  const viewer = await registerViewer(server, guest);
  const own = await registerViewer(server, bob);
  ok(await bob.post('/users/me/status', { away: true }));
  assert.equal((await statusOf(guest, bob.id)).away, true);
  const settings = ok(await bob.post('/register', { fetch_event_types: ['user_settings'] })).user_settings;
  assert.equal(settings.presence_enabled, false);
  await expectStateInSync(server, viewer, 'after away');
  await expectStateInSync(server, own, 'after away (own view)');
  ok(await bob.post('/users/me/status', { away: false }));
  assert.equal((await statusOf(guest, bob.id)).away, undefined);
  await expectStateInSync(server, viewer, 'after back');
  // Turning presence sharing off in the settings reads as away too.
  ok(await bob.patch('/settings', { presence_enabled: false }));
  assert.equal((await statusOf(guest, bob.id)).away, true);
  await expectStateInSync(server, own, 'after presence_enabled in the settings (own view)');
  ok(await bob.patch('/settings', { presence_enabled: true }));
  await expectStateInSync(server, own, 'after presence_enabled back on (own view)');
  expectError(await bob.post('/users/me/status', { away: 'yes' }), 'away is not valid JSON');
});

test("who may: bots may not set one; unknown, bot, deactivated and other organizations' users are refused", async () => {
  expectError(await bot.post('/users/me/status', { status_text: 'beep' }), 'This endpoint does not accept bot requests.');
  expectError(await alice.get(`/users/${bot.id}/status`), 'No such user');
  expectError(await alice.get('/users/999999/status'), 'No such user');
  const gone = await server.createUser({ fullName: 'Gone Soon' });
  ok(await gone.post('/users/me/status', { status_text: 'leaving' }));
  const viewer = await registerViewer(server, alice);
  assert.equal((await registered(alice))[gone.id].status_text, 'leaving');
  ok(await server.owner.delete(`/users/${gone.id}`));
  expectError(await alice.get(`/users/${gone.id}/status`), 'User is deactivated');
  assert.equal((await registered(alice))[gone.id], undefined, 'deactivated users have no status in register');
  await expectStateInSync(server, viewer, 'after deactivating a user with a status');
  const deactivated = await gone.get('/users/me/status');
  assert.equal(deactivated.status, 401, 'a deactivated user cannot ask');

  const outsider = await server.createOrganization('elsewhere');
  expectError(await outsider.get(`/users/${alice.id}/status`), 'No such user');
  ok(await outsider.post('/users/me/status', { status_text: 'far away' }));
  assert.equal((await registered(alice))[outsider.id], undefined, "another organization's statuses stay there");
  const queue = ok(await alice.post('/register', { event_types: ['user_status'] })).queue_id;
  ok(await outsider.post('/users/me/status', { status_text: 'still far' }));
  assert.deepEqual(await statusEvents(alice, queue), []);
});

test('a guest who may not see a user sees neither the status nor its events (can_access_all_users_group)', async () => {
  const groups = ok(await server.owner.get('/user_groups')).user_groups;
  const sys = (name: string) => groups.find((g: any) => g.name === name).id;
  ok(await server.owner.patch('/realm', { can_access_all_users_group: { new: sys('role:members') } }));
  try {
    const limited = await server.createUser({ role: ROLE.GUEST, fullName: 'Lim Ited' });
    const subject = await server.createUser({ fullName: 'Un Seen' });
    const queue = ok(await limited.post('/register', { event_types: ['user_status'] })).queue_id;
    const viewer = await registerViewer(server, limited);
    ok(await subject.post('/users/me/status', { status_text: 'hidden' }));
    assert.deepEqual(await statusEvents(limited, queue), []);
    assert.equal((await registered(limited))[subject.id], undefined);
    expectError(await limited.get(`/users/${subject.id}/status`), 'No such user');
    await expectStateInSync(server, viewer, 'limited guest');
  } finally {
    ok(await server.owner.patch('/realm', { can_access_all_users_group: { new: sys('role:everyone') } }));
  }
});
