// What the message edit, move and delete tests share: an organization with a
// user of every role, channels, and helpers for messages, settings and events.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { systemGroupIds } from '../../src/user_groups/group-setting.ts';
import type { SystemGroupName } from '../../src/user_groups/system-groups.ts';

export interface Org {
  server: TestServer;
  owner: Client;
  admin: Client;
  moderator: Client;
  alice: Client;
  bob: Client;
  carol: Client;
  guest: Client;
  groups: Record<SystemGroupName, number>;
}

export async function startOrg(): Promise<Org> {
  // Settings change under the server's feet here: no cached organizations.
  const server = await startTestServer({ credentialCacheMs: 0 });
  const org: Org = {
    server,
    owner: server.owner,
    admin: await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com', fullName: 'Ada Admin' }),
    moderator: await server.createUser({ role: ROLE.MODERATOR, email: 'mod@example.com', fullName: 'Mo Derator' }),
    alice: await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' }),
    bob: await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' }),
    carol: await server.createUser({ email: 'carol@example.com', fullName: 'Carol Cole' }),
    guest: await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com', fullName: 'Gus Guest' }),
    groups: await systemGroupIds(server.svc.db, 1),
  };
  return org;
}

/** Everyone of the organization by role, for permission matrices. */
export const everyone = (o: Org) => ({ owner: o.owner, admin: o.admin, moderator: o.moderator, member: o.alice, guest: o.guest });

let channels = 0;

/** A new channel (created by the owner) with these subscribers; returns its id. */
export async function channel(o: Org, subscribers: Client[], params: Record<string, unknown> = {}, name = `channel-${++channels}`): Promise<number> {
  const res = await o.owner.post('/users/me/subscriptions', {
    subscriptions: [{ name }],
    principals: [...new Set([o.owner.id, ...subscribers.map((c) => c.id)])],
    ...params,
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const row = await o.server.svc.db.selectFrom('channels').select('id').where('name', '=', name).executeTakeFirstOrThrow();
  return row.id;
}

export async function send(c: Client, channelId: number, topic: string, content: string): Promise<number> {
  const res = await c.post('/messages', { type: 'stream', to: String(channelId), topic, content });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

export async function sendDirect(c: Client, to: Client[], content: string): Promise<number> {
  const res = await c.post('/messages', { type: 'direct', to: JSON.stringify(to.map((u) => u.id)), content });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

/** The message as the client sees it (raw Markdown, the empty topic as is). */
export async function fetch(c: Client, id: number): Promise<any> {
  const res = await c.get(`/messages/${id}`, { apply_markdown: false, allow_empty_topic_name: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.message;
}

export async function rendered(c: Client, id: number): Promise<string> {
  return (await c.get(`/messages/${id}`)).body.message.content;
}

/** The stored row, for what clients cannot see directly. */
export async function row(o: Org, id: number) {
  return o.server.svc.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function flagBits(o: Org, user: Client, id: number): Promise<number | undefined> {
  const r = await o.server.svc.db.selectFrom('user_messages').select('flags').where('user_id', '=', user.id).where('message_id', '=', id).executeTakeFirst();
  return r?.flags;
}

/** Pretends messages were sent `seconds` ago. */
export async function age(o: Org, ids: number[], seconds: number): Promise<void> {
  await o.server.svc.db
    .updateTable('messages')
    .set({ date_sent: new Date(Date.now() - seconds * 1000) })
    .where('id', 'in', ids)
    .execute();
}

/** Runs `work` with some organization settings changed, then puts them back. */
export async function withSettings(o: Org, settings: Record<string, unknown>, work: () => Promise<void>): Promise<void> {
  const db = o.server.svc.db;
  const realm = await db.selectFrom('realms').select('settings').where('id', '=', 1).executeTakeFirstOrThrow();
  await db
    .updateTable('realms')
    .set({ settings: JSON.stringify({ ...realm.settings, ...settings }) })
    .where('id', '=', 1)
    .execute();
  try {
    await work();
  } finally {
    await db
      .updateTable('realms')
      .set({ settings: JSON.stringify(realm.settings) })
      .where('id', '=', 1)
      .execute();
  }
}

/** Runs `work` with organization permissions set to system groups, then puts them back. */
export async function withPermissions(o: Org, permissions: Record<string, SystemGroupName>, work: () => Promise<void>): Promise<void> {
  const db = o.server.svc.db;
  const realm = await db.selectFrom('realms').select('group_settings').where('id', '=', 1).executeTakeFirstOrThrow();
  const changed = Object.fromEntries(Object.entries(permissions).map(([k, g]) => [k, o.groups[g]]));
  await db
    .updateTable('realms')
    .set({ group_settings: JSON.stringify({ ...realm.group_settings, ...changed }) })
    .where('id', '=', 1)
    .execute();
  try {
    await work();
  } finally {
    await db
      .updateTable('realms')
      .set({ group_settings: JSON.stringify(realm.group_settings) })
      .where('id', '=', 1)
      .execute();
  }
}

/** Sets a channel permission to a system group (directly: the channel API has its own tests). */
export async function setChannelPermission(o: Org, channelId: number, setting: string, group: SystemGroupName): Promise<void> {
  await sql`update channels set ${sql.ref(`${setting}_id`)} = ${o.groups[group]} where id = ${channelId}`.execute(o.server.svc.db);
}

export interface Queue {
  client: Client;
  id: string;
  last: number;
}

export async function listen(c: Client, params: Record<string, unknown> = {}): Promise<Queue> {
  const res = await c.post('/register', { event_types: ['update_message', 'delete_message', 'stream', 'user_topic'], ...params });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { client: c, id: res.body.queue_id, last: -1 };
}

/** Events that arrived since the last call, without their ids. */
export async function events(q: Queue, type?: string): Promise<any[]> {
  const res = await q.client.get('/events', { queue_id: q.id, last_event_id: q.last, dont_block: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const list = res.body.events as any[];
  if (list.length > 0) q.last = list[list.length - 1].id;
  return list.filter((e) => e.type !== 'heartbeat' && (type === undefined || e.type === type)).map(({ id: _id, ...e }) => e);
}

export function expectError(res: { status: number; body: any }, msg: string, code = 'BAD_REQUEST'): void {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.msg, msg);
  assert.equal(res.body.code, code);
}
