// The message retention policy: which messages expire (a channel's value
// overrides the organization's; direct messages follow the organization's; -1
// keeps forever), deletion in bounded batches with delete_message events,
// restore from the archive within the grace period, the archive forgotten
// after it, and one pass at a time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { restoreArchived, runRetentionPass } from '../../src/retention/retention.ts';
import { ok, uploadFile } from './ops.fixture.ts';

const DAY = 86_400_000;
let server: TestServer;
let member: Client;
let ids: Record<'follows' | 'forever' | 'short', number>;
before(async () => {
  server = await startTestServer({ retention: { intervalMs: 0, vacuumDays: 30, unclaimedUploadsDays: 35 } });
  member = await server.createUser();
  const create = async (name: string, extra: Record<string, unknown>) => {
    ok(await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: [server.owner.id, member.id], ...extra }));
    return ok(await server.owner.get('/get_stream_id', { stream: name })).stream_id as number;
  };
  ids = {
    follows: await create('follows realm', {}),
    forever: await create('kept forever', { message_retention_days: 'unlimited' }),
    short: await create('five days', { message_retention_days: 5 }),
  };
  ok(await server.owner.patch('/realm', { message_retention_days: 30 }));
});
after(() => server.close());

/** Sends a message and moves it `days` into the past. */
async function sendAged(params: Record<string, unknown>, days: number, from: Client = server.owner): Promise<number> {
  const { id } = ok(await from.post('/messages', params));
  await server.svc.db
    .updateTable('messages')
    .set({ date_sent: new Date(Date.now() - days * DAY) })
    .where('id', '=', id)
    .execute();
  return id;
}
const inChannel = (name: string, topic = 'aging') => ({ type: 'stream', to: name, topic, content: `in ${name}` });
const direct = () => ({ type: 'direct', to: [server.owner.id], content: 'a direct message' });
const exists = async (id: number) => (await server.owner.get(`/messages/${id}`)).status === 200;

test('expired messages go, in batches, with delete_message events; the rest stay', async () => {
  const viewer = await registerViewer(server, member);
  const queue = ok(
    await member.post('/register', {
      event_types: ['delete_message'],
      client_capabilities: { notification_settings_null: false, bulk_message_deletion: true },
    }),
  );
  const expired = [
    await sendAged(inChannel('follows realm', 'one'), 40),
    await sendAged(inChannel('follows realm', 'two'), 31),
    await sendAged(inChannel('five days'), 10),
    await sendAged(direct(), 40, member),
  ];
  ok(await member.post(`/messages/${expired[0]}/reactions`, { emoji_name: 'octopus' }));
  const kept = [
    await sendAged(inChannel('follows realm'), 29),
    await sendAged(inChannel('kept forever'), 400),
    await sendAged(inChannel('five days'), 3),
    await sendAged(direct(), 20, member),
  ];
  // Batches of one: every batch is its own transaction and archive.
  const result = await runRetentionPass(server.svc, { batchSize: 1 });
  assert.deepEqual(result, { archived: 4, vacuumed: 0, unclaimed: 0 });
  for (const id of expired) assert.equal(await exists(id), false, `message ${id} expired`);
  for (const id of kept) assert.equal(await exists(id), true, `message ${id} kept`);
  const events = ok(await member.get('/events', { queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true })).events;
  const deleted = events.filter((e: any) => e.type === 'delete_message');
  assert.deepEqual(deleted.flatMap((e: any) => e.message_ids).sort(), [...expired].sort());
  const topics = deleted.filter((e: any) => e.message_type === 'stream').map((e: any) => [e.stream_id, e.topic]);
  assert.deepEqual(topics, [
    [ids.follows, 'one'],
    [ids.follows, 'two'],
    [ids.short, 'aging'],
  ]);
  await expectStateInSync(server, viewer, 'after the retention pass');
  const transactions = await server.svc.db.selectFrom('archive_transactions').select('id').execute();
  assert.equal(transactions.length, 4);
  // A second pass finds nothing more.
  assert.deepEqual(await runRetentionPass(server.svc), { archived: 0, vacuumed: 0, unclaimed: 0 });

  // Restored within the grace period: the messages, their reactions and flags.
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('string_id', '=', '').executeTakeFirstOrThrow();
  assert.equal(await restoreArchived(server.svc, realm, ids.short), 1);
  assert.equal(await exists(expired[2]), true);
  assert.equal(await exists(expired[0]), false);
  assert.equal(await restoreArchived(server.svc, realm), 3);
  for (const id of expired) assert.equal(await exists(id), true, `message ${id} restored`);
  const back = ok(await member.get(`/messages/${expired[0]}`)).message;
  assert.deepEqual(
    back.reactions.map((r: any) => r.emoji_name),
    ['octopus'],
  );
  const asMember = ok(await member.get('/messages', { anchor: expired[3], num_before: 0, num_after: 0 })).messages;
  assert.deepEqual(
    asMember.map((m: any) => m.id),
    [expired[3]],
  );
  assert.equal(await restoreArchived(server.svc, realm), 0);
  for (const id of [...expired, ...kept]) ok(await server.owner.delete(`/messages/${id}`));
});

test('an organization that keeps forever still applies channel policies; direct messages stay', async () => {
  ok(await server.owner.patch('/realm', { message_retention_days: JSON.stringify('unlimited') }));
  try {
    const dm = await sendAged(direct(), 400, member);
    const follows = await sendAged(inChannel('follows realm'), 400);
    const short = await sendAged(inChannel('five days'), 6);
    assert.deepEqual(await runRetentionPass(server.svc), { archived: 1, vacuumed: 0, unclaimed: 0 });
    assert.equal(await exists(short), false);
    assert.equal(await exists(dm), true);
    assert.equal(await exists(follows), true);
    for (const id of [dm, follows]) ok(await server.owner.delete(`/messages/${id}`));
  } finally {
    ok(await server.owner.patch('/realm', { message_retention_days: 30 }));
  }
});

test('archives older than the grace period are forgotten and cannot be restored', async () => {
  const id = await sendAged(inChannel('five days'), 8);
  assert.equal((await runRetentionPass(server.svc))!.archived, 1);
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('string_id', '=', '').executeTakeFirstOrThrow();
  const later = new Date(Date.now() + 31 * DAY);
  const result = await runRetentionPass(server.svc, { now: later });
  assert.ok(result!.vacuumed >= 1);
  assert.equal(await restoreArchived(server.svc, realm), 0);
  assert.equal(await exists(id), false);
  assert.equal((await server.svc.db.selectFrom('archived_messages').select('message_id').execute()).length, 0);
});

/** GET /user_uploads/...: the status and, when 200, the text. */
async function download(client: Client, url: string): Promise<{ status: number; text: string }> {
  const authorization = `Basic ${Buffer.from(`${client.email}:${client.apiKey}`).toString('base64')}`;
  const res = await server.app.inject({ method: 'GET', url, headers: { authorization } });
  return { status: res.statusCode, text: res.body };
}

test('files only expired messages link go with them, come back on restore, and leave storage with the archive', async () => {
  const lonely = await uploadFile(server.owner, 'lonely.txt', Buffer.from('only in an expired message'));
  const shared = await uploadFile(server.owner, 'shared.txt', Buffer.from('also in a kept message'));
  const pathOf = (url: string) => url.replace(/^\/user_uploads\//, '');
  const names = async () =>
    ok(await server.owner.get('/attachments'))
      .attachments.map((a: any) => a.name)
      .sort();
  const expired = await sendAged({ ...inChannel('five days'), content: `[a](${lonely}) [b](${shared})` }, 10);
  const kept = await sendAged({ ...inChannel('five days'), content: `[b](${shared})` }, 1);
  // A widget's data (submessages) hangs off its message too.
  const poll = await sendAged({ ...inChannel('five days'), content: '/poll Lunch?' }, 10);
  assert.equal(ok(await server.owner.get(`/messages/${poll}`)).message.submessages.length, 1);
  const lonelyId = ok(await server.owner.get('/attachments')).attachments.find((a: any) => a.name === 'lonely.txt').id;
  const viewer = await registerViewer(server, server.owner);
  const queue = ok(await server.owner.post('/register', { event_types: ['attachment'] }));
  const events = async () =>
    ok(await server.owner.get('/events', { queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true })).events.filter(
      (e: any) => e.type === 'attachment',
    );

  assert.equal((await runRetentionPass(server.svc))!.archived, 2);
  assert.equal(await exists(expired), false);
  assert.deepEqual(await names(), ['shared.txt'], 'the file no message links is gone; the shared one stays');
  const removed = await events();
  assert.deepEqual(
    removed.map((e: any) => [e.op, e.attachment.id]),
    [['remove', lonelyId]],
  );
  assert.equal(removed[0].upload_space_used, Buffer.byteLength('also in a kept message'));
  assert.notEqual((await download(server.owner, lonely)).status, 200);
  assert.ok(await server.svc.storage.get(`files/${pathOf(lonely)}`), 'the bytes stay for the grace period');
  await expectStateInSync(server, viewer, 'after files were archived');

  const realm = await server.svc.db.selectFrom('realms').selectAll().where('string_id', '=', '').executeTakeFirstOrThrow();
  assert.equal(await restoreArchived(server.svc, realm, ids.short), 2);
  assert.equal(ok(await server.owner.get(`/messages/${poll}`)).message.submessages.length, 1);
  assert.deepEqual(await names(), ['lonely.txt', 'shared.txt']);
  assert.deepEqual(await download(server.owner, lonely), { status: 200, text: 'only in an expired message' });
  const back = ok(await server.owner.get('/attachments')).attachments.find((a: any) => a.name === 'lonely.txt');
  assert.deepEqual(
    back.messages.map((m: any) => m.id),
    [expired],
  );
  const added = (await events()).slice(1);
  // (No state check here: a restore sends no message events, as the reference's.)
  assert.deepEqual(
    added.map((e: any) => [e.op, e.attachment.id]),
    [['add', lonelyId]],
  );

  // Expired again, and the archive forgotten: rows and bytes are gone for good.
  const later = new Date(Date.now() + 31 * DAY);
  assert.ok((await runRetentionPass(server.svc))!.archived >= 1);
  assert.ok((await runRetentionPass(server.svc, { now: later }))!.vacuumed >= 1);
  assert.equal(await server.svc.storage.get(`files/${pathOf(lonely)}`), null);
  assert.equal(await server.svc.storage.get(`files/${pathOf(shared)}`), null);
  assert.deepEqual(await names(), []);
  assert.equal(await restoreArchived(server.svc, realm), 0);
  assert.equal(await exists(kept), false);
});

test('uploads no message links go after UNCLAIMED_UPLOADS_DAYS, row, bytes and event; linked ones stay', async () => {
  const pathOf = (url: string) => `files/${url.replace(/^\/user_uploads\//, '')}`;
  const unclaimed = await uploadFile(server.owner, 'never-sent.txt', Buffer.from('uploaded, never linked'));
  const linked = await uploadFile(server.owner, 'linked.txt', Buffer.from('linked from a kept message'));
  const scheduled = await uploadFile(server.owner, 'scheduled.txt', Buffer.from('linked from a scheduled message'));
  ok(await server.owner.post('/messages', { ...inChannel('kept forever'), content: `[l](${linked})` }));
  ok(
    await server.owner.post('/scheduled_messages', {
      type: 'stream',
      to: ids.forever,
      topic: 'later',
      content: `[s](${scheduled})`,
      scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 3600,
    }),
  );
  const attachments = async () => ok(await server.owner.get('/attachments')).attachments as { id: number; name: string }[];
  const unclaimedId = (await attachments()).find((a) => a.name === 'never-sent.txt')!.id;
  const queue = ok(await server.owner.post('/register', { event_types: ['attachment'] }));

  // Younger than the limit: kept.
  assert.equal((await runRetentionPass(server.svc, { now: new Date(Date.now() + 34 * DAY) }))!.unclaimed, 0);
  assert.equal((await runRetentionPass(server.svc, { now: new Date(Date.now() + 36 * DAY) }))!.unclaimed, 1);
  const names = (await attachments()).map((a) => a.name);
  assert.ok(!names.includes('never-sent.txt'));
  assert.ok(names.includes('linked.txt') && names.includes('scheduled.txt'));
  assert.equal(await server.svc.storage.get(pathOf(unclaimed)), null);
  assert.ok(await server.svc.storage.get(pathOf(linked)));
  assert.ok(await server.svc.storage.get(pathOf(scheduled)));
  const { events } = ok(await server.owner.get('/events', { queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true }));
  assert.deepEqual(
    events.filter((e: any) => e.type === 'attachment').map((e: any) => [e.op, e.attachment.id]),
    [['remove', unclaimedId]],
  );
});

test('one pass at a time', async () => {
  const [a, b] = await Promise.all([runRetentionPass(server.svc), runRetentionPass(server.svc)]);
  assert.equal([a, b].filter((r) => r === null).length, 1);
});

test('another process holding the pass lock means no pass here', { skip: process.env.CONFAB_TEST_DB !== 'postgres' }, async () => {
  const other = new pg.Client({ connectionString: server.config.databaseUrl });
  await other.connect();
  try {
    await other.query('select pg_advisory_lock($1, $2)', [0x434f4e46, 1]);
    assert.equal(await runRetentionPass(server.svc), null);
    await other.query('select pg_advisory_unlock($1, $2)', [0x434f4e46, 1]);
    assert.notEqual(await runRetentionPass(server.svc), null);
  } finally {
    await other.end();
  }
});
