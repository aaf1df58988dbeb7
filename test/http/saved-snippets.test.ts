// Saved snippets (spec "Saved snippet", endpoint 18, register's saved_snippets;
// digest 1.18, section 2, 3.3, 4).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { REGISTER_ALWAYS, startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE, type Role } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';

let server: TestServer;
let member: Client;
let other: Client;
let admin: Client;
before(async () => {
  server = await startTestServer();
  member = await server.createUser({ role: ROLE.MEMBER, fullName: 'Mem Ber' });
  other = await server.createUser({ role: ROLE.MEMBER, fullName: 'Oth Er' });
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, fullName: 'Ad Min' });
});
after(() => server.close());

async function create(c: Client, title: string, content: string): Promise<number> {
  const res = await c.post('/saved_snippets', { title, content });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(typeof res.body.saved_snippet_id, 'number');
  return res.body.saved_snippet_id;
}

async function list(c: Client): Promise<any[]> {
  const res = await c.get('/saved_snippets');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.saved_snippets;
}

async function queue(c: Client): Promise<string> {
  const res = await c.post('/register', { event_types: ['saved_snippets'] });
  assert.equal(res.status, 200);
  return res.body.queue_id;
}

async function events(c: Client, queueId: string): Promise<any[]> {
  const res = await c.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.events.map(({ id: _id, ...e }: any) => e);
}

const NOT_FOUND = { result: 'error', msg: 'Saved snippet does not exist.', code: 'BAD_REQUEST' };

test('create, list, edit and delete a snippet; titles and contents are stripped', async () => {
  const before = Math.floor(Date.now() / 1000);
  const id = await create(member, '  Greeting  ', '\n  Welcome to the **team**!  \n');
  const snippets = await list(member);
  assert.equal(snippets.length, 1);
  const [s] = snippets;
  assert.deepEqual(Object.keys(s), ['id', 'title', 'content', 'date_created']);
  assert.equal(s.id, id);
  assert.equal(s.title, 'Greeting');
  assert.equal(s.content, 'Welcome to the **team**!');
  assert.ok(Number.isInteger(s.date_created) && s.date_created >= before - 1 && s.date_created <= Date.now() / 1000 + 1);

  const edited = await member.patch(`/saved_snippets/${id}`, { title: ' Hello ' });
  assert.deepEqual(edited.body, { result: 'success', msg: '' });
  assert.deepEqual(await list(member), [{ ...s, title: 'Hello' }]);
  await member.patch(`/saved_snippets/${id}`, { content: 'New text' });
  assert.deepEqual(await list(member), [{ ...s, title: 'Hello', content: 'New text' }]);
  await member.patch(`/saved_snippets/${id}`, { title: 'Both', content: 'Changed' });
  assert.deepEqual(await list(member), [{ ...s, title: 'Both', content: 'Changed' }]);

  const removed = await member.delete(`/saved_snippets/${id}`);
  assert.deepEqual(removed.body, { result: 'success', msg: '' });
  assert.deepEqual(await list(member), []);
  const again = await member.delete(`/saved_snippets/${id}`);
  assert.equal(again.status, 404);
  assert.deepEqual(again.body, NOT_FOUND);
});

test("the list holds only the caller's snippets, oldest first", async () => {
  const a = await create(other, 'First', 'one');
  const b = await create(other, 'Second', 'two');
  await create(member, 'Mine', 'not theirs');
  assert.deepEqual(
    (await list(other)).map((s) => s.id),
    [a, b],
  );
  assert.ok((await list(member)).every((s) => s.title === 'Mine'));
});

test('title and content bounds', async () => {
  const cases: [Record<string, string>, string][] = [
    [{ title: '   ', content: 'x' }, 'title cannot be blank'],
    [{ title: 'x'.repeat(61), content: 'x' }, 'title is too long (limit: 60 characters)'],
    [{ title: 'x', content: ' \n ' }, 'content cannot be blank'],
    [{ title: 'x', content: 'y'.repeat(10001) }, 'content is too long (limit: 10000 characters)'],
  ];
  for (const [params, msg] of cases) {
    const res = await member.post('/saved_snippets', params);
    assert.equal(res.status, 400, msg);
    assert.deepEqual(res.body, { result: 'error', msg, code: 'BAD_REQUEST' });
  }
  const missing = await member.post('/saved_snippets', { title: 'x' });
  assert.deepEqual(missing.body, { result: 'error', msg: "Missing 'content' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'content' });
  // The limits themselves are fine, and whitespace does not count towards them.
  const id = await create(member, ` ${'t'.repeat(60)} `, 'c'.repeat(10000));
  const edit = await member.patch(`/saved_snippets/${id}`, { title: '  ' });
  assert.deepEqual(edit.body, { result: 'error', msg: 'title cannot be blank', code: 'BAD_REQUEST' });
  const editContent = await member.patch(`/saved_snippets/${id}`, { content: 'c'.repeat(10001) });
  assert.equal(editContent.body.msg, 'content is too long (limit: 10000 characters)');
  const stored = (await list(member)).find((s) => s.id === id);
  assert.equal(stored.title, 't'.repeat(60), 'failed edits changed nothing');
  assert.equal(stored.content.length, 10000);
});

test("unknown ids and other users' snippets are 404, for every role, and nothing changes", async () => {
  const theirs = await create(other, 'Private', 'secret');
  for (const c of [member, admin, server.owner]) {
    const edit = await c.patch(`/saved_snippets/${theirs}`, { title: 'Taken' });
    assert.equal(edit.status, 404);
    assert.deepEqual(edit.body, NOT_FOUND);
    const empty = await c.patch(`/saved_snippets/${theirs}`);
    assert.equal(empty.status, 404, 'an edit with nothing to change still names an existing snippet');
    const del = await c.delete(`/saved_snippets/${theirs}`);
    assert.equal(del.status, 404);
    assert.deepEqual(del.body, NOT_FOUND);
  }
  const unknown = await member.patch('/saved_snippets/999999', { content: 'x' });
  assert.equal(unknown.status, 404);
  assert.deepEqual(unknown.body, NOT_FOUND);
  assert.equal((await member.delete('/saved_snippets/999999')).status, 404);
  assert.equal((await member.patch('/saved_snippets/abc', { content: 'x' })).status, 404, 'not a snippet id: no route');
  const kept = (await list(other)).find((s) => s.id === theirs);
  assert.deepEqual([kept.title, kept.content], ['Private', 'secret']);
});

test('every role keeps its own snippets', async () => {
  for (const role of [ROLE.GUEST, ROLE.MEMBER, ROLE.MODERATOR, ROLE.ADMINISTRATOR, ROLE.OWNER] as Role[]) {
    const c = await server.createUser({ role });
    const id = await create(c, `Role ${role}`, 'text');
    assert.equal((await c.patch(`/saved_snippets/${id}`, { content: 'edited' })).status, 200);
    assert.deepEqual(
      (await list(c)).map((s) => [s.id, s.content]),
      [[id, 'edited']],
    );
    assert.equal((await c.delete(`/saved_snippets/${id}`)).status, 200);
    assert.deepEqual(await list(c), []);
  }
  assert.equal((await server.anonymous.get('/saved_snippets')).status, 401);
});

test("events go to the owner's queues only; an edit without changes sends none", async () => {
  const mine = await queue(member);
  const theirs = await queue(other);
  const id = await create(member, 'Evented', 'body');
  const snippet = (await list(member)).find((s) => s.id === id);
  await member.patch(`/saved_snippets/${id}`);
  await member.patch(`/saved_snippets/${id}`, { title: 'Renamed' });
  await member.delete(`/saved_snippets/${id}`);
  assert.deepEqual(await events(member, mine), [
    { type: 'saved_snippets', op: 'add', saved_snippet: snippet },
    { type: 'saved_snippets', op: 'update', saved_snippet: { ...snippet, title: 'Renamed' } },
    { type: 'saved_snippets', op: 'remove', saved_snippet_id: id },
  ]);
  assert.deepEqual(await events(other, theirs), []);
});

test("register: saved_snippets holds the caller's snippets and stays in sync with the events", async () => {
  const viewer = await registerViewer(server, member);
  assert.deepEqual(viewer.state.saved_snippets, await list(member));
  const only = await member.post('/register', { fetch_event_types: ['saved_snippets'] });
  assert.deepEqual(
    Object.keys(only.body).filter((k) => !REGISTER_ALWAYS.includes(k)),
    ['saved_snippets'],
  );
  const id = await create(member, 'Synced', 'one');
  await expectStateInSync(server, viewer, 'after create');
  await member.patch(`/saved_snippets/${id}`, { content: 'two' });
  await expectStateInSync(server, viewer, 'after edit');
  await create(member, 'Another', 'three');
  await member.delete(`/saved_snippets/${id}`);
  await expectStateInSync(server, viewer, 'after delete');
  await create(other, 'Elsewhere', 'four');
  await expectStateInSync(server, viewer, "after another user's snippet");
});
