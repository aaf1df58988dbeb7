// Files (issue 11, point 2): POST /user_uploads, serving to who may see them,
// temporary URLs, GET/DELETE /attachments, claiming on send/edit/delete, the
// attachment events, thumbnails and the inline-image markup, avatars, the
// organization's icon and logos, and every refusal (leaving no file behind).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { Client, startTestServer, type TestServer } from '../support/server.ts';
import { registerViewer, expectStateInSync } from '../support/state.ts';
import { ROLE } from '../../src/users/roles.ts';

let server: TestServer;
let uploads: string;

before(async () => {
  uploads = mkdtempSync(join(tmpdir(), 'confab-uploads-test-'));
  server = await startTestServer({ uploadsDir: uploads, credentialCacheMs: 0, maxFileUploadMib: 1 });
});

after(async () => {
  await server?.close();
  rmSync(uploads, { recursive: true, force: true });
});

interface Part {
  filename?: string;
  type?: string;
  data: Buffer;
}

const basic = (c: Client) => `Basic ${Buffer.from(`${c.email}:${c.apiKey}`).toString('base64')}`;

async function multipart(client: Client, url: string, files: Part[], fields: Record<string, string> = {}) {
  const boundary = `----confab${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  files.forEach((f, i) => {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="f${i}"; filename="${f.filename ?? 'file.txt'}"\r\nContent-Type: ${f.type ?? 'text/plain'}\r\n\r\n`,
      ),
      f.data,
      Buffer.from('\r\n'),
    );
  });
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  const res = await server.app.inject({
    method: 'POST',
    url: `/api/v1${url}`,
    payload: Buffer.concat(chunks),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: basic(client), ...(client.host ? { host: client.host } : {}) },
  });
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

/** GET of a file path outside /api/v1, as `client` (or nobody). */
async function fetchFile(path: string, client?: Client) {
  const headers: Record<string, string> = {};
  if (client) headers.authorization = basic(client);
  if (client?.host) headers.host = client.host;
  return server.app.inject({ method: 'GET', url: path, headers });
}

/** Every file in the storage directory (paths relative to it). */
const storedRegularFiles = () =>
  readdirSync(uploads, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(uploads.length + 1))
    .sort();

function expectError(res: { status: number; body: any }, msg: string, code = 'BAD_REQUEST', status = 400) {
  assert.deepEqual(
    { status: res.status, body: { msg: res.body.msg, code: res.body.code, result: res.body.result } },
    { status, body: { result: 'error', msg, code } },
  );
}

const png = (w: number, h: number) =>
  sharp({ create: { width: w, height: h, channels: 3, background: { r: 200, g: 10, b: 10 } } })
    .png()
    .toBuffer();

async function events(client: Client, queueId: string, after = -1) {
  const res = await client.get('/events', { queue_id: queueId, last_event_id: after, dont_block: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.events as any[];
}

async function uploadText(client: Client, text = 'hello file', filename = 'notes.txt') {
  const res = await multipart(client, '/user_uploads', [{ filename, data: Buffer.from(text) }]);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { url: string; uri: string; filename: string };
}

async function channel(name: string, members: Client[], opts: Record<string, unknown> = {}) {
  const res = await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: members.map((m) => m.id), ...opts });
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function send(client: Client, to: string, content: string): Promise<number> {
  const res = await client.post('/messages', { type: 'stream', to, topic: 'files', content });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

test('upload: url, uri and filename as the reference; the bytes under DATA_DIR; GET /attachments; the add event', async () => {
  const { queue_id } = (await server.owner.post('/register', { event_types: ['attachment'] })).body;
  const res = await multipart(server.owner, '/user_uploads', [{ filename: 'My notes (draft).txt', data: Buffer.from('draft one') }]);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.match(res.body.url, /^\/user_uploads\/1\/[0-9a-f]{1,2}\/[A-Za-z0-9_-]{24}\/My-notes-draft\.txt$/);
  assert.deepEqual(res.body, { result: 'success', msg: '', uri: res.body.url, url: res.body.url, filename: 'My notes (draft).txt' });
  const pathId = res.body.url.slice('/user_uploads/'.length);
  assert.ok(storedRegularFiles().includes(join('files', pathId)));

  const list = await server.owner.get('/attachments');
  const mine = list.body.attachments.find((a: any) => a.path_id === pathId);
  assert.deepEqual({ ...mine, create_time: 0, id: 0 }, { id: 0, name: 'My notes (draft).txt', path_id: pathId, size: 9, create_time: 0, messages: [] });
  assert.ok(Math.abs(mine.create_time - Date.now()) < 60_000);
  assert.equal(
    list.body.upload_space_used,
    list.body.attachments.reduce((n: number, a: any) => n + a.size, 0),
  );

  const [event] = await events(server.owner, queue_id);
  assert.deepEqual({ ...event, id: 0 }, { id: 0, type: 'attachment', op: 'add', attachment: mine, upload_space_used: list.body.upload_space_used });

  // Names beyond ASCII keep their letters; the URL works percent-encoded, as browsers send it.
  const accented = await multipart(server.owner, '/user_uploads', [{ filename: 'résumé 2.txt', data: Buffer.from('cv') }]);
  assert.match(accented.body.url, /\/résumé-2\.txt$/);
  const fetched = await fetchFile(encodeURI(accented.body.url), server.owner);
  assert.equal(fetched.body, 'cv');
  assert.equal(fetched.headers['content-disposition'], `inline; filename*=utf-8''${encodeURIComponent('résumé 2.txt')}`);

  // Its uploader reads it back, inline as plain text.
  const file = await fetchFile(res.body.url, server.owner);
  assert.equal(file.statusCode, 200);
  assert.equal(file.body, 'draft one');
  assert.match(String(file.headers['content-type']), /^text\/plain/);
  assert.equal(file.headers['content-disposition'], 'inline; filename="My notes (draft).txt"');
});

test('who may read a file: its uploader, and those who may read a message linking it; nobody else', async () => {
  const alice = await server.createUser();
  const bob = await server.createUser();
  const guest = await server.createUser({ role: ROLE.GUEST });
  const departed = await server.createUser();
  const other = await server.createOrganization('elsewhere');
  const { url } = await uploadText(alice, 'secret plans');

  // Before any message links it: only Alice.
  assert.equal((await fetchFile(url, alice)).statusCode, 200);
  const refused = await fetchFile(url, bob);
  assert.equal(refused.statusCode, 403);
  assert.equal(refused.body, '<p>You are not authorized to view this file.</p>');
  const anonymous = await fetchFile(url);
  assert.equal(anonymous.statusCode, 401);
  assert.equal(JSON.parse(anonymous.body).code, 'UNAUTHORIZED');
  assert.equal(anonymous.headers['www-authenticate'], 'Basic realm="zulip"');

  // Linked in a public channel: members may read it; a guest who is not subscribed may not.
  await channel('files-public', [alice, bob, departed]);
  await send(alice, 'files-public', `see [plans](${url})`);
  assert.equal((await fetchFile(url, bob)).statusCode, 200);
  assert.equal((await fetchFile(url, guest)).statusCode, 403);
  // Another organization's owner: their credentials are not for this organization's host...
  assert.equal((await fetchFile(url, new Client(server, other.id, other.email, other.apiKey))).statusCode, 401);
  // ...and on their own host the file does not exist there.
  const theirs = await fetchFile(url, other);
  assert.equal(theirs.statusCode, 404);
  assert.equal(theirs.body, '<p>File not found.</p>');
  // A deactivated user.
  assert.equal((await server.owner.delete(`/users/${departed.id}`)).status, 200);
  assert.equal((await fetchFile(url, departed)).statusCode, 401);
  // A path that names no upload.
  assert.equal((await fetchFile('/user_uploads/1/aa/nothing-here/x.txt', alice)).statusCode, 404);

  // A guest subscribed to the channel may.
  await channel('files-public', [guest]);
  assert.equal((await fetchFile(url, guest)).statusCode, 200);
});

test('a direct message shares a file with its recipients only; a private channel with its subscribers', async () => {
  const alice = await server.createUser();
  const bob = await server.createUser();
  const carol = await server.createUser();
  const { url } = await uploadText(alice, 'for bob');
  assert.equal((await alice.post('/messages', { type: 'direct', to: JSON.stringify([bob.id]), content: `[f](${url})` })).status, 200);
  assert.equal((await fetchFile(url, bob)).statusCode, 200);
  assert.equal((await fetchFile(url, carol)).statusCode, 403);

  const second = await uploadText(alice, 'for the club');
  await channel('files-private', [alice, bob], { invite_only: true });
  await send(alice, 'files-private', `[f](${second.url})`);
  assert.equal((await fetchFile(second.url, bob)).statusCode, 200);
  assert.equal((await fetchFile(second.url, carol)).statusCode, 403);
  // Carol cannot gain access by linking a file she may not read: nothing is claimed for her.
  await channel('files-carol', [carol]);
  const id = await send(carol, 'files-carol', `[stolen](${second.url})`);
  const list = (await alice.get('/attachments')).body.attachments.find((a: any) => second.url.endsWith(a.path_id));
  assert.ok(!list.messages.some((m: any) => m.id === id));
});

test('claiming on send, edit and delete: messages listed, update events, detached_uploads', async () => {
  const alice = await server.createUser();
  await channel('files-claims', [alice]);
  const { queue_id } = (await alice.post('/register', { event_types: ['attachment'] })).body;
  const first = await uploadText(alice, 'one', 'one.txt');
  const second = await uploadText(alice, 'two', 'two.txt');
  const messageId = await send(alice, 'files-claims', `[one](${first.url}) and [two](${second.url})`);

  const listed = async () => Object.fromEntries((await alice.get('/attachments')).body.attachments.map((a: any) => [a.name, a.messages.map((m: any) => m.id)]));
  assert.deepEqual(await listed(), { 'one.txt': [messageId], 'two.txt': [messageId] });
  const updates = (await events(alice, queue_id)).filter((e) => e.op === 'update');
  assert.deepEqual(updates.map((e) => [e.attachment.name, e.attachment.messages.map((m: any) => m.id)]).sort(), [
    ['one.txt', [messageId]],
    ['two.txt', [messageId]],
  ]);
  assert.equal(
    (await alice.get('/messages', { anchor: messageId, num_before: 0, num_after: 0, narrow: [{ operator: 'has', operand: 'attachment' }] })).body.messages
      .length,
    1,
  );

  // An edit that drops the second link detaches it.
  const edit = await alice.patch(`/messages/${messageId}`, { content: `only [one](${first.url})` });
  assert.equal(edit.status, 200, JSON.stringify(edit.body));
  assert.deepEqual(
    edit.body.detached_uploads.map((a: any) => [a.name, a.messages]),
    [['two.txt', []]],
  );
  assert.deepEqual(await listed(), { 'one.txt': [messageId], 'two.txt': [] });

  // An edit that links it again claims it again.
  const again = await alice.patch(`/messages/${messageId}`, { content: `[one](${first.url}) [two](${second.url})` });
  assert.deepEqual(again.body.detached_uploads, []);
  assert.deepEqual(await listed(), { 'one.txt': [messageId], 'two.txt': [messageId] });

  // Deleting the message unlinks both.
  assert.equal((await server.owner.delete(`/messages/${messageId}`)).status, 200);
  assert.deepEqual(await listed(), { 'one.txt': [], 'two.txt': [] });
});

test('DELETE /attachments/{id}: the owner only; the row, the bytes and the remove event go', async () => {
  const alice = await server.createUser();
  const bob = await server.createUser();
  const { url } = await uploadText(alice, 'to delete', 'gone.txt');
  const pathId = url.slice('/user_uploads/'.length);
  const id = (await alice.get('/attachments')).body.attachments.find((a: any) => a.path_id === pathId).id;
  const { queue_id } = (await alice.post('/register', { event_types: ['attachment'] })).body;

  expectError(await bob.delete(`/attachments/${id}`), 'Invalid attachment');
  expectError(await alice.delete('/attachments/999999'), 'Invalid attachment');
  const other = await server.createOrganization('deleters');
  expectError(await other.delete(`/attachments/${id}`), 'Invalid attachment');
  assert.equal((await other.get('/attachments')).body.attachments.length, 0);
  assert.ok(storedRegularFiles().includes(join('files', pathId)));

  const res = await alice.delete(`/attachments/${id}`);
  assert.deepEqual(res.body, { result: 'success', msg: '' });
  assert.ok(!storedRegularFiles().includes(join('files', pathId)));
  assert.equal((await fetchFile(url, alice)).statusCode, 404);
  const used = (await alice.get('/attachments')).body.upload_space_used;
  const [event] = await events(alice, queue_id);
  assert.deepEqual({ ...event, id: 0 }, { id: 0, type: 'attachment', op: 'remove', attachment: { id }, upload_space_used: used });
  expectError(await alice.delete(`/attachments/${id}`), 'Invalid attachment');
});

test('temporary URLs: from GET /api/v1/user_uploads/..., served without credentials, checked', async () => {
  const alice = await server.createUser();
  const bob = await server.createUser();
  const { url } = await uploadText(alice, 'shared briefly', 'brief.txt');
  const api = `/api/v1${url}`;
  const res = await server.app.inject({ method: 'GET', url: api, headers: { authorization: basic(alice) } });
  assert.equal(res.statusCode, 200);
  const body = JSON.parse(res.body);
  assert.match(body.url, /^\/user_uploads\/temporary\/[^/]+\/brief\.txt$/);
  assert.deepEqual(Object.keys(body).sort(), ['msg', 'result', 'url']);
  const file = await fetchFile(body.url);
  assert.equal(file.statusCode, 200);
  assert.equal(file.body, 'shared briefly');

  // Those who may not read the file get no URL for it.
  assert.equal((await server.app.inject({ method: 'GET', url: api, headers: { authorization: basic(bob) } })).statusCode, 403);
  assert.equal((await server.app.inject({ method: 'GET', url: api })).statusCode, 401);
  // A forged token, or another file name.
  const [, , , token] = body.url.split('/');
  const forged = await fetchFile(`/user_uploads/temporary/${token.slice(0, -2)}xx/brief.txt`);
  assert.equal(forged.statusCode, 400);
  assert.equal(JSON.parse(forged.body).msg, 'Invalid token');
  const renamed = await fetchFile(`/user_uploads/temporary/${token}/other.txt`);
  assert.equal(JSON.parse(renamed.body).msg, 'Invalid filename');
});

test('images: thumbnails are made, served to readers, and messages carry the reference inline-image markup', async () => {
  const alice = await server.createUser();
  const bob = await server.createUser();
  const image = await png(1200, 900);
  const res = await multipart(alice, '/user_uploads', [{ filename: 'photo.png', type: 'image/png', data: image }]);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const pathId = res.body.url.slice('/user_uploads/'.length);
  const thumbnail = `/user_uploads/thumbnail/${pathId}/840x560.webp`;
  assert.ok(storedRegularFiles().includes(join('files', 'thumbnail', pathId, '840x560.webp')));

  await channel('files-images', [alice, bob]);
  const id = await send(alice, 'files-images', `[photo.png](${res.body.url})`);
  const message = (await bob.get(`/messages/${id}`)).body.message;
  // A named link keeps its paragraph (the reference's get_inlining_information); the preview follows it.
  assert.equal(
    message.content,
    `<p><a href="${res.body.url}">photo.png</a></p>\n<div class="message_inline_image"><a href="${res.body.url}" title="photo.png"><img data-original-content-type="image/png" data-original-dimensions="1200x900" src="${thumbnail}"></a></div>`,
  );

  const served = await fetchFile(thumbnail, bob);
  assert.equal(served.statusCode, 200);
  assert.equal(served.headers['content-type'], 'image/webp');
  const meta = await sharp(served.rawPayload).metadata();
  assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 747, 560]);
  // A member may read a public channel's messages, so its files too; a guest outside it may not.
  assert.equal((await fetchFile(thumbnail, await server.createUser())).statusCode, 200);
  assert.equal((await fetchFile(thumbnail, await server.createUser({ role: ROLE.GUEST }))).statusCode, 403);

  // An animation: both thumbnails, the animated one in the message.
  const frame = (colour: string) =>
    sharp({ create: { width: 20, height: 10, channels: 3, background: colour } })
      .png()
      .toBuffer();
  const gif = await sharp([await frame('red'), await frame('blue')], { join: { animated: true } })
    .gif()
    .toBuffer();
  const animated = await multipart(alice, '/user_uploads', [{ filename: 'wave.gif', type: 'image/gif', data: gif }]);
  const gifPath = animated.body.url.slice('/user_uploads/'.length);
  assert.ok(storedRegularFiles().includes(join('files', 'thumbnail', gifPath, '840x560-anim.webp')));
  assert.ok(storedRegularFiles().includes(join('files', 'thumbnail', gifPath, '840x560.webp')));
  const gifId = await send(alice, 'files-images', `[wave.gif](${animated.body.url})`);
  assert.equal(
    (await bob.get(`/messages/${gifId}`)).body.message.content,
    `<p><a href="${animated.body.url}">wave.gif</a></p>\n<div class="message_inline_image"><a href="${animated.body.url}" title="wave.gif"><img data-animated="true" data-original-content-type="image/gif" data-original-dimensions="20x10" src="/user_uploads/thumbnail/${gifPath}/840x560-anim.webp"></a></div>`,
  );

  // A malformed image is kept as a file, with no thumbnail and no preview: a plain link.
  const broken = await multipart(alice, '/user_uploads', [{ filename: 'broken.png', type: 'image/png', data: Buffer.from('not really a png') }]);
  assert.equal(broken.status, 200);
  const brokenId = await send(alice, 'files-images', `[broken.png](${broken.body.url})`);
  assert.equal((await bob.get(`/messages/${brokenId}`)).body.message.content, `<p><a href="${broken.body.url}">broken.png</a></p>`);
});

test('refusals: no file, two files, too large, over the quota; none leaves a file behind', async () => {
  const alice = await server.createUser();
  const before = storedRegularFiles();
  expectError(await multipart(alice, '/user_uploads', []), 'You must specify a file to upload');
  expectError(await multipart(alice, '/user_uploads', [{ data: Buffer.from('a') }, { data: Buffer.from('b') }]), 'You may only upload one file at a time');
  expectError(await multipart(alice, '/user_uploads', [{ data: Buffer.alloc(1024 * 1024 + 1, 1) }]), 'Uploaded file is larger than the allowed limit of 1 MiB');

  // Over the organization's quota: refused after the bytes were stored, which are removed again.
  const used = (await alice.get('/attachments')).body.upload_space_used;
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const quotaMib = Math.ceil((used + 1) / (1024 * 1024));
  const setQuota = (quota: number | null) =>
    server.svc.db
      .updateTable('realms')
      .set({ settings: JSON.stringify({ ...realm.settings, upload_quota_mib: quota }) })
      .where('id', '=', 1)
      .execute();
  await setQuota(quotaMib);
  try {
    const room = quotaMib * 1024 * 1024 - used;
    expectError(
      await multipart(alice, '/user_uploads', [{ filename: 'big.png', type: 'image/png', data: Buffer.alloc(room + 1, 7) }]),
      "Upload would exceed your organization's upload quota.",
      'REALM_UPLOAD_QUOTA',
    );
    assert.deepEqual(storedRegularFiles(), before);
    const register = (await alice.post('/register', { fetch_event_types: ['realm'] })).body;
    assert.equal(register.realm_upload_quota_mib, quotaMib);
  } finally {
    await setQuota(null);
  }

  // An empty file is a file, as in the reference.
  const empty = await multipart(alice, '/user_uploads', [{ filename: 'empty.txt', data: Buffer.alloc(0) }]);
  assert.equal(empty.status, 200);
  assert.equal((await fetchFile(empty.body.url, alice)).body, '');
});

test('max_file_upload_size_mib in /server_settings and /register', async () => {
  assert.equal((await server.anonymous.get('/server_settings')).body.max_file_upload_size_mib, 1);
  const state = (await server.owner.post('/register', { fetch_event_types: ['realm'] })).body;
  assert.equal(state.max_file_upload_size_mib, 1);
  assert.equal(state.realm_upload_quota_mib, null);
  assert.deepEqual(
    state.server_thumbnail_formats.map((f: any) => f.name),
    ['840x560-anim.webp', '840x560.webp'],
  );
});

test('avatars: upload replaces the Gravatar, events keep state in sync, removal goes back; refusals', async () => {
  const alice = await server.createUser();
  const bob = await server.createUser();
  const viewer = await registerViewer(server, bob);
  const self = await registerViewer(server, alice);
  const before = storedRegularFiles();

  expectError(await multipart(alice, '/users/me/avatar', []), 'You must upload exactly one avatar.');
  expectError(
    await multipart(alice, '/users/me/avatar', [{ filename: 'a.txt', type: 'text/plain', data: Buffer.from('words') }]),
    'Invalid image format',
    'BAD_IMAGE',
  );
  expectError(
    await multipart(alice, '/users/me/avatar', [{ filename: 'a.png', type: 'image/png', data: Buffer.from('not an image') }]),
    'Could not decode image; did you upload an image file?',
    'BAD_IMAGE',
  );
  expectError(
    await multipart(alice, '/users/me/avatar', [{ filename: 'a.png', type: 'image/png', data: Buffer.alloc(0) }]),
    'Could not decode image; did you upload an image file?',
    'BAD_IMAGE',
  );
  assert.deepEqual(storedRegularFiles(), before);

  const version = (await alice.get(`/users/${alice.id}`)).body.user.avatar_version;
  const res = await multipart(alice, '/users/me/avatar', [{ filename: 'me.png', type: 'image/png', data: await png(300, 200) }]);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.avatar_url, `/user_avatars/1/${alice.id}.png?version=${version + 1}`);
  const user = (await bob.get(`/users/${alice.id}`)).body.user;
  assert.equal(user.avatar_url, res.body.avatar_url);
  assert.equal(user.avatar_version, version + 1);
  const small = await server.app.inject({ method: 'GET', url: res.body.avatar_url });
  assert.equal(small.statusCode, 200);
  assert.equal(small.headers['content-type'], 'image/png');
  assert.deepEqual(
    await sharp(small.rawPayload)
      .metadata()
      .then((m) => [m.width, m.height]),
    [100, 100],
  );
  const medium = await server.app.inject({ method: 'GET', url: `/user_avatars/1/${alice.id}-medium.png` });
  assert.deepEqual(
    await sharp(medium.rawPayload)
      .metadata()
      .then((m) => [m.width, m.height]),
    [500, 500],
  );
  // /avatar/{id} now redirects to the upload.
  const redirect = await server.app.inject({ method: 'GET', url: `/avatar/${alice.id}`, headers: { authorization: basic(bob) } });
  assert.equal(redirect.headers.location, res.body.avatar_url);
  await expectStateInSync(server, viewer, 'avatar uploaded (other)');
  await expectStateInSync(server, self, 'avatar uploaded (self)');

  const removed = await alice.delete('/users/me/avatar');
  assert.equal(removed.status, 200);
  assert.match(removed.body.avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=\d+$/);
  assert.equal((await server.app.inject({ method: 'GET', url: `/user_avatars/1/${alice.id}.png` })).statusCode, 404);
  await expectStateInSync(server, viewer, 'avatar removed (other)');
  await expectStateInSync(server, self, 'avatar removed (self)');

  // Avatar changes disabled: members may not, administrators may.
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  await server.svc.db
    .updateTable('realms')
    .set({ settings: JSON.stringify({ ...realm.settings, avatar_changes_disabled: true }) })
    .where('id', '=', 1)
    .execute();
  try {
    expectError(
      await multipart(alice, '/users/me/avatar', [{ filename: 'me.png', type: 'image/png', data: await png(10, 10) }]),
      'Avatar changes are disabled in this organization.',
    );
    assert.equal((await multipart(server.owner, '/users/me/avatar', [{ filename: 'me.png', type: 'image/png', data: await png(10, 10) }])).status, 200);
  } finally {
    await server.svc.db
      .updateTable('realms')
      .set({ settings: JSON.stringify(realm.settings) })
      .where('id', '=', 1)
      .execute();
  }
});

test('organization icon and logos: administrators only, register and events in sync, removal', async () => {
  const member = await server.createUser();
  const admin = await server.createUser({ role: ROLE.ADMINISTRATOR });
  const viewer = await registerViewer(server, member);
  const image = await png(400, 100);

  const refused = await multipart(member, '/realm/icon', [{ filename: 'i.png', type: 'image/png', data: image }]);
  expectError(refused, 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
  expectError(await multipart(admin, '/realm/icon', []), 'You must upload exactly one icon.');
  expectError(await multipart(admin, '/realm/logo', [{ filename: 'l.txt', type: 'text/plain', data: Buffer.from('x') }]), 'Invalid image format', 'BAD_IMAGE');

  const icon = await multipart(admin, '/realm/icon', [{ filename: 'i.png', type: 'image/png', data: image }]);
  assert.equal(icon.status, 200, JSON.stringify(icon.body));
  assert.match(icon.body.icon_url, /^\/user_avatars\/1\/realm\/icon\.png\?version=\d+$/);
  const served = await server.app.inject({ method: 'GET', url: icon.body.icon_url });
  assert.deepEqual(
    await sharp(served.rawPayload)
      .metadata()
      .then((m) => [m.width, m.height]),
    [100, 100],
  );
  await expectStateInSync(server, viewer, 'icon uploaded');
  const state = (await member.post('/register', { fetch_event_types: ['realm'] })).body;
  assert.equal(state.realm_icon_url, icon.body.icon_url);
  assert.equal(state.realm_icon_source, 'U');
  assert.equal((await server.anonymous.get('/server_settings')).body.realm_icon, icon.body.icon_url);

  const logo = await multipart(admin, '/realm/logo', [{ filename: 'l.png', type: 'image/png', data: await png(1600, 100) }], { night: 'true' });
  assert.deepEqual(logo.body, { result: 'success', msg: '' });
  await expectStateInSync(server, viewer, 'night logo uploaded');
  const withLogo = (await member.post('/register', { fetch_event_types: ['realm'] })).body;
  assert.equal(withLogo.realm_night_logo_source, 'U');
  assert.equal(withLogo.realm_logo_source, 'D');
  const night = await server.app.inject({ method: 'GET', url: withLogo.realm_night_logo_url });
  assert.deepEqual(
    await sharp(night.rawPayload)
      .metadata()
      .then((m) => [m.width, m.height]),
    [800, 50],
  );

  assert.equal((await admin.delete('/realm/logo', { night: true })).status, 200);
  const removed = await admin.delete('/realm/icon');
  assert.match(removed.body.icon_url, /^https:\/\/secure\.gravatar\.com\//);
  await expectStateInSync(server, viewer, 'icon and logo removed');
  expectError(await member.delete('/realm/icon'), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
});
