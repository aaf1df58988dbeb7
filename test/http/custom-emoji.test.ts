// Custom emoji (digest sections 2, 3, 4, 6): upload (multipart), list,
// deactivate, the image files and their URLs, realm_emoji events and register
// state, and custom emoji in Markdown.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { systemGroupIds } from '../../src/user_groups/group-setting.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { renderMarkdown } from '../../src/rendering/index.ts';
import { renderSync } from '../../src/markdown/index.ts';
import { customEmojiById, customEmojiByName } from '../../src/custom_emoji/queries.ts';
import { inspectImage, stillImage } from '../../src/custom_emoji/image.ts';
import { uploadsRoot } from '../../src/uploads/storage.ts';

// --- Images, built byte by byte (decodable: checked with an image library when written). ---

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

function pngPixels(w: number, h: number, rgba: number[]): Buffer {
  const rows: Buffer[] = [];
  for (let y = 0; y < h; y++) rows.push(Buffer.from([0, ...Array.from({ length: w }, () => rgba).flat()]));
  return deflateSync(Buffer.concat(rows));
}

function fcTL(seq: number, w: number, h: number): Buffer {
  const b = Buffer.alloc(26);
  b.writeUInt32BE(seq, 0);
  b.writeUInt32BE(w, 4);
  b.writeUInt32BE(h, 8);
  b.writeUInt16BE(1, 20);
  b.writeUInt16BE(2, 22);
  return b;
}

/** An RGBA PNG; animated: an APNG of two frames. `claimed` overrides the size in the header only. */
function png(w: number, h: number, opts: { animated?: boolean; claimed?: [number, number] } = {}): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(opts.claimed?.[0] ?? w, 0);
  ihdr.writeUInt32BE(opts.claimed?.[1] ?? h, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', ihdr)];
  if (opts.animated) {
    const acTL = Buffer.alloc(8);
    acTL.writeUInt32BE(2, 0);
    parts.push(pngChunk('acTL', acTL), pngChunk('fcTL', fcTL(0, w, h)));
  }
  parts.push(pngChunk('IDAT', pngPixels(w, h, [255, 0, 0, 255])));
  if (opts.animated) {
    const seq = Buffer.alloc(4);
    seq.writeUInt32BE(2, 0);
    parts.push(pngChunk('fcTL', fcTL(1, w, h)), pngChunk('fdAT', Buffer.concat([seq, pngPixels(w, h, [0, 0, 255, 255])])));
  }
  parts.push(pngChunk('IEND', Buffer.alloc(0)));
  return Buffer.concat(parts);
}

/** A 1x1 GIF; animated: two frames and a loop extension. */
function gif(animated: boolean): Buffer {
  const frame = (data: number[]) => [0x21, 0xf9, 0x04, 0x04, 0x0a, 0, 0, 0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0x02, 0x02, ...data, 0];
  return Buffer.from([
    ...Buffer.from('GIF89a', 'latin1'),
    1,
    0,
    1,
    0,
    0x80,
    0,
    0,
    255,
    0,
    0,
    0,
    0,
    255,
    ...(animated ? [0x21, 0xff, 0x0b, ...Buffer.from('NETSCAPE2.0', 'latin1'), 3, 1, 0, 0, 0] : []),
    ...frame([0x44, 0x01]),
    ...(animated ? frame([0x4c, 0x01]) : []),
    0x3b,
  ]);
}

const JPEG = Buffer.from(
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  'base64',
);
const WEBP = Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64');

function riff(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(type, 0, 'latin1');
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body, Buffer.alloc(body.length & 1)]);
}

function animatedWebp(): Buffer {
  const vp8x = Buffer.alloc(10);
  vp8x[0] = 0x12;
  const frame = () => {
    const head = Buffer.alloc(16);
    head.writeUIntLE(100, 12, 3);
    return riff('ANMF', Buffer.concat([head, WEBP.subarray(12)]));
  };
  const body = Buffer.concat([Buffer.from('WEBP'), riff('VP8X', vp8x), riff('ANIM', Buffer.alloc(6)), frame(), frame()]);
  return Buffer.concat([riff('RIFF', body).subarray(0, 8), body]);
}

// --- HTTP helpers ---

interface Part {
  field?: string;
  filename?: string;
  type?: string;
  data: Buffer;
}

async function upload(client: Client, name: string, files: Part[]): Promise<{ status: number; body: any }> {
  const boundary = `----confab${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  files.forEach((f, i) => {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${f.field ?? `file-${i}`}"; filename="${f.filename ?? 'emoji.png'}"\r\n` +
          `Content-Type: ${f.type ?? 'image/png'}\r\n\r\n`,
      ),
      f.data,
      Buffer.from('\r\n'),
    );
  });
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  const res = await server.app.inject({
    method: 'POST',
    url: `/api/v1/realm/emoji/${encodeURIComponent(name)}`,
    payload: Buffer.concat(chunks),
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      authorization: `Basic ${Buffer.from(`${client.email}:${client.apiKey}`).toString('base64')}`,
    },
  });
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

const PNG = png(3, 2);
const uploadPng = (client: Client, name: string) => upload(client, name, [{ data: PNG }]);

function ok(res: { status: number; body: any }) {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body, { result: 'success', msg: '' });
}

function expectError(res: { status: number; body: any }, msg: string, code = 'BAD_REQUEST', status = 400) {
  assert.deepEqual({ status: res.status, body: res.body }, { status, body: { result: 'error', msg, code } });
}

async function emojiList(client: Client = server.owner): Promise<Record<string, any>> {
  const res = await client.get('/realm/emoji');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.emoji;
}

const byName = async (name: string) => Object.values(await emojiList()).find((e: any) => e.name === name && !e.deactivated);

let server: TestServer;
let uploads: string;
let admin: Client;
let moderator: Client;
let member: Client;
let otherMember: Client;
let guest: Client;
before(async () => {
  uploads = mkdtempSync(join(tmpdir(), 'confab-emoji-test-'));
  // Realm settings are changed behind the API's back here: no cached credentials.
  server = await startTestServer({ uploadsDir: uploads, credentialCacheMs: 0 });
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, fullName: 'Ada Admin' });
  moderator = await server.createUser({ role: ROLE.MODERATOR, fullName: 'Mo Derator' });
  member = await server.createUser({ role: ROLE.MEMBER, fullName: 'Mem Ber' });
  otherMember = await server.createUser({ role: ROLE.MEMBER, fullName: 'Oth Er' });
  guest = await server.createUser({ role: ROLE.GUEST, fullName: 'Gue St' });
});
after(async () => {
  await server.close();
  rmSync(uploads, { recursive: true, force: true });
});

async function setCanAddCustomEmoji(group: 'role:members' | 'role:administrators' | 'role:moderators'): Promise<void> {
  const groups = await systemGroupIds(server.svc.db, 1);
  const realm = await server.svc.db.selectFrom('realms').select('group_settings').where('id', '=', 1).executeTakeFirstOrThrow();
  await server.svc.db
    .updateTable('realms')
    .set({ group_settings: JSON.stringify({ ...realm.group_settings, can_add_custom_emoji_group: groups[group] }) })
    .where('id', '=', 1)
    .execute();
}

const emojiFiles = () =>
  existsSync(join(uploads, 'emoji', '1'))
    ? readdirSync(join(uploads, 'emoji', '1'), { recursive: true })
        .map(String)
        .sort()
    : [];

test('upload, list and fetch: the emoji dict, the file under the uploads folder, its URL', async () => {
  ok(await uploadPng(member, 'green_tick'));
  const emoji = await byName('green_tick');
  assert.ok(emoji);
  const id = Number(emoji.id);
  const file = new RegExp(`^/user_avatars/1/emoji/images/(${id}-[0-9a-f]{16}\\.png)$`).exec(emoji.source_url)?.[1];
  assert.ok(file, emoji.source_url);
  assert.deepEqual(emoji, {
    id: String(id),
    name: 'green_tick',
    source_url: `/user_avatars/1/emoji/images/${file}`,
    still_url: null,
    deactivated: false,
    author_id: member.id,
  });
  // Stored under <uploads>/emoji/<realm_id>/<id>-<random>.<ext>, exactly as uploaded.
  assert.deepEqual(readFileSync(join(uploads, 'emoji', '1', file)), PNG);
  // The random part: a URL cannot be guessed from the id.
  assert.equal((await server.app.inject({ method: 'GET', url: `/user_avatars/1/emoji/images/${id}.png` })).statusCode, 404);
  // Served without credentials (img tags send none), with its type.
  const image = await server.app.inject({ method: 'GET', url: emoji.source_url });
  assert.equal(image.statusCode, 200);
  assert.equal(image.headers['content-type'], 'image/png');
  assert.equal(image.headers['x-content-type-options'], 'nosniff');
  assert.deepEqual(image.rawPayload, PNG);
  const head = await server.app.inject({ method: 'HEAD', url: emoji.source_url });
  assert.equal(head.statusCode, 200);

  // Every user, guests included, may list; the response has just `emoji`.
  for (const client of [server.owner, admin, moderator, member, guest]) {
    const res = await client.get('/realm/emoji');
    assert.deepEqual(Object.keys(res.body).sort(), ['emoji', 'msg', 'result']);
    assert.deepEqual(res.body.emoji[String(id)], emoji);
  }
});

test('image formats are told by their bytes; extensions follow the format', async () => {
  const cases: [string, Buffer, string, string][] = [
    ['fmt-gif', gif(false), 'gif', 'image/gif'],
    // A JPEG declared as PNG is still a JPEG.
    ['fmt-jpeg', JPEG, 'jpg', 'image/jpeg'],
    ['fmt-webp', WEBP, 'webp', 'image/webp'],
  ];
  for (const [name, data, ext, mime] of cases) {
    ok(await upload(member, name, [{ data, type: 'image/png', filename: 'x.png' }]));
    const emoji = await byName(name);
    assert.match(emoji.source_url, new RegExp(`/${emoji.id}-[0-9a-f]{16}\\.${ext}$`));
    assert.equal(emoji.still_url, null);
    const res = await server.app.inject({ method: 'GET', url: emoji.source_url });
    assert.equal(res.headers['content-type'], mime);
    assert.deepEqual(res.rawPayload, data);
  }
});

test('animated images get a still: the first frame, in the same format', async () => {
  const cases: [string, Buffer, string][] = [
    ['anim-png', png(3, 2, { animated: true }), 'png'],
    ['anim-gif', gif(true), 'gif'],
    ['anim-webp', animatedWebp(), 'webp'],
  ];
  for (const [name, data, format] of cases) {
    assert.equal(inspectImage(data)?.animated, true);
    ok(await upload(member, name, [{ data }]));
    const emoji = await byName(name);
    assert.equal(emoji.still_url, emoji.source_url.replace('/images/', '/images/still/'));
    assert.match(emoji.source_url, new RegExp(`\\.${format}$`));
    const still = await server.app.inject({ method: 'GET', url: emoji.still_url });
    assert.equal(still.statusCode, 200);
    const info = inspectImage(still.rawPayload);
    assert.deepEqual(info, { ...inspectImage(data), animated: false });
    assert.deepEqual(still.rawPayload, stillImage(data, inspectImage(data)!.format));
  }
});

test('image URLs: unknown files and anything but an emoji file name are not found', async () => {
  for (const url of [
    '/user_avatars/1/emoji/images/999999-0123456789abcdef.png',
    '/user_avatars/1/emoji/images/still/999999-0123456789abcdef.png',
    '/user_avatars/1/emoji/images/1.png',
    '/user_avatars/1/emoji/images/..%2F..%2Fetc%2Fpasswd',
    '/user_avatars/1/emoji/images/1.txt',
    '/user_avatars/x/emoji/images/1.png',
    '/user_avatars/2/emoji/images/1-0123456789abcdef.png',
  ]) {
    const res = await server.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 404, url);
    assert.equal(JSON.parse(res.body).result, 'error');
  }
});

test('who may upload: members and up by default; the organization setting decides; never guests', async () => {
  expectError(await uploadPng(guest, 'by_guest'), 'Not allowed for guest users');
  for (const [i, client] of [member, moderator, admin, server.owner].entries()) ok(await uploadPng(client, `by_role_${i}`));

  await setCanAddCustomEmoji('role:administrators');
  try {
    const before = await emojiList();
    const files = emojiFiles();
    for (const client of [member, moderator]) expectError(await uploadPng(client, 'not_allowed'), 'Insufficient permission');
    expectError(await uploadPng(guest, 'not_allowed'), 'Not allowed for guest users');
    // A refusal stores nothing: no row, no file.
    assert.deepEqual(await emojiList(), before);
    assert.deepEqual(emojiFiles(), files);
    ok(await uploadPng(admin, 'admin_only_1'));
    ok(await uploadPng(server.owner, 'admin_only_2'));

    await setCanAddCustomEmoji('role:moderators');
    expectError(await uploadPng(member, 'mods_only'), 'Insufficient permission');
    ok(await uploadPng(moderator, 'mods_only'));
  } finally {
    await setCanAddCustomEmoji('role:members');
  }
});

test('names: lowercase letters, digits, dashes and underscores, ending in a letter or digit', async () => {
  ok(await uploadPng(member, '  party time  '));
  assert.ok(await byName('party_time'), 'spaces become underscores, surrounding ones go');
  ok(await uploadPng(member, 'a-1_b'));
  expectError(await uploadPng(member, 'ends_'), 'Emoji names must end with either a letter or digit.');
  expectError(await uploadPng(member, 'ends-'), 'Emoji names must end with either a letter or digit.');
  const charset = 'Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.';
  for (const bad of ['Capital', 'dot.ted', 'émoji', 'x:y']) expectError(await uploadPng(member, bad), charset);
  expectError(await uploadPng(member, '   '), 'Emoji name is missing');
  expectError(await uploadPng(member, 'x'.repeat(61)), 'Emoji name is too long (limit: 60 characters)');
  ok(await uploadPng(member, 'y'.repeat(60)));
});

test('one active emoji per name; a deactivated name can be used again', async () => {
  ok(await uploadPng(member, 'taken'));
  const first = await byName('taken');
  expectError(await uploadPng(otherMember, 'taken'), 'A custom emoji with this name already exists.');
  ok(await member.delete('/realm/emoji/taken'));
  ok(await uploadPng(otherMember, 'taken'));
  const second = await byName('taken');
  assert.notEqual(second.id, first.id);
  const all = await emojiList();
  assert.equal(all[first.id].deactivated, true);
  assert.equal(all[second.id].deactivated, false);
  assert.equal(all[second.id].author_id, otherMember.id);
});

test('uploads of one name at once: one wins, the others are told the name is taken', async () => {
  const results = await Promise.all([member, otherMember, admin, moderator].map((c) => uploadPng(c, 'racing')));
  assert.equal(results.filter((r) => r.status === 200).length, 1, JSON.stringify(results));
  for (const r of results.filter((r) => r.status !== 200)) expectError(r, 'A custom emoji with this name already exists.');
  assert.equal(Object.values(await emojiList()).filter((e: any) => e.name === 'racing').length, 1);
});

test('exactly one file, at most 5 MiB, and an image', async () => {
  const files = emojiFiles();
  const count = Object.keys(await emojiList()).length;
  expectError(await upload(member, 'no_file', []), 'You must upload exactly one file.');
  expectError(await member.post('/realm/emoji/no_file'), 'You must upload exactly one file.');
  expectError(await upload(member, 'two_files', [{ data: PNG }, { data: PNG }]), 'You must upload exactly one file.');
  const big = Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024 + 1 - PNG.length)]);
  expectError(await upload(member, 'too_big', [{ data: big }]), 'Uploaded file is larger than the allowed limit of 5 MiB');
  expectError(await upload(member, 'plain_text', [{ data: Buffer.from('hello'), type: 'text/plain', filename: 'a.txt' }]), 'Invalid image format', 'BAD_IMAGE');
  expectError(
    await upload(member, 'fake_png', [{ data: Buffer.from('hello'), type: 'image/png' }]),
    'Could not decode image; did you upload an image file?',
    'BAD_IMAGE',
  );
  expectError(await upload(member, 'cut_png', [{ data: PNG.subarray(0, 30) }]), 'Could not decode image; did you upload an image file?', 'BAD_IMAGE');
  expectError(
    await upload(member, 'vector_file', [{ data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), type: 'image/svg+xml' }]),
    'Invalid image format',
    'BAD_IMAGE',
  );
  // Images are served as uploaded: a header claiming a huge canvas is refused.
  expectError(await upload(member, 'huge', [{ data: png(1, 1, { claimed: [5000, 5000] }) }]), 'Image size exceeds limit.', 'BAD_IMAGE');
  assert.equal(Object.keys(await emojiList()).length, count);
  assert.deepEqual(emojiFiles(), files);
});

test('default emoji names: only administrators may override them', async () => {
  expectError(await uploadPng(member, 'airplane'), 'Only administrators can override default emoji.');
  expectError(await uploadPng(moderator, 'airplane'), 'Only administrators can override default emoji.');
  ok(await uploadPng(admin, 'airplane'));
  // And the custom one wins in Markdown.
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const airplane = await byName('airplane');
  const { html } = await renderMarkdown(server.svc, { realm, content: ':airplane:' });
  assert.equal(html, `<p><img alt=":airplane:" class="emoji" src="${airplane.source_url}" title="airplane"></p>`);
  ok(await admin.delete('/realm/emoji/airplane'));
  const restored = await renderMarkdown(server.svc, { realm, content: ':airplane:' });
  assert.match(restored.html, /^<p><span aria-label="airplane" class="emoji emoji-2708"/);
});

test('deactivate: the author or an administrator; unknown names are 404', async () => {
  ok(await uploadPng(member, 'my_own'));
  expectError(await otherMember.delete('/realm/emoji/my_own'), 'Must be an organization administrator or emoji author');
  expectError(await moderator.delete('/realm/emoji/my_own'), 'Must be an organization administrator or emoji author');
  expectError(await guest.delete('/realm/emoji/my_own'), 'Must be an organization administrator or emoji author');
  assert.equal((await byName('my_own')).deactivated, false);
  ok(await member.delete('/realm/emoji/my_own'));
  expectError(await member.delete('/realm/emoji/my_own'), "Emoji 'my_own' does not exist", 'BAD_REQUEST', 404);
  expectError(await member.delete('/realm/emoji/never_was'), "Emoji 'never_was' does not exist", 'BAD_REQUEST', 404);

  for (const [i, client] of [admin, server.owner].entries()) {
    ok(await uploadPng(member, `theirs_${i}`));
    ok(await client.delete(`/realm/emoji/theirs_${i}`));
  }
  // Deactivated emoji stay listed (old messages show them), and their images stay.
  const deactivated = Object.values(await emojiList()).find((e: any) => e.name === 'theirs_0');
  assert.equal(deactivated.deactivated, true);
  assert.equal((await server.app.inject({ method: 'GET', url: deactivated.source_url })).statusCode, 200);
});

test('events: realm_emoji/update with the whole dict after every change; register stays in sync', async () => {
  const viewers = [await registerViewer(server, member), await registerViewer(server, guest), await registerViewer(server, server.owner)];
  assert.deepEqual(viewers[0]!.state.realm_emoji, await emojiList());
  ok(await uploadPng(otherMember, 'evented'));
  for (const v of viewers) await expectStateInSync(server, v, 'after an upload');
  const events = await member.get('/events', { queue_id: viewers[0]!.queueId, last_event_id: -1, dont_block: true });
  const last = events.body.events.filter((e: any) => e.type === 'realm_emoji').at(-1);
  assert.deepEqual(last, { type: 'realm_emoji', op: 'update', realm_emoji: await emojiList(), id: last.id });

  ok(await otherMember.delete('/realm/emoji/evented'));
  for (const v of viewers) await expectStateInSync(server, v, 'after deactivating');
  ok(await upload(otherMember, 'evented', [{ data: gif(true) }]));
  for (const v of viewers) await expectStateInSync(server, v, 'after reusing the name');
  // Refusals send nothing.
  expectError(await uploadPng(guest, 'refused'), 'Not allowed for guest users');
  expectError(await member.delete('/realm/emoji/evented'), 'Must be an organization administrator or emoji author');
  for (const v of viewers) await expectStateInSync(server, v, 'after refusals');
  for (const v of viewers) await v.client.delete('/events', { queue_id: v.queueId });

  const only = await member.post('/register', { fetch_event_types: ['realm_emoji'] });
  assert.deepEqual(
    Object.keys(only.body).filter((k) => k.startsWith('realm')),
    ['realm_emoji'],
  );
  await member.delete('/events', { queue_id: only.body.queue_id });
});

test('Markdown: :name: shows the active custom emoji; deactivated ones do not render', async () => {
  ok(await uploadPng(member, 'shiny-thing'));
  const shiny = await byName('shiny-thing');
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const html = async (content: string) => (await renderMarkdown(server.svc, { realm, content })).html;
  assert.equal(await html('so :shiny-thing:'), `<p>so <img alt=":shiny-thing:" class="emoji" src="${shiny.source_url}" title="shiny-thing"></p>`);

  // Through HTTP: the organization's description.
  await server.svc.db.updateTable('realms').set({ description: 'We are :shiny-thing:' }).where('id', '=', 1).execute();
  const settings = await server.anonymous.get('/server_settings');
  assert.equal(settings.body.realm_description, `<p>We are <img alt=":shiny-thing:" class="emoji" src="${shiny.source_url}" title="shiny-thing"></p>`);
  await server.svc.db.updateTable('realms').set({ description: '' }).where('id', '=', 1).execute();

  ok(await member.delete('/realm/emoji/shiny-thing'));
  assert.equal(await html('so :shiny-thing:'), '<p>so :shiny-thing:</p>');
});

test('lookups for reactions: by name and by id, active only unless asked', async () => {
  ok(await uploadPng(member, 'react_me'));
  const emoji = await byName('react_me');
  const byNameRow = await customEmojiByName(server.svc.db, 1, 'react_me');
  assert.equal(byNameRow?.id, Number(emoji.id));
  assert.equal((await customEmojiById(server.svc.db, 1, Number(emoji.id)))?.name, 'react_me');
  // Other organizations' ids are not found.
  assert.equal(await customEmojiById(server.svc.db, 999, Number(emoji.id)), undefined);
  ok(await member.delete('/realm/emoji/react_me'));
  assert.equal(await customEmojiByName(server.svc.db, 1, 'react_me'), undefined);
  assert.equal(await customEmojiById(server.svc.db, 1, Number(emoji.id)), undefined);
  const kept = await customEmojiById(server.svc.db, 1, Number(emoji.id), { includeDeactivated: true });
  assert.equal(kept?.deactivated, true);
});

test('organizations do not share custom emoji', async () => {
  const outsider = await server.createOrganization('elsewhere');
  ok(await uploadPng(member, 'ours_only'));
  const ours = await byName('ours_only');
  assert.deepEqual((await outsider.get('/realm/emoji')).body.emoji, {});
  const res = await outsider.delete('/realm/emoji/ours_only');
  assert.equal(res.status, 404);
  assert.equal((await byName('ours_only')).deactivated, false);
  // The image is only under our organization's path.
  const elsewhere = ours.source_url.replace('/user_avatars/1/', `/user_avatars/${outsider.realmId}/`);
  assert.equal((await server.app.inject({ method: 'GET', url: elsewhere })).statusCode, 404);
  assert.equal(await customEmojiByName(server.svc.db, outsider.realmId, 'ours_only'), undefined);
});

test('messages sent through the API show active custom emoji; the uploads folder defaults to DATA_DIR/uploads', async () => {
  ok(await uploadPng(member, 'message_party'));
  const party = await byName('message_party');
  const success = (res: { status: number; body: any }) => {
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  success(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Emoji talk' }], principals: [admin.id, member.id, guest.id] }));
  const send = async (content: string) => success(await member.post('/messages', { type: 'stream', to: 'Emoji talk', topic: 'fun', content })).id;
  const content = async (c: Client, id: number) => success(await c.get(`/messages/${id}`)).message.content;
  const img = `<img alt=":message_party:" class="emoji" src="${party.source_url}" title="message party">`;
  const id = await send('it is :message_party:');
  assert.equal(await content(guest, id), `<p>it is ${img}</p>`);
  ok(await member.delete('/realm/emoji/message_party'));
  // Rendered once: old messages keep the image; new ones no longer find the name.
  assert.equal(await content(guest, id), `<p>it is ${img}</p>`);
  assert.equal(await content(guest, await send('still :message_party:?')), '<p>still :message_party:?</p>');

  assert.equal(uploadsRoot({ uploadsDir: undefined, dataDir: '/srv/confab' }), join('/srv/confab', 'uploads'));
  assert.equal(uploadsRoot({ uploadsDir: '/mnt/media', dataDir: '/srv/confab' }), '/mnt/media');
});

test('a message is rendered with the custom emoji it names, as with all of them (overlapping names too)', async () => {
  ok(await uploadPng(member, 'named_one'));
  ok(await uploadPng(member, 'named_two'));
  ok(await uploadPng(member, 'never_named'));
  const success = (res: { status: number; body: any }) => {
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  success(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Emoji names' }], principals: [admin.id, member.id] }));
  const all = Object.values(await emojiList())
    .filter((e: any) => !e.deactivated)
    .map((e: any) => ({ id: e.id, name: e.name, source_url: e.source_url }));
  // A linkifier match that ends before a colon: the emoji after it shares that colon with `:12:`.
  const linkifier = { pattern: 'ISSUE:(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/{id}' };
  const filter = success(await admin.post('/realm/filters', linkifier)).id;
  // The emoji pattern's matches depend on the text around them: a name after another
  // candidate's closing colon (not matched there), after digits and a colon, beside text.
  for (const content of [
    'ISSUE:12:named_one: ok',
    ':zzz_nothing:named_one: :named_two:',
    'at 10:named_two: ok',
    ':named_one:named_two: :named_two:x',
    ':smile: :named_one:',
  ]) {
    const id = success(await member.post('/messages', { type: 'stream', to: 'Emoji names', topic: 'names', content })).id;
    const html = success(await admin.get(`/messages/${id}`)).message.content;
    assert.equal(html, renderSync(content, { custom_emoji: all, linkifiers: [{ id: filter, ...linkifier }] }).html, content);
    assert.match(html, /<img alt=":named_(one|two):"/, content);
  }
  success(await admin.delete(`/realm/filters/${filter}`));
});
