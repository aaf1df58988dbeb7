// Muted users (issue 11 point 4; OpenAPI mute-user/unmute-user, the
// `muted_users` event and register key): the list, the errors, and messages from
// a muted user that arrive read, before and after muting.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer, ok } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';

let server: TestServer;
let alice: Client;
let bob: Client;
let carol: Client;
let guest: Client;

before(async () => {
  server = await startTestServer();
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  carol = await server.createUser({ email: 'carol@example.com', fullName: 'Carol Cole' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com', fullName: 'Gus Guest' });
  ok(await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }], principals: [alice.id, bob.id, carol.id, guest.id] }));
});
after(() => server.close());

function expectError(res: { status: number; body: any }, msg: string) {
  assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: { result: 'error', msg, code: 'BAD_REQUEST' } });
}

const muted = async (c: Client) => ok(await c.post('/register', { fetch_event_types: ['muted_users'] })).muted_users;
const send = async (from: Client, content = 'hello') => ok(await from.post('/messages', { type: 'stream', to: 'Denmark', topic: 'mutes', content })).id;
const sendDm = async (from: Client, to: Client) => ok(await from.post('/messages', { type: 'direct', to: [to.id], content: 'psst' })).id;
const flagsOf = async (c: Client, id: number) => ok(await c.get(`/messages/${id}`)).message.flags;

async function events(c: Client, queueId: string): Promise<any[]> {
  const res = ok(await c.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true }));
  return res.events.map(({ id: _id, ...e }: any) => e);
}

test('mute and unmute: list with timestamps, events with the whole list, state in sync', async () => {
  const viewer = await registerViewer(server, alice);
  const queue = ok(await alice.post('/register', { event_types: ['muted_users'] })).queue_id;
  const before = Math.floor(Date.now() / 1000);
  assert.deepEqual(ok(await alice.post(`/users/me/muted_users/${bob.id}`)), { result: 'success', msg: '' });
  ok(await alice.post(`/users/me/muted_users/${carol.id}`));
  const list = await muted(alice);
  assert.deepEqual(
    list.map((m: any) => m.id),
    [bob.id, carol.id],
  );
  for (const m of list) {
    assert.deepEqual(Object.keys(m), ['id', 'timestamp']);
    assert.ok(Number.isInteger(m.timestamp) && m.timestamp >= before - 1 && m.timestamp <= Date.now() / 1000 + 1);
  }
  await expectStateInSync(server, viewer, 'after muting two');
  ok(await alice.delete(`/users/me/muted_users/${bob.id}`));
  assert.deepEqual(await muted(alice), [list[1]]);
  await expectStateInSync(server, viewer, 'after unmuting one');
  assert.deepEqual(await events(alice, queue), [
    { type: 'muted_users', muted_users: [list[0]] },
    { type: 'muted_users', muted_users: list },
    { type: 'muted_users', muted_users: [list[1]] },
  ]);
  assert.deepEqual(await muted(bob), [], "the list is the muter's own");
  ok(await alice.delete(`/users/me/muted_users/${carol.id}`));
});

test("the errors: self, twice, not muted, unknown and other organizations' users; failures change nothing", async () => {
  expectError(await alice.post(`/users/me/muted_users/${alice.id}`), 'Cannot mute self');
  ok(await alice.post(`/users/me/muted_users/${bob.id}`));
  const list = await muted(alice);
  expectError(await alice.post(`/users/me/muted_users/${bob.id}`), 'User already muted');
  expectError(await alice.post('/users/me/muted_users/999999'), 'No such user');
  expectError(await alice.delete(`/users/me/muted_users/${carol.id}`), 'User is not muted');
  expectError(await alice.delete('/users/me/muted_users/999999'), 'No such user');
  const outsider = await server.createOrganization('elsewhere');
  expectError(await alice.post(`/users/me/muted_users/${outsider.id}`), 'No such user');
  expectError(await outsider.post(`/users/me/muted_users/${alice.id}`), 'No such user');
  assert.deepEqual(await muted(alice), list, 'nothing changed');
  // Two identical requests at once end as if one came after the other.
  const results = await Promise.all([carol.post(`/users/me/muted_users/${bob.id}`), carol.post(`/users/me/muted_users/${bob.id}`)]);
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 400]);
  assert.equal((await muted(carol)).length, 1);
  ok(await carol.delete(`/users/me/muted_users/${bob.id}`));
  ok(await alice.delete(`/users/me/muted_users/${bob.id}`));
});

test("bots, deactivated users and a guest's choices: as the reference, all can be muted", async () => {
  const bot = await server.createUser({ fullName: 'Beep Bot' });
  await server.svc.db.updateTable('users').set({ is_bot: true, bot_type: 1, bot_owner_id: alice.id }).where('id', '=', bot.id).execute();
  ok(await guest.post(`/users/me/muted_users/${bot.id}`));
  const gone = await server.createUser({ fullName: 'Gone Soon' });
  ok(await server.owner.delete(`/users/${gone.id}`));
  ok(await guest.post(`/users/me/muted_users/${gone.id}`));
  assert.deepEqual(
    (await muted(guest)).map((m: any) => m.id),
    [bot.id, gone.id],
  );
  ok(await guest.delete(`/users/me/muted_users/${gone.id}`));
  ok(await guest.delete(`/users/me/muted_users/${bot.id}`));
  const deactivated = await gone.post(`/users/me/muted_users/${alice.id}`);
  assert.equal(deactivated.status, 401, 'a deactivated user cannot mute');
});

test("muting marks the muted user's messages read, and new ones arrive read", async () => {
  const earlier = [await send(bob, 'one'), await send(bob, 'two'), await sendDm(bob, carol)];
  const fromAlice = await send(alice, 'not muted');
  const viewer = await registerViewer(server, carol);
  const queue = ok(await carol.post('/register', { event_types: ['update_message_flags', 'message'] })).queue_id;
  for (const id of earlier) assert.ok(!(await flagsOf(carol, id)).includes('read'));

  ok(await carol.post(`/users/me/muted_users/${bob.id}`));
  for (const id of earlier) assert.ok((await flagsOf(carol, id)).includes('read'), 'earlier messages are read now');
  assert.ok(!(await flagsOf(carol, fromAlice)).includes('read'), "others' messages stay unread");
  assert.ok(!(await flagsOf(alice, earlier[0]!)).includes('read'), 'only for the muter');
  await expectStateInSync(server, viewer, "after muting: unread counts lose the muted user's messages");

  const later = await send(bob, 'three');
  const laterDm = await sendDm(bob, carol);
  assert.ok((await flagsOf(carol, later)).includes('read'));
  assert.ok((await flagsOf(carol, laterDm)).includes('read'));
  assert.ok(!(await flagsOf(alice, later)).includes('read'));
  await expectStateInSync(server, viewer, 'after messages from a muted user');
  const seen = await events(carol, queue);
  assert.deepEqual(
    seen.find((e) => e.type === 'update_message_flags'),
    {
      type: 'update_message_flags',
      op: 'add',
      operation: 'add',
      flag: 'read',
      messages: [...earlier].sort((a, b) => a - b),
      all: false,
    },
  );
  assert.ok(seen.find((e) => e.type === 'message' && e.message.id === later).flags.includes('read'), 'the message event says read');

  // Unmuting does not bring anything back; new messages are unread again.
  ok(await carol.delete(`/users/me/muted_users/${bob.id}`));
  assert.ok((await flagsOf(carol, later)).includes('read'));
  const after = await send(bob, 'four');
  assert.ok(!(await flagsOf(carol, after)).includes('read'));
  await expectStateInSync(server, viewer, 'after unmuting');
});
