// Soft deactivation (messages/soft-deactivation.ts): long-term idle subscribers get no
// copy of a plain channel message, one when they need it at once, and their missing copies
// when they come back. Every test runs the same steps for Ivy (made idle) and Tom (her
// twin, always active): on return, Ivy must see what Tom sees.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startTestServer, ok, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { runSoftDeactivationPass } from '../../src/messages/soft-deactivation.ts';

const DAY_MS = 86_400_000;
let server: TestServer;
let admin: Client;
let alice: Client;
let ivy: Client;
let tom: Client;
let ian: Client;
let bob: Client;

before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com', fullName: 'Ada Admin' });
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  ivy = await server.createUser({ email: 'ivy@example.com', fullName: 'Ivy Idle' });
  tom = await server.createUser({ email: 'tom@example.com', fullName: 'Tom Twin' });
  ian = await server.createUser({ email: 'ian@example.com', fullName: 'Ian Idle' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Busy' });
  const everyone = [admin.id, alice.id, ivy.id, tom.id, ian.id, bob.id];
  ok(await admin.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'Big' }, { name: 'Side' }]), principals: JSON.stringify(everyone) }));
  ok(await admin.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'Elsewhere' }]), principals: JSON.stringify([admin.id, alice.id]) }));
  for (const c of [ian]) ok(await c.post('/users/me/alert_words', { alert_words: JSON.stringify(['pineapple']) }));
});
after(() => server.close());

const channelMessage = async (content: string, to = 'Big', topic = 'chat') =>
  ok(await alice.post('/messages', { type: 'stream', to, topic, content })).id as number;

/** Makes these users' last activity 40 days old, then runs the daily pass. */
async function goIdle(...clients: Client[]) {
  const ids = clients.map((c) => c.id);
  await server.svc.db
    .updateTable('users')
    .set({ last_active_at: null, date_joined: new Date(Date.now() - 40 * DAY_MS) })
    .where('id', 'in', ids)
    .execute();
  await server.svc.db.deleteFrom('user_presence').where('user_id', 'in', ids).execute();
  return runSoftDeactivationPass(server.svc);
}

async function isIdle(c: Client): Promise<boolean> {
  return (await server.svc.db.selectFrom('users').select('long_term_idle').where('id', '=', c.id).executeTakeFirstOrThrow()).long_term_idle;
}

/** A user's copies of these messages, read without a request (a request would bring them back). */
async function copies(c: Client, ids: number[]): Promise<Map<number, number>> {
  const rows = await server.svc.db
    .selectFrom('user_messages')
    .select(['message_id', 'flags'])
    .where('user_id', '=', c.id)
    .where('message_id', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.message_id, r.flags]));
}

/** What a client sees of its channels: every message with its flags, and the unread counts. */
async function view(c: Client) {
  const messages: Record<string, string[]> = {};
  for (const channel of ['Big', 'Side', 'Elsewhere']) {
    const res = await c.get('/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow: JSON.stringify([['channel', channel]]) });
    if (res.status !== 200) continue;
    for (const m of res.body.messages) messages[`${channel}:${m.id}`] = [...m.flags].sort();
  }
  const state = ok(await c.post('/register', { event_types: JSON.stringify(['message', 'update_message_flags']) }));
  const unread = state.unread_msgs;
  return {
    messages,
    count: unread.count,
    streams: unread.streams.map((s: any) => ({ stream_id: s.stream_id, topic: s.topic, ids: s.unread_message_ids })),
    mentions: unread.mentions,
  };
}

async function sameAsTwin() {
  const seen = await view(ivy);
  assert.equal(await isIdle(ivy), false, 'a request brings her back');
  const twin = await view(tom);
  // Tom is mentioned where Ivy is: their flags match message for message.
  assert.deepEqual(seen, twin);
  return seen;
}

test('the idle pass marks humans inactive for the configured days, and no one else', async () => {
  const recent = await server.createUser({ email: 'recent@example.com', fullName: 'Rita Recent' });
  const gone = await server.createUser({ email: 'gone@example.com', fullName: 'Gus Gone' });
  const bot = ok(await admin.post('/bots', { full_name: 'Old Bot', short_name: 'oldbot', bot_type: 1 }));
  const old = new Date(Date.now() - 40 * DAY_MS);
  // Active 20 days ago (presence): not idle under the 28-day default.
  await server.svc.db
    .updateTable('users')
    .set({ date_joined: old, last_active_at: new Date(Date.now() - 20 * DAY_MS) })
    .where('id', '=', recent.id)
    .execute();
  await server.svc.db.updateTable('users').set({ date_joined: old }).where('id', 'in', [gone.id, bot.user_id]).execute();
  ok(await admin.delete(`/users/${gone.id}`));
  const { marked } = await goIdle(ian);
  assert.deepEqual(marked, [ian.id]);
  assert.equal(await isIdle(recent), false);
  // The organization's setting: fewer days mark Rita too.
  server.svc.config.softDeactivation.days = 10;
  try {
    assert.deepEqual((await runSoftDeactivationPass(server.svc)).marked, [recent.id]);
  } finally {
    server.svc.config.softDeactivation.days = 28;
  }
  ok(await recent.get('/users/me'));
  ok(await ian.get('/users/me'));
  assert.equal(await isIdle(ian), false);
  // Her return counts as activity: the next pass leaves her alone.
  assert.deepEqual((await runSoftDeactivationPass(server.svc)).marked, []);
});

test('an idle subscriber gets a copy only when the message needs one now', async () => {
  ok(
    await ivy.post('/users/me/subscriptions/properties', {
      subscription_data: JSON.stringify([{ stream_id: await channelId('Side'), property: 'email_notifications', value: true }]),
    }),
  );
  ok(
    await tom.post('/users/me/subscriptions/properties', {
      subscription_data: JSON.stringify([{ stream_id: await channelId('Side'), property: 'email_notifications', value: true }]),
    }),
  );
  const { marked } = await goIdle(ivy, ian);
  assert.deepEqual(
    marked,
    [ivy.id, ian.id].sort((a, b) => a - b),
  );
  const plain = await channelMessage('nothing for anyone in particular');
  const alert = await channelMessage('who brought the pineapple?');
  // Mentioned, they follow the topic (automatically_follow_topics_where_mentioned): later messages there may email them.
  const mention = await channelMessage('@**Ivy Idle** @**Tom Twin** look', 'Big', 'mentions');
  const emailed = await channelMessage('Side emails Ivy', 'Side');
  const wildcard = await channelMessage('@**all** (wildcard) hello', 'Side', 'small');
  // Bob is active: a copy of each.
  assert.deepEqual([...(await copies(bob, [plain, mention, alert])).keys()].sort(), [plain, mention, alert].sort());
  const ivys = await copies(ivy, [plain, mention, alert, emailed, wildcard]);
  assert.deepEqual(
    [...ivys.keys()].sort((a, b) => a - b),
    [mention, emailed, wildcard].sort((a, b) => a - b),
  );
  const ians = await copies(ian, [plain, mention, alert, emailed, wildcard]);
  assert.deepEqual(
    [...ians.keys()].sort((a, b) => a - b),
    [alert, wildcard].sort((a, b) => a - b),
  );
  assert.equal(await isIdle(ivy), true);
  // Back: everything, with the flags Tom has.
  const seen = await sameAsTwin();
  assert.deepEqual(seen.messages[`Big:${plain}`], []);
  assert.deepEqual(seen.messages[`Big:${mention}`], ['mentioned']);
  assert.ok(seen.count >= 5);
  // Ian, back through GET /messages alone.
  const res = ok(await ian.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify([['channel', 'Big']]) }));
  const byId = new Map(res.messages.map((m: any) => [m.id, m.flags]));
  assert.deepEqual(byId.get(plain), []);
  assert.deepEqual(byId.get(alert), ['has_alert_word']);
  assert.equal(await isIdle(ian), false);
});

async function channelId(name: string): Promise<number> {
  return ok(await admin.get('/get_stream_id', { stream: name })).stream_id;
}

test('concurrent returns add each missing copy once', async () => {
  await goIdle(ian);
  const ids: number[] = [];
  for (let i = 0; i < 5; i++) ids.push(await channelMessage(`while away ${i}`));
  assert.equal((await copies(ian, ids)).size, 0);
  const answers = await Promise.all([
    ian.get('/users/me'),
    ian.post('/register', { event_types: JSON.stringify(['message']) }),
    ian.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0 }),
    ian.get('/users/me'),
  ]);
  for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body));
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from user_messages where user_id = ${ian.id} and message_id = any(${ids})`.execute(
    server.svc.db,
  );
  assert.equal(rows[0]!.n, ids.length);
  assert.deepEqual([...(await copies(ian, ids)).values()], [0, 0, 0, 0, 0]);
});

test('subscription changes, a deactivation, moves and edits while idle keep history right', async () => {
  await goIdle(ivy);
  const asAdmin = async (path: string, params: Record<string, unknown>, method: 'post' | 'delete' | 'patch' = 'post') => ok(await admin[method](path, params));
  await channelMessage('before she left Side');
  // Unsubscribed (marks Side read), a message while away, subscribed again.
  for (const c of [ivy, tom])
    await asAdmin('/users/me/subscriptions', { subscriptions: JSON.stringify(['Side']), principals: JSON.stringify([c.id]) }, 'delete');
  await channelMessage('not for them', 'Side');
  for (const c of [ivy, tom])
    await asAdmin('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'Side' }]), principals: JSON.stringify([c.id]) });
  await channelMessage('for them again', 'Side');
  // Subscribed to a channel with history while idle: its older messages are not theirs.
  await channelMessage('old news elsewhere', 'Elsewhere');
  for (const c of [ivy, tom])
    await asAdmin('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'Elsewhere' }]), principals: JSON.stringify([c.id]) });
  await channelMessage('new news elsewhere', 'Elsewhere');
  // Deactivated and back: nothing of that time.
  for (const c of [ivy, tom]) ok(await admin.delete(`/users/${c.id}`));
  await channelMessage('while deactivated');
  for (const c of [ivy, tom]) ok(await admin.post(`/users/${c.id}/reactivate`));
  // An edit that mentions them, a move out of their channel, a move into it.
  const edited = await channelMessage('plain at first');
  ok(await alice.patch(`/messages/${edited}`, { content: 'now for @**Ivy Idle** and @**Tom Twin**' }));
  const leaving = await channelMessage('this one leaves', 'Big', 'moving out');
  const arriving = await channelMessage('this one arrives', 'Elsewhere', 'moving in');
  ok(await admin.patch(`/messages/${leaving}`, { stream_id: await channelId('Elsewhere'), propagate_mode: 'change_one' }));
  await channelMessage('unsubscribe from Elsewhere follows');
  for (const c of [ivy, tom])
    await asAdmin('/users/me/subscriptions', { subscriptions: JSON.stringify(['Elsewhere']), principals: JSON.stringify([c.id]) }, 'delete');
  ok(await admin.patch(`/messages/${arriving}`, { stream_id: await channelId('Big'), propagate_mode: 'change_one' }));
  assert.equal(await isIdle(ivy), true);
  const seen = await sameAsTwin();
  assert.deepEqual(seen.messages[`Big:${edited}`], ['mentioned']);
});

test('an export holds the copies an idle user is still waiting for', async () => {
  await goIdle(ivy);
  const waiting = await channelMessage('exported while she is away', 'Big', 'export');
  assert.equal((await copies(ivy, [waiting])).size, 0);
  const { exportRealm } = await import('../../src/export/export.ts');
  const { silentProgress } = await import('../../src/backup/progress.ts');
  const { mkdtempSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const realm = await server.svc.db
    .selectFrom('realms')
    .selectAll()
    .where('id', '=', (await server.svc.db.selectFrom('users').select('realm_id').where('id', '=', ivy.id).executeTakeFirstOrThrow()).realm_id)
    .executeTakeFirstOrThrow();
  await exportRealm(server.svc, realm, join(mkdtempSync(join(tmpdir(), 'confab-idle-')), 'export.tar.gz'), silentProgress());
  assert.deepEqual([...(await copies(ivy, [waiting])).entries()], [[waiting, 0]]);
  assert.equal(await isIdle(ivy), true, 'an export does not bring her back');
  await sameAsTwin();
});

test("an idle user who muted the sender gets the sender's messages read, as if active", async () => {
  const muter = await server.createUser({ email: 'muter@example.com', fullName: 'Mo Muter' });
  ok(await admin.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'Big' }]), principals: JSON.stringify([muter.id]) }));
  ok(await muter.post(`/users/me/muted_users/${alice.id}`));
  await goIdle(muter);
  const muted = await channelMessage('from someone Mo muted', 'Big', 'muting');
  assert.deepEqual([...(await copies(muter, [muted])).entries()], [[muted, 1]]);
  const res = ok(await muter.get('/messages', { anchor: 'newest', num_before: 5, num_after: 0, narrow: JSON.stringify([['channel', 'Big']]) }));
  assert.deepEqual(res.messages.find((m: any) => m.id === muted).flags, ['read']);
});
