// Drafts: GET/POST /drafts, PATCH/DELETE /drafts/{draft_id}, the `drafts`
// events and register section (digest section 2 "Drafts", 3.3, section 4).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE, type Role } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { systemGroupIds } from '../../src/user_groups/group-setting.ts';

let server: TestServer;
let author: Client;
let friend: Client;
/** Channels drafts may name: a public one and another the author reads. */
let lobby: number;
let plans: number;
before(async () => {
  server = await startTestServer();
  author = await server.createUser({ email: 'author@example.com', fullName: 'Au Thor' });
  friend = await server.createUser({ email: 'friend@example.com', fullName: 'Fri End' });
  lobby = await createChannel('drafts lobby', [server.owner.id]);
  plans = await createChannel('drafts plans', [server.owner.id, author.id], { invite_only: true });
});

async function createChannel(name: string, subscribers: number[], extra: Record<string, unknown> = {}): Promise<number> {
  const res = await server.owner.post('/channels/create', { name, subscribers, ...extra });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}
after(() => server.close());

async function eventsOf(c: Client, queueId: string) {
  const res = await c.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body.events as Record<string, any>[]).filter((e) => e.type !== 'heartbeat').map(({ id: _id, ...e }) => e);
}

const draft = (over: Record<string, unknown> = {}) => ({ type: 'private', to: [friend.id], topic: '', content: 'Hello there!', ...over });

async function create(c: Client, drafts: Record<string, unknown>[]) {
  const res = await c.post('/drafts', { drafts });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.ids as number[];
}

test('every role keeps its own drafts; GET lists them, newest first', async () => {
  for (const role of [ROLE.GUEST, ROLE.MEMBER, ROLE.MODERATOR, ROLE.ADMINISTRATOR, ROLE.OWNER] as Role[]) {
    const c = await server.createUser({ role });
    // Guests read only the channels they are subscribed to.
    assert.equal((await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'drafts lobby' }], principals: [c.id] })).status, 200);
    const ids = await create(c, [
      draft({ timestamp: 1595479019 }),
      { type: 'stream', to: [lobby], topic: 'questions', content: 'How do I start?', timestamp: 1595479020 },
      { type: '', to: [], topic: 'ignored', content: 'Someday', timestamp: 1595479018.75 },
    ]);
    assert.equal(ids.length, 3);
    const res = await c.get('/drafts');
    assert.equal(res.status, 200);
    assert.equal(res.body.count, 3);
    assert.deepEqual(res.body.drafts, [
      { id: ids[1], type: 'stream', to: [lobby], topic: 'questions', content: 'How do I start?', timestamp: 1595479020 },
      { id: ids[0], type: 'private', to: [friend.id], topic: '', content: 'Hello there!', timestamp: 1595479019 },
      { id: ids[2], type: '', to: [], topic: '', content: 'Someday', timestamp: 1595479018 },
    ]);
  }
  // Others' drafts are not listed.
  assert.deepEqual((await friend.get('/drafts')).body, { result: 'success', msg: '', count: 0, drafts: [] });
  assert.equal((await server.anonymous.get('/drafts')).status, 401);
});

test('drafts are normalized like messages', async () => {
  const before = Date.now() / 1000;
  const [id] = await create(author, [{ type: 'private', to: [friend.id, author.id, friend.id], topic: 'no topic here', content: '\n\n  spaced out  \n' }]);
  const [toSelf] = await create(author, [{ type: 'private', to: [author.id], topic: '', content: 'note to self' }]);
  const [nobody] = await create(author, [{ type: 'private', to: [], topic: '', content: 'not yet addressed' }]);
  const [longOne] = await create(author, [{ type: 'stream', to: [lobby], topic: 't'.repeat(70), content: 'x'.repeat(10050) }]);
  const byId = new Map(((await author.get('/drafts')).body.drafts as any[]).map((d) => [d.id, d]));
  assert.deepEqual(byId.get(id).to, [friend.id]);
  assert.equal(byId.get(id).topic, '');
  assert.equal(byId.get(id).content, 'spaced out');
  assert.ok(byId.get(id).timestamp >= Math.floor(before) && byId.get(id).timestamp <= Date.now() / 1000);
  assert.deepEqual(byId.get(toSelf).to, [author.id]);
  assert.deepEqual([byId.get(nobody).type, byId.get(nobody).to], ['', []]);
  assert.equal(byId.get(longOne).topic, `${'t'.repeat(57)}...`);
  assert.equal(byId.get(longOne).content.length, 10000);
  assert.ok(byId.get(longOne).content.endsWith('\n[message truncated]'));
});

test('invalid drafts are refused, and nothing of the request is kept', async () => {
  const deactivated = await server.createUser({ email: 'gone@example.com' });
  await server.owner.delete(`/users/${deactivated.id}`);
  const count = async () => (await author.get('/drafts')).body.count;
  const start = await count();
  const cases: [unknown, string][] = [
    [[draft({ type: 'channel' })], 'Invalid drafts[0]["type"]'],
    [[draft({ to: 'x' })], 'drafts[0]["to"] is not a list'],
    [[draft({ content: '   ' })], 'drafts[0]["content"] cannot be blank'],
    [[draft({ id: 5 })], 'drafts[0] has unexpected keys: id'],
    [[{ type: 'private', to: [friend.id], content: 'x' }], 'drafts[0]["topic"] field is missing'],
    [[draft({ timestamp: -5 })], 'Timestamp must not be negative.'],
    [[draft({ content: 'nul\u0000byte' })], 'Message must not contain null bytes'],
    [[draft(), { type: 'stream', to: [1, 2], topic: 't', content: 'c' }], 'Must specify exactly 1 channel ID for channel messages'],
    [[draft(), { type: 'stream', to: [], topic: 't', content: 'c' }], 'Must specify exactly 1 channel ID for channel messages'],
    [[{ type: 'stream', to: [lobby], topic: 'a\u0000b', content: 'c' }], 'Topic must not contain null bytes'],
    [[draft({ to: [friend.id, 999999] })], 'Invalid user ID 999999'],
    [[draft({ to: [deactivated.id] })], "'gone@example.com' is no longer using Confab."],
    ['{"type": "private"}', 'drafts is not a list'],
  ];
  for (const [drafts, msg] of cases) {
    const res = await author.post('/drafts', { drafts });
    assert.equal(res.status, 400, msg);
    assert.deepEqual(res.body, { result: 'error', msg, code: 'BAD_REQUEST' });
  }
  assert.equal((await author.post('/drafts', {})).body.code, 'REQUEST_VARIABLE_MISSING');
  assert.equal(await count(), start);
  // Users of another organization do not exist here.
  assert.equal((await author.post('/drafts', { drafts: [draft({ to: [123456] })] })).body.msg, 'Invalid user ID 123456');
});

test('recipients a guest may not see are refused', async () => {
  const groups = await systemGroupIds(server.svc.db, 1);
  const guest = await server.createUser({ role: ROLE.GUEST });
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const setAccess = async (groupId: number) => {
    await server.svc.db
      .updateTable('realms')
      .set({ group_settings: JSON.stringify({ ...realm.group_settings, can_access_all_users_group: groupId }) })
      .where('id', '=', 1)
      .execute();
    server.svc.credentials.clear();
  };
  await setAccess(groups['role:members']);
  try {
    const res = await guest.post('/drafts', { drafts: [draft({ to: [friend.id] })] });
    assert.equal(res.body.msg, `Invalid user ID ${friend.id}`);
    assert.equal((await guest.post('/drafts', { drafts: [draft({ to: [guest.id] })] })).status, 200);
  } finally {
    await setAccess(groups['role:everyone']);
  }
});

test("a channel draft names a channel the author may read: unknown, private, archived and other organizations' channels are refused", async () => {
  const archived = await createChannel('drafts archived', [server.owner.id, author.id]);
  assert.equal((await server.owner.delete(`/streams/${archived}`)).status, 200);
  const elsewhere = await server.createOrganization('drafts-elsewhere');
  const foreign = (await elsewhere.post('/channels/create', { name: 'foreign', subscribers: [elsewhere.id] })).body.id as number;
  assert.equal(typeof foreign, 'number');
  const guest = await server.createUser({ role: ROLE.GUEST });
  const stream = (id: number) => ({ type: 'stream', to: [id], topic: 't', content: 'c' });
  const [id] = await create(author, [draft({ content: 'kept as it was' })]);
  const count = async (c: Client) => (await c.get('/drafts')).body.count;
  const startAuthor = await count(author);
  const startFriend = await count(friend);
  const cases: [Client, number][] = [
    [author, 999999],
    [author, archived],
    [author, foreign],
    [friend, plans], // private, and friend is not subscribed
    [guest, lobby], // public, but guests read only their subscriptions
  ];
  for (const [c, channelId] of cases) {
    const res = await c.post('/drafts', { drafts: [draft(), stream(channelId)] });
    assert.equal(res.status, 400, `channel ${channelId}`);
    assert.deepEqual(res.body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
  }
  const edit = await author.patch(`/drafts/${id}`, { draft: stream(999999) });
  assert.deepEqual(edit.body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
  assert.equal(((await author.get('/drafts')).body.drafts as any[]).find((d) => d.id === id).content, 'kept as it was');
  assert.equal(await count(author), startAuthor);
  assert.equal(await count(friend), startFriend);
  assert.equal((await guest.get('/drafts')).body.count, 0);
  // Public channels need no subscription for others than guests; private ones need one.
  assert.equal((await friend.post('/drafts', { drafts: [stream(lobby)] })).status, 200);
  assert.equal((await author.post('/drafts', { drafts: [stream(plans)] })).status, 200);
});

test('PATCH and DELETE: own drafts only; 404 otherwise', async () => {
  const [id] = await create(author, [draft({ content: 'first version' })]);
  const edited = await author.patch(`/drafts/${id}`, {
    draft: { type: 'stream', to: [plans], topic: 'moved', content: 'second version', timestamp: 1700000000 },
  });
  assert.deepEqual(edited.body, { result: 'success', msg: '' });
  const found = ((await author.get('/drafts')).body.drafts as any[]).find((d) => d.id === id);
  assert.deepEqual(found, { id, type: 'stream', to: [plans], topic: 'moved', content: 'second version', timestamp: 1700000000 });

  const notFound = { result: 'error', msg: 'Draft does not exist', code: 'BAD_REQUEST' };
  for (const res of [
    await friend.patch(`/drafts/${id}`, { draft: draft() }),
    await friend.delete(`/drafts/${id}`),
    await author.patch('/drafts/999999', { draft: draft() }),
    await author.delete('/drafts/999999'),
  ]) {
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, notFound);
  }
  const invalid = await author.patch(`/drafts/${id}`, { draft: draft({ to: [999999] }) });
  assert.equal(invalid.body.msg, 'Invalid user ID 999999');
  assert.equal(((await author.get('/drafts')).body.drafts as any[]).find((d) => d.id === id).content, 'second version');
  assert.equal((await author.patch(`/drafts/${id}`, {})).body.code, 'REQUEST_VARIABLE_MISSING');

  assert.deepEqual((await author.delete(`/drafts/${id}`)).body, { result: 'success', msg: '' });
  assert.equal(
    ((await author.get('/drafts')).body.drafts as any[]).some((d) => d.id === id),
    false,
  );
  assert.equal((await author.delete(`/drafts/${id}`)).status, 404);
});

test('events reach only the author, and keep register state in sync', async () => {
  const c = await server.createUser({ fullName: 'Dra Fter' });
  const viewer = await registerViewer(server, c);
  const bystander = await registerViewer(server, friend);
  const queue = (await c.post('/register', { event_types: ['drafts'] })).body.queue_id;

  const [a, b] = await create(c, [draft({ timestamp: 1000 }), draft({ content: 'second', timestamp: 2000 })]);
  await expectStateInSync(server, viewer, 'added');
  await c.patch(`/drafts/${a}`, { draft: draft({ content: 'edited', timestamp: 3000 }) });
  await expectStateInSync(server, viewer, 'edited');
  await c.delete(`/drafts/${b}`);
  await expectStateInSync(server, viewer, 'deleted');
  await expectStateInSync(server, bystander, 'bystander');
  assert.deepEqual(
    viewer.state.drafts.map((d: any) => d.id),
    [a],
  );

  const events = await eventsOf(c, queue);
  assert.deepEqual(events, [
    {
      type: 'drafts',
      op: 'add',
      drafts: [
        { id: a, type: 'private', to: [friend.id], topic: '', content: 'Hello there!', timestamp: 1000 },
        { id: b, type: 'private', to: [friend.id], topic: '', content: 'second', timestamp: 2000 },
      ],
    },
    { type: 'drafts', op: 'update', draft: { id: a, type: 'private', to: [friend.id], topic: '', content: 'edited', timestamp: 3000 } },
    { type: 'drafts', op: 'remove', draft_id: b },
  ]);
});

test('register: drafts newest first, at most 1000', async () => {
  const c = await server.createUser();
  const many = Array.from({ length: 1005 }, (_, i) => draft({ content: `draft ${i}`, timestamp: 10_000 + i }));
  await create(c, many);
  const state = (await c.post('/register', { fetch_event_types: ['drafts'] })).body;
  assert.equal(state.drafts.length, 1000);
  assert.equal(state.drafts[0].content, 'draft 1004');
  assert.equal(state.drafts[999].content, 'draft 5');
  assert.equal((await c.get('/drafts')).body.count, 1005);
});

test('with synchronization off, drafts are refused and the server keeps none', async () => {
  const c = await server.createUser({ fullName: 'No Sync' });
  await create(c, [draft()]);
  const viewer = await registerViewer(server, c);
  const queue = (await c.post('/register', { event_types: ['drafts'] })).body.queue_id;
  assert.equal((await c.patch('/settings', { enable_drafts_synchronization: false })).status, 200);
  await expectStateInSync(server, viewer, 'sync off');
  assert.deepEqual(viewer.state.drafts, []);
  // The drafts are deleted without events: clients keep their own copies.
  assert.deepEqual(await eventsOf(c, queue), []);
  const disabled = { result: 'error', msg: 'User has disabled synchronizing drafts.', code: 'BAD_REQUEST' };
  assert.deepEqual((await c.get('/drafts')).body, disabled);
  assert.deepEqual((await c.post('/drafts', { drafts: [draft()] })).body, disabled);
  assert.deepEqual((await c.patch('/drafts/1', { draft: draft() })).body, disabled);
  assert.deepEqual((await c.delete('/drafts/1')).body, disabled);
  assert.equal((await c.patch('/settings', { enable_drafts_synchronization: true })).status, 200);
  assert.deepEqual((await c.get('/drafts')).body.drafts, []);
  await create(c, [draft()]);
  assert.equal((await c.get('/drafts')).body.count, 1);
});
