// Shared by the operations tests (backup, retention, export): a server
// populated through HTTP, its contents read back through HTTP, and scratch
// places (directories, PostgreSQL databases) that are cleaned up afterwards.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, freshPostgresDatabase, type TestServer } from '../support/server.ts';

const cleanups: (() => Promise<void> | void)[] = [];
export async function cleanUp(): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await c();
}

export function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'confab-ops-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A fresh empty PostgreSQL database when the run is on PostgreSQL, else undefined (PGlite). */
export async function scratchDatabase(): Promise<string | undefined> {
  if (process.env.CONFAB_TEST_DB !== 'postgres') return undefined;
  const db = await freshPostgresDatabase();
  cleanups.push(db.drop);
  return db.url;
}

export function ok(res: { status: number; body: any }): any {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

/** A 1x1 GIF. */
export const GIF = Buffer.from('R0lGODlhAQABAIAAAP8AAAAA/yH5BAQKAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

export async function uploadEmoji(client: Client, name: string, data: Buffer = GIF): Promise<void> {
  const res = await postFile(client, `/realm/emoji/${name}`, 'e.gif', 'image/gif', data);
  assert.equal(res.statusCode, 200, res.body);
}

/** A small PNG (thumbnails and avatar sizes are made from it). */
export async function png(color = '#3366cc'): Promise<Buffer> {
  const { default: sharp } = await import('sharp');
  return sharp({ create: { width: 40, height: 30, channels: 3, background: color } })
    .png()
    .toBuffer();
}

/**
 * Files of every kind under the uploads directory: a message's attachment and
 * an image with its thumbnail, the owner's avatar and the organization's icon.
 */
export async function populateFiles(server: TestServer): Promise<void> {
  const { owner } = server;
  const text = await uploadFile(owner, 'notes.txt', Buffer.from('the notes of a backed-up organization'));
  const image = await uploadFile(owner, 'picture.png', await png(), 'image/png');
  ok(await owner.post('/messages', { type: 'stream', to: 'backed', topic: 'files', content: `[notes](${text}) and [picture](${image})` }));
  assert.equal((await postFile(owner, '/users/me/avatar', 'me.png', 'image/png', await png('#cc3333'))).statusCode, 200);
  assert.equal((await postFile(owner, '/realm/icon', 'icon.png', 'image/png', await png('#33cc33'))).statusCode, 200);
}

/** POST /user_uploads: the file's /user_uploads/... path. */
export async function uploadFile(client: Client, filename: string, data: Buffer, contentType = 'text/plain'): Promise<string> {
  const res = await postFile(client, '/user_uploads', filename, contentType, data);
  assert.equal(res.statusCode, 200, res.body);
  return JSON.parse(res.body).url;
}

/** One file as multipart/form-data to an API endpoint. */
async function postFile(client: Client, path: string, filename: string, contentType: string, data: Buffer) {
  const boundary = `----confab${randomBytes(6).toString('hex')}`;
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${contentType}\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return client.server.app.inject({
    method: 'POST',
    url: `/api/v1${path}`,
    payload,
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      authorization: `Basic ${Buffer.from(`${client.email}:${client.apiKey}`).toString('base64')}`,
      ...(client.host ? { host: client.host } : {}),
    },
  });
}

export interface Populated {
  /** Each organization's owner: the root one and a second. */
  owners: { email: string; host: string | undefined }[];
}

/** Two organizations with people, channels, messages, reactions, an emoji and changed settings. */
export async function populate(server: TestServer): Promise<Populated> {
  const other = await server.createOrganization('other');
  const member = await server.createUser({ fullName: 'Member One' });
  for (const [owner, name] of [
    [server.owner, 'backed'],
    [other, 'elsewhere'],
  ] as const) {
    ok(await owner.post('/channels/create', { name, subscribers: [owner.id], description: `about ${name}` }));
    await uploadEmoji(owner, `${name}_emoji`);
    const m1 = ok(await owner.post('/messages', { type: 'stream', to: name, topic: 'first topic', content: `hello **${name}** :${name}_emoji:` })).id;
    ok(await owner.post('/messages', { type: 'stream', to: name, topic: 'second topic', content: 'a second message' }));
    ok(await owner.post(`/messages/${m1}/reactions`, { emoji_name: 'octopus' }));
    ok(await owner.post(`/messages/${m1}/reactions`, { emoji_name: `${name}_emoji` }));
  }
  ok(await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'backed' }], principals: [member.id] }));
  ok(await member.post('/messages', { type: 'direct', to: [server.owner.id], content: 'a direct message' }));
  ok(await server.owner.patch('/realm', { message_content_edit_limit_seconds: 1234, description: 'A backed-up organization' }));
  ok(await member.patch('/settings', { twenty_four_hour_time: true, emojiset: 'text' }));
  return {
    owners: [
      { email: server.owner.email!, host: undefined },
      { email: other.email!, host: other.host },
    ],
  };
}

/** Clients for the populated organizations' owners on `server` (e.g. after a restore). */
export async function ownersOn(server: TestServer, populated: Populated): Promise<Client[]> {
  const clients: Client[] = [];
  for (const o of populated.owners) {
    const u = await server.svc.db.selectFrom('users').select(['id', 'api_key']).where('delivery_email', '=', o.email).executeTakeFirstOrThrow();
    clients.push(new Client(server, u.id, o.email, u.api_key, o.host));
  }
  return clients;
}

/** Everything a client sees of its organization, less what changes with every request. */
export async function snapshot(client: Client): Promise<Record<string, unknown>> {
  const state = ok(await client.post('/register', {}));
  const kept = Object.fromEntries(
    Object.entries(state).filter(([k]) =>
      /^(realm_|user_settings|subscriptions|unsubscribed|never_subscribed|unread_msgs|recent_private|custom_profile)/.test(k),
    ),
  );
  const messages = ok(await client.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0 })).messages;
  const emoji = ok(await client.get('/realm/emoji')).emoji as Record<string, { source_url: string }>;
  const images: Record<string, string> = {};
  for (const e of Object.values(emoji)) {
    const res = await client.server.app.inject({ method: 'GET', url: e.source_url, headers: client.host ? { host: client.host } : {} });
    assert.equal(res.statusCode, 200);
    images[e.source_url] = res.rawPayload.toString('base64');
  }
  const users = ok(await client.get('/users')).members;
  // Every stored file the organization shows: attachments, thumbnails, avatars, the icon.
  const files: Record<string, string> = {};
  const fetchFile = async (url: string) => {
    const res = await client.server.app.inject({
      method: 'GET',
      url,
      headers: { ...(client.host ? { host: client.host } : {}), authorization: basic(client) },
    });
    assert.equal(res.statusCode, 200, url);
    files[url] = res.rawPayload.toString('base64');
  };
  const attachments = ok(await client.get('/attachments')).attachments as { path_id: string; name: string }[];
  for (const a of attachments) {
    await fetchFile(`/user_uploads/${a.path_id}`);
    if (a.name.endsWith('.png')) await fetchFile(`/user_uploads/thumbnail/${a.path_id}/840x560.webp`);
  }
  for (const u of users as { avatar_url: string | null }[]) if (u.avatar_url?.startsWith('/user_avatars/')) await fetchFile(u.avatar_url);
  if (String(state.realm_icon_url).startsWith('/user_avatars/')) await fetchFile(state.realm_icon_url);
  return { state: kept, messages, emoji, images, users, attachments, files };
}

const basic = (client: Client) => `Basic ${Buffer.from(`${client.email}:${client.apiKey}`).toString('base64')}`;
