// Read receipts (issue 11 point 6; OpenAPI get-read-receipts): who is listed,
// the organization's enable_read_receipts, each user's send_read_receipts, mutes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer, ok } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';

let server: TestServer;
let alice: Client;
let bob: Client;
let carol: Client;
let dave: Client;
let guest: Client;

before(async () => {
  server = await startTestServer();
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  carol = await server.createUser({ email: 'carol@example.com', fullName: 'Carol Cole' });
  dave = await server.createUser({ email: 'dave@example.com', fullName: 'Dave Dunn' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com', fullName: 'Gus Guest' });
  ok(await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }], principals: [alice.id, bob.id, carol.id, dave.id] }));
  ok(await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'Secret' }], invite_only: true, principals: [alice.id, bob.id] }));
  ok(await server.owner.patch('/realm', { enable_read_receipts: true }));
});
after(() => server.close());

function expectError(res: { status: number; body: any }, msg: string) {
  assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: { result: 'error', msg, code: 'BAD_REQUEST' } });
}

const send = async (from: Client, to = 'Denmark') =>
  ok(await from.post('/messages', { type: 'stream', to, topic: 'receipts', content: 'read me', read_by_sender: true })).id;
const read = async (c: Client, id: number) => ok(await c.post('/messages/flags', { messages: [id], op: 'add', flag: 'read' }));
const receipts = async (c: Client, id: number) => ok(await c.get(`/messages/${id}/read_receipts`)).user_ids;

test('readers are listed, never the sender; the caller when they read it; unreading removes one', async () => {
  const id = await send(alice);
  assert.deepEqual(await receipts(bob, id), []);
  await read(bob, id);
  await read(carol, id);
  assert.deepEqual(
    await receipts(bob, id),
    [bob.id, carol.id].sort((a, b) => a - b),
  );
  assert.deepEqual(
    await receipts(alice, id),
    [bob.id, carol.id].sort((a, b) => a - b),
    'the sender read it, and is not listed',
  );
  ok(await carol.post('/messages/flags', { messages: [id], op: 'remove', flag: 'read' }));
  assert.deepEqual(await receipts(alice, id), [bob.id]);
});

test('send_read_receipts off hides a user; deactivated users are left out', async () => {
  const id = await send(alice);
  await read(bob, id);
  await read(dave, id);
  ok(await bob.patch('/settings', { send_read_receipts: false }));
  try {
    assert.deepEqual(await receipts(alice, id), [dave.id]);
  } finally {
    ok(await bob.patch('/settings', { send_read_receipts: true }));
  }
  assert.deepEqual(
    await receipts(alice, id),
    [bob.id, dave.id].sort((a, b) => a - b),
  );
  const gone = await server.createUser({ fullName: 'Gone Soon' });
  ok(await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }], principals: [gone.id] }));
  const later = await send(alice);
  await read(gone, later);
  assert.deepEqual(await receipts(alice, later), [gone.id]);
  ok(await server.owner.delete(`/users/${gone.id}`));
  assert.deepEqual(await receipts(alice, later), []);
});

test('mutes hide readers both ways', async () => {
  const id = await send(dave);
  await read(bob, id);
  await read(carol, id);
  ok(await carol.post(`/users/me/muted_users/${alice.id}`));
  ok(await alice.post(`/users/me/muted_users/${bob.id}`));
  try {
    assert.deepEqual(await receipts(alice, id), [], 'neither who muted the caller nor whom the caller muted');
    assert.deepEqual(
      await receipts(dave, id),
      [bob.id, carol.id].sort((a, b) => a - b),
    );
  } finally {
    ok(await carol.delete(`/users/me/muted_users/${alice.id}`));
    ok(await alice.delete(`/users/me/muted_users/${bob.id}`));
  }
});

test('who may: only those who may read the message; organization setting off; other organizations', async () => {
  const secret = await send(alice, 'Secret');
  await read(bob, secret);
  assert.deepEqual(await receipts(bob, secret), [bob.id]);
  expectError(await carol.get(`/messages/${secret}/read_receipts`), 'Invalid message(s)');
  expectError(await guest.get(`/messages/${secret}/read_receipts`), 'Invalid message(s)');
  expectError(await alice.get('/messages/99999999/read_receipts'), 'Invalid message(s)');
  const outsider = await server.createOrganization('elsewhere');
  expectError(await outsider.get(`/messages/${secret}/read_receipts`), 'Invalid message(s)');
  const dm = ok(await alice.post('/messages', { type: 'direct', to: [bob.id], content: 'hi' })).id;
  expectError(await carol.get(`/messages/${dm}/read_receipts`), 'Invalid message(s)');

  ok(await server.owner.patch('/realm', { enable_read_receipts: false }));
  try {
    expectError(await bob.get(`/messages/${secret}/read_receipts`), 'Read receipts are disabled in this organization.');
    // An inaccessible message is refused first, as the reference checks access first.
    expectError(await carol.get(`/messages/${secret}/read_receipts`), 'Invalid message(s)');
  } finally {
    ok(await server.owner.patch('/realm', { enable_read_receipts: true }));
  }
  const gone = await server.createUser({ fullName: 'Left Org' });
  ok(await server.owner.delete(`/users/${gone.id}`));
  assert.equal((await gone.get(`/messages/${secret}/read_receipts`)).status, 401, 'a deactivated user cannot ask');
});
