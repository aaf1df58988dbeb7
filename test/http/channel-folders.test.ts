// Channel folders (spec endpoint 7 and the channel folder state table; digest 1.7, section 2).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';

let server: TestServer;
let admin: Client;
let member: Client;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR });
  member = await server.createUser({ role: ROLE.MEMBER });
});
after(() => server.close());

const FOLDER_FIELDS = ['id', 'name', 'description', 'rendered_description', 'creator_id', 'date_created', 'is_archived', 'order'].sort();

test('administrators create folders; everyone lists them', async () => {
  const denied = await member.post('/channel_folders/create', { name: 'Work', description: '' });
  assert.equal(denied.status, 400);
  assert.deepEqual(denied.body, { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' });
  const res = await admin.post('/channel_folders/create', { name: 'Work', description: 'Things **we** do' });
  assert.equal(res.status, 200);
  const id = res.body.channel_folder_id;
  const { channel_folders } = (await member.get('/channel_folders')).body;
  const folder = channel_folders.find((f: any) => f.id === id);
  assert.deepEqual(Object.keys(folder).sort(), FOLDER_FIELDS);
  assert.equal(folder.rendered_description, '<p>Things <strong>we</strong> do</p>');
  assert.equal(folder.creator_id, admin.id);
  assert.equal(folder.is_archived, false);
  assert.equal((await admin.post('/channel_folders/create', { name: 'Work' })).body.code, 'REQUEST_VARIABLE_MISSING');
});

test('folder names: required, bounded, printable, unique without regard to case', async () => {
  const cases: [Record<string, string>, string][] = [
    [{ name: '  ', description: '' }, "Channel folder name can't be empty."],
    [{ name: 'n'.repeat(61), description: '' }, 'name is too long (limit: 60 characters)'],
    [{ name: 'a\u0000b', description: '' }, 'Invalid character in channel folder name, at position 2.'],
    [{ name: 'Ok', description: 'd'.repeat(1025) }, 'description is too long (limit: 1024 characters)'],
    [{ name: 'Ok', description: 'a\u0000b' }, 'Invalid character in channel folder description, at position 2.'],
  ];
  for (const [params, msg] of cases) assert.equal((await admin.post('/channel_folders/create', params)).body.msg, msg);
  await admin.post('/channel_folders/create', { name: 'Unique', description: '' });
  assert.equal((await admin.post('/channel_folders/create', { name: 'UNIQUE', description: '' })).body.msg, "Channel folder 'UNIQUE' already exists");
});

test('updating and archiving: only empty folders are archived', async () => {
  const id = (await admin.post('/channel_folders/create', { name: 'Projects', description: '' })).body.channel_folder_id;
  assert.equal((await member.patch(`/channel_folders/${id}`, { name: 'x' })).body.code, 'UNAUTHORIZED_PRINCIPAL');
  assert.equal((await admin.patch('/channel_folders/99999', { name: 'x' })).body.msg, 'Invalid channel folder ID');
  assert.equal((await admin.patch(`/channel_folders/${id}`, { name: 'Active projects', description: 'now' })).status, 200);
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'apollo' }], folder_id: id });
  const channelId = (await admin.get('/get_stream_id', { stream: 'apollo' })).body.stream_id;
  assert.equal((await admin.get(`/streams/${channelId}`)).body.stream.folder_id, id);
  const full = await admin.patch(`/channel_folders/${id}`, { is_archived: true, name: 'Renamed while refused' });
  assert.equal(full.body.msg, 'You need to remove all the channels from this folder to archive it.');
  assert.equal((await admin.get('/channel_folders')).body.channel_folders.find((f: any) => f.id === id).name, 'Active projects');
  assert.equal((await admin.patch(`/streams/${channelId}`, { folder_id: null })).status, 200);
  assert.equal((await admin.patch(`/channel_folders/${id}`, { is_archived: true })).status, 200);
  assert.ok(!(await member.get('/channel_folders')).body.channel_folders.some((f: any) => f.id === id));
  assert.ok((await member.get('/channel_folders', { include_archived: true })).body.channel_folders.some((f: any) => f.id === id));
  assert.equal((await admin.patch(`/channel_folders/${id}`, { is_archived: false })).status, 200);
  assert.equal((await admin.patch(`/streams/${channelId}`, { folder_id: 424242 })).body.msg, 'Invalid channel folder ID');
});

test('reordering takes every folder, once', async () => {
  const ids = (await admin.get('/channel_folders', { include_archived: true })).body.channel_folders.map((f: any) => f.id);
  const reversed = [...ids].reverse();
  assert.equal((await member.patch('/channel_folders', { order: reversed })).body.code, 'UNAUTHORIZED_PRINCIPAL');
  assert.equal((await admin.patch('/channel_folders', { order: reversed.slice(1) })).body.msg, 'Invalid order mapping.');
  assert.equal((await admin.patch('/channel_folders', { order: [...reversed, reversed[0]] })).body.msg, 'Invalid order mapping.');
  assert.equal((await admin.patch('/channel_folders', { order: reversed })).status, 200);
  const after = (await admin.get('/channel_folders', { include_archived: true })).body.channel_folders;
  assert.deepEqual(
    after.map((f: any) => f.id),
    reversed,
  );
  assert.deepEqual(
    after.map((f: any) => f.order),
    reversed.map((_: number, i: number) => i),
  );
});

test('folder events keep register state in sync', async () => {
  const viewer = await registerViewer(server, member);
  const id = (await admin.post('/channel_folders/create', { name: 'Synced', description: 'one' })).body.channel_folder_id;
  await expectStateInSync(server, viewer, 'after create');
  await admin.patch(`/channel_folders/${id}`, { name: 'Synced again', description: 'two' });
  await expectStateInSync(server, viewer, 'after update');
  await admin.patch(`/channel_folders/${id}`, { is_archived: true });
  await expectStateInSync(server, viewer, 'after archive');
  const ids = (await admin.get('/channel_folders', { include_archived: true })).body.channel_folders.map((f: any) => f.id);
  await admin.patch('/channel_folders', { order: [...ids].reverse() });
  await expectStateInSync(server, viewer, 'after reorder');
  assert.ok(
    viewer.state.channel_folders.some((f: any) => f.id === id && f.is_archived),
    'register lists archived folders too',
  );
});

test("a channel's folder_id changes keep streams and subscriptions in sync", async () => {
  const viewer = await registerViewer(server, member, { fetch_event_types: ['stream', 'subscription', 'channel_folders'], include_subscribers: true });
  const folder = (await admin.post('/channel_folders/create', { name: 'Filed', description: '' })).body.channel_folder_id;
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'filed-channel' }], principals: [admin.id, member.id], folder_id: folder });
  await expectStateInSync(server, viewer, 'created in a folder');
  const channelId = (await admin.get('/get_stream_id', { stream: 'filed-channel' })).body.stream_id;
  assert.equal(viewer.state.subscriptions.find((s: any) => s.stream_id === channelId).folder_id, folder);
  assert.equal((await admin.patch(`/streams/${channelId}`, { folder_id: null })).status, 200);
  await expectStateInSync(server, viewer, 'taken out of its folder');
  assert.equal(viewer.state.streams.find((s: any) => s.stream_id === channelId).folder_id, null);
  // Only those who administer the channel file it.
  assert.equal((await member.patch(`/streams/${channelId}`, { folder_id: folder })).body.code, 'CANNOT_ADMINISTER_CHANNEL');
  assert.equal((await admin.get(`/streams/${channelId}`)).body.stream.folder_id, null);
});
