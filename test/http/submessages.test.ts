// Submessages (issue 11, point 8): /poll and /todo messages get their widget
// submessage on send, POST /submessage adds to it with the reference's checks,
// every Message object carries `submessages`, and the `submessage` event.
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

function expectError(res: { status: number; body: any }, msg: string) {
  assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: { result: 'error', msg, code: 'BAD_REQUEST' } });
}

before(async () => {
  server = await startTestServer();
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  carol = await server.createUser({ email: 'carol@example.com', fullName: 'Carol Cole' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com' });
  ok(await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'Polls' }], principals: [alice.id, bob.id] }));
  ok(await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'Secret' }], principals: [alice.id], invite_only: true }));
});
after(() => server.close());

const send = async (content: string, to = 'Polls', sender = alice) =>
  ok(await sender.post('/messages', { type: 'stream', to, topic: 'widgets', content })).id as number;
const submessagesOf = async (id: number, viewer = alice) => ok(await viewer.get(`/messages/${id}`)).message.submessages;
const submit = (c: Client, message_id: number, content: unknown, msg_type = 'widget') =>
  c.post('/submessage', { message_id, msg_type, content: typeof content === 'string' ? content : JSON.stringify(content) });

test('a /poll message gets its widget submessage, in GET /messages and in the message event', async () => {
  const viewer = await registerViewer(server, bob, { event_types: ['message', 'submessage'] });
  const id = await send('/poll Lunch?\n- Pizza\n* Sushi\n\nTacos');
  const widget = { widget_type: 'poll', extra_data: { question: 'Lunch?', options: ['Pizza', 'Sushi', 'Tacos'] } };
  const [sub] = await submessagesOf(id);
  assert.deepEqual({ ...sub, content: JSON.parse(sub.content) }, { id: sub.id, message_id: id, sender_id: alice.id, msg_type: 'widget', content: widget });
  const events = ok(await bob.get('/events', { queue_id: viewer.queueId, last_event_id: -1, dont_block: true })).events;
  assert.deepEqual(events.find((e: any) => e.type === 'message').message.submessages, [sub]);
  const fetched = ok(await bob.get('/messages', { anchor: id, num_before: 0, num_after: 0 })).messages;
  assert.deepEqual(fetched[0].submessages, [sub]);
});

test('a /todo message lists its tasks; other messages have no submessages', async () => {
  const id = await send('/todo Release\n- Tag: the git tag\n- Announce');
  const [sub] = await submessagesOf(id);
  assert.deepEqual(JSON.parse(sub.content), {
    widget_type: 'todo',
    extra_data: {
      task_list_title: 'Release',
      tasks: [
        { task: 'Tag', desc: 'the git tag' },
        { task: 'Announce', desc: '' },
      ],
    },
  });
  assert.deepEqual(await submessagesOf(await send('/polling is not a widget')), []);
  assert.deepEqual(await submessagesOf(await send('plain')), []);
});

test('votes and options: the submessage event reaches those with a copy, in order', async () => {
  const id = await send('/poll Color?\nRed');
  const alices = await registerViewer(server, alice, { event_types: ['submessage'] });
  const carols = await registerViewer(server, carol, { event_types: ['submessage'] });
  ok(await submit(bob, id, { type: 'new_option', idx: 1, option: 'Blue' }));
  ok(await submit(alice, id, { type: 'vote', key: 'canned,0', vote: 1 }));
  const events = ok(await alice.get('/events', { queue_id: alices.queueId, last_event_id: -1, dont_block: true })).events;
  const subs = await submessagesOf(id);
  assert.deepEqual(
    events.map(({ id: _id, ...e }: any) => e),
    subs
      .slice(1)
      .map((s: any) => ({ type: 'submessage', msg_type: 'widget', message_id: id, submessage_id: s.id, sender_id: s.sender_id, content: s.content })),
  );
  // Carol has no copy (she is not subscribed): she hears nothing.
  assert.deepEqual(ok(await carol.get('/events', { queue_id: carols.queueId, last_event_id: -1, dont_block: true })).events, []);
});

test('the reference checks: data shape, author-only actions, JSON, the first submessage is the sender’s', async () => {
  const poll = await send('/poll Q');
  expectError(await submit(bob, poll, 'not json'), 'Invalid json for submessage');
  expectError(await submit(bob, poll, { type: 'question', question: 'Mine now' }), "You can't edit a question unless you are the author.");
  expectError(await submit(bob, poll, { type: 'vote', key: 'x', vote: 2 }), 'Invalid poll data["vote"]');
  expectError(await submit(bob, poll, { type: 'vote', key: 'x', vote: 1, extra: 1 }), 'poll data has unexpected keys: extra');
  expectError(await submit(bob, poll, { type: 'teleport' }), 'Unknown type for poll data: teleport');
  expectError(await submit(bob, poll, { type: 'new_option', option: 'big', idx: 1001 }), 'poll data["idx"] is too large');
  ok(await submit(alice, poll, { type: 'question', question: 'Better Q' }));
  const todo = await send('/todo List');
  expectError(await submit(bob, todo, { type: 'new_task_list_title', title: 'x' }), "You can't edit the task list title unless you are the author.");
  ok(await submit(bob, todo, { type: 'new_task', key: 2, task: 'Buy', desc: '', completed: false }));
  ok(await submit(bob, todo, { type: 'strike', key: '2,' + bob.id }));
  // A message without a widget: only its sender may start one.
  const plain = await send('just text');
  expectError(await submit(bob, plain, { anything: true }), 'You cannot attach a submessage to this message.');
  ok(await submit(alice, plain, { anything: true }, 'custom'));
  ok(await submit(bob, plain, { more: true }, 'custom'));
  const count = (await submessagesOf(plain)).length;
  assert.equal(count, 2);
});

test('who may: only on messages one can read; not a guest outside, not another organization', async () => {
  const secret = await send('/poll Hidden?', 'Secret');
  const before = await submessagesOf(secret);
  expectError(await submit(bob, secret, { type: 'vote', key: 'canned,0', vote: 1 }), 'Invalid message(s)');
  expectError(await submit(guest, secret, { type: 'vote', key: 'canned,0', vote: 1 }), 'Invalid message(s)');
  const other = await server.createOrganization('widgets');
  expectError(await submit(other, secret, { type: 'vote', key: 'canned,0', vote: 1 }), 'Invalid message(s)');
  expectError(await submit(bob, 999999, { type: 'vote', key: 'canned,0', vote: 1 }), 'Invalid message(s)');
  assert.deepEqual(await submessagesOf(secret), before);
  // A deactivated user cannot.
  const dave = await server.createUser({ email: 'dave@example.com' });
  ok(await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'Polls' }], principals: [dave.id] }));
  ok(await server.owner.delete(`/users/${dave.id}`));
  assert.equal((await submit(dave, await send('/poll Late?'), { type: 'vote', key: 'canned,0', vote: 1 })).status, 401);
  // Missing parameters.
  assert.equal((await bob.post('/submessage', { message_id: secret, msg_type: 'widget' })).body.code, 'REQUEST_VARIABLE_MISSING');
});

test('register stays in sync through widget messages and submessages', async () => {
  const viewer = await registerViewer(server, bob);
  const id = await send('/poll Sync?\nYes\nNo');
  ok(await submit(bob, id, { type: 'vote', key: 'canned,1', vote: 1 }));
  await expectStateInSync(server, viewer, 'widget message and vote');
});
