// Scheduled messages: GET/POST/PATCH/DELETE /scheduled_messages, register's
// `scheduled_messages` and its events, and the scheduler that sends each one
// once (concurrent passes, a crash mid-delivery, a restart), or marks it
// failed and tells its author.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { lastMessageOf, later, ok, people, refused } from './scheduled-messages.fixture.ts';
import { deliverDue } from '../../src/scheduled_messages/scheduler.ts';
import { sendRequestOf } from '../../src/scheduled_messages/actions.ts';
import { sendWithin } from '../../src/messages/send/send.ts';
import { getUser } from '../../src/users/queries.ts';

let server: TestServer;
let author: Client;
let friend: Client;
let guest: Client;
let botId: number;
let lobby: number;
let secret: number;
before(async () => {
  server = await startTestServer();
  ({ author, friend, guest, botId } = await people(server));
  lobby = await createChannel('sched lobby', [author.id, friend.id, guest.id]);
  secret = await createChannel('sched secret', [server.owner.id], { invite_only: true });
});
after(() => server.close());

async function createChannel(name: string, subscribers: number[], extra: Record<string, unknown> = {}): Promise<number> {
  return ok(await server.owner.post('/channels/create', { name, subscribers, ...extra })).id;
}

async function schedule(c: Client, params: Record<string, unknown>): Promise<number> {
  return ok(await c.post('/scheduled_messages', { scheduled_delivery_timestamp: later(), ...params })).scheduled_message_id;
}

const inLobby = (content: string, topic = 'plans') => ({ type: 'stream', to: lobby, topic, content });

/** A scheduler pass as if run a minute after `timestamp`. */
const passAfter = (timestamp: number, svc = server.svc) => deliverDue(svc, new Date((timestamp + 60) * 1000));

async function scheduledOf(c: Client) {
  return ok(await c.get('/scheduled_messages')).scheduled_messages as any[];
}

async function lobbyMessages(c: Client, content: string) {
  const body = ok(await c.get('/messages', { anchor: 'newest', num_before: 200, num_after: 0, apply_markdown: false, narrow: [['channel', lobby]] }));
  return (body.messages as any[]).filter((m) => m.content === content);
}

test('a scheduled channel message and direct message: the reference objects, in GET and register, kept by events', async () => {
  const viewer = await registerViewer(server, author);
  const at = later();
  const channelId = ok(
    await author.post('/scheduled_messages', { type: 'channel', to: String(lobby), topic: 'plans', content: '**Hi**', scheduled_delivery_timestamp: at }),
  ).scheduled_message_id;
  const dmId = ok(
    await author.post('/scheduled_messages', { type: 'direct', to: [friend.id, author.id], content: 'psst', scheduled_delivery_timestamp: at + 1 }),
  ).scheduled_message_id;
  const toSelf = await schedule(author, { type: 'private', to: [author.id], content: 'note to self' });
  const listed = await scheduledOf(author);
  assert.deepEqual(listed.slice(0, 2), [
    {
      scheduled_message_id: channelId,
      type: 'stream',
      to: lobby,
      topic: 'plans',
      content: '**Hi**',
      rendered_content: '<p><strong>Hi</strong></p>',
      scheduled_delivery_timestamp: at,
      failed: false,
    },
    {
      scheduled_message_id: dmId,
      type: 'private',
      to: [friend.id],
      content: 'psst',
      rendered_content: '<p>psst</p>',
      scheduled_delivery_timestamp: at + 1,
      failed: false,
    },
  ]);
  assert.deepEqual(listed.find((m) => m.scheduled_message_id === toSelf).to, [author.id]);
  // Nobody else sees them.
  assert.deepEqual(await scheduledOf(friend), []);
  await expectStateInSync(server, viewer, 'after scheduling');
  const fetched = ok(await author.post('/register', { fetch_event_types: ['scheduled_messages'] }));
  assert.deepEqual(fetched.scheduled_messages, listed);
  for (const id of [channelId, dmId, toSelf]) ok(await author.delete(`/scheduled_messages/${id}`));
});

test('scheduling is refused as the send would be, and changes nothing', async () => {
  const before = await scheduledOf(author);
  const now = Math.floor(Date.now() / 1000);
  refused(
    await author.post('/scheduled_messages', { ...inLobby('late'), scheduled_delivery_timestamp: now - 5 }),
    'Scheduled delivery time must be in the future.',
  );
  refused(await author.post('/scheduled_messages', { type: 'stream', to: lobby, content: 'x', scheduled_delivery_timestamp: later() }), 'Missing topic');
  refused(await author.post('/scheduled_messages', { ...inLobby('x'), type: 'letter', scheduled_delivery_timestamp: later() }), 'Invalid type');
  refused(await author.post('/scheduled_messages', { ...inLobby(''), scheduled_delivery_timestamp: later() }), 'Message must not be empty');
  refused(
    await author.post('/scheduled_messages', { ...inLobby('x'), to: 'sched lobby', scheduled_delivery_timestamp: later() }),
    'Invalid data type for channel ID',
  );
  refused(
    await author.post('/scheduled_messages', { ...inLobby('x'), to: 99999, scheduled_delivery_timestamp: later() }),
    "Channel with ID '99999' does not exist",
    400,
    'STREAM_DOES_NOT_EXIST',
  );
  refused(
    await author.post('/scheduled_messages', { ...inLobby('x'), to: secret, scheduled_delivery_timestamp: later() }),
    "Not authorized to send to channel 'sched secret'",
  );
  refused(
    await author.post('/scheduled_messages', { type: 'direct', to: [99999], content: 'x', scheduled_delivery_timestamp: later() }),
    'Invalid user ID 99999',
  );
  refused(
    await author.post('/scheduled_messages', { type: 'direct', to: 'friend@example.com', content: 'x', scheduled_delivery_timestamp: later() }),
    'Invalid data type for recipients',
  );
  refused(
    await author.post('/scheduled_messages', { type: 'direct', to: ['friend@example.com'], content: 'x', scheduled_delivery_timestamp: later() }),
    'Recipient list may only contain user IDs',
  );
  refused(
    await author.post('/scheduled_messages', { type: 'direct', to: [], content: 'x', scheduled_delivery_timestamp: later() }),
    'Message must have recipients',
  );
  refused(
    await author.post('/scheduled_messages', { ...inLobby('x'), scheduled_delivery_timestamp: '1.5e9' }),
    'scheduled_delivery_timestamp is not an integer',
  );
  assert.equal((await server.anonymous.get('/scheduled_messages')).status, 401);
  assert.deepEqual(await scheduledOf(author), before);
  // The send's own rules come along: a wildcard in a large channel, direct messages turned off.
  const restricted = ok(await server.owner.post('/register', { fetch_event_types: ['realm_user_groups'] })).realm_user_groups.find(
    (g: any) => g.name === 'role:nobody',
  ).id;
  ok(await server.owner.patch('/realm', { direct_message_permission_group: JSON.stringify({ new: restricted }) }));
  try {
    refused(
      await author.post('/scheduled_messages', { type: 'direct', to: [friend.id], content: 'x', scheduled_delivery_timestamp: later() }),
      'Direct messages are disabled in this organization.',
    );
  } finally {
    const everyone = ok(await server.owner.post('/register', { fetch_event_types: ['realm_user_groups'] })).realm_user_groups.find(
      (g: any) => g.name === 'role:everyone',
    ).id;
    ok(await server.owner.patch('/realm', { direct_message_permission_group: JSON.stringify({ new: everyone }) }));
  }
  assert.deepEqual(await scheduledOf(author), before);
});

test('editing: content, topic, recipient, time; each change checked again; others cannot', async () => {
  const viewer = await registerViewer(server, author);
  const id = await schedule(author, inLobby('first draft'));
  ok(await author.patch(`/scheduled_messages/${id}`, { content: 'second *draft*' }));
  ok(await author.patch(`/scheduled_messages/${id}`, { topic: 'new plans' }));
  const at = later();
  ok(await author.patch(`/scheduled_messages/${id}`, { scheduled_delivery_timestamp: at }));
  let row = (await scheduledOf(author)).find((m) => m.scheduled_message_id === id);
  assert.deepEqual(row, {
    scheduled_message_id: id,
    type: 'stream',
    to: lobby,
    topic: 'new plans',
    content: 'second *draft*',
    rendered_content: '<p>second <em>draft</em></p>',
    scheduled_delivery_timestamp: at,
    failed: false,
  });
  await expectStateInSync(server, viewer, 'after edits');

  refused(await author.patch(`/scheduled_messages/${id}`, {}), 'Nothing to change');
  refused(await author.patch(`/scheduled_messages/${id}`, { type: 'direct' }), 'Recipient required when updating type of scheduled message.');
  refused(await author.patch(`/scheduled_messages/${id}`, { type: 'channel', to: lobby }), 'Topic required when updating scheduled message type to stream.');
  refused(await author.patch(`/scheduled_messages/${id}`, { to: secret }), "Not authorized to send to channel 'sched secret'");
  refused(await author.patch(`/scheduled_messages/${id}`, { scheduled_delivery_timestamp: 1000 }), 'Scheduled delivery time must be in the future.');
  refused(await friend.patch(`/scheduled_messages/${id}`, { content: 'mine now' }), 'Scheduled message does not exist', 404);
  refused(await author.patch('/scheduled_messages/99999', { content: 'x' }), 'Scheduled message does not exist', 404);
  assert.deepEqual(
    (await scheduledOf(author)).find((m) => m.scheduled_message_id === id),
    row,
  );

  // From channel to direct message: the topic goes.
  ok(await author.patch(`/scheduled_messages/${id}`, { type: 'direct', to: [friend.id] }));
  row = (await scheduledOf(author)).find((m) => m.scheduled_message_id === id);
  assert.deepEqual([row.type, row.to, row.topic], ['private', [friend.id], undefined]);
  await expectStateInSync(server, viewer, 'after moving to a direct message');
  ok(await author.delete(`/scheduled_messages/${id}`));
});

test('deleting: the author only, once', async () => {
  const viewer = await registerViewer(server, author);
  const id = await schedule(author, inLobby('never mind'));
  refused(await friend.delete(`/scheduled_messages/${id}`), 'Scheduled message does not exist', 404);
  ok(await author.delete(`/scheduled_messages/${id}`));
  refused(await author.delete(`/scheduled_messages/${id}`), 'Scheduled message does not exist', 404);
  assert.equal(
    (await scheduledOf(author)).some((m) => m.scheduled_message_id === id),
    false,
  );
  await expectStateInSync(server, viewer, 'after deleting');
  // Deleted means never sent.
  await passAfter(later() + 86400);
  assert.deepEqual(await lobbyMessages(friend, 'never mind'), []);
});

test('a due message is sent once, as its author, and leaves the lists', async () => {
  const authorView = await registerViewer(server, author);
  const friendView = await registerViewer(server, friend);
  const at = later();
  const id = ok(await author.post('/scheduled_messages', { ...inLobby('on time'), scheduled_delivery_timestamp: at })).scheduled_message_id;
  const dm = ok(
    await author.post('/scheduled_messages', { type: 'direct', to: [friend.id], content: 'on time, privately', scheduled_delivery_timestamp: at }),
  ).scheduled_message_id;
  // Not before its time.
  assert.equal(await deliverDue(server.svc, new Date((at - 1) * 1000)), 0);
  assert.deepEqual(await lobbyMessages(friend, 'on time'), []);
  assert.equal(await passAfter(at), 2);
  assert.equal(await passAfter(at), 0);
  const [sent] = await lobbyMessages(friend, 'on time');
  assert.deepEqual([sent.sender_id, sent.subject], [author.id, 'plans']);
  assert.equal((await lobbyMessages(friend, 'on time')).length, 1);
  const privately = await lastMessageOf(friend);
  assert.deepEqual([privately.content, privately.sender_id, privately.type], ['on time, privately', author.id, 'private']);
  assert.equal(
    (await scheduledOf(author)).some((m) => [id, dm].includes(m.scheduled_message_id)),
    false,
  );
  // The delivered row is gone from every view, edits and all.
  refused(await author.patch(`/scheduled_messages/${id}`, { content: 'too late' }), 'Scheduled message was already sent');
  await expectStateInSync(server, authorView, 'author after delivery');
  await expectStateInSync(server, friendView, 'friend after delivery');
});

test('concurrent passes send each message exactly once', async () => {
  const at = later();
  const contents = [1, 2, 3, 4, 5].map((n) => `race ${n}`);
  for (const content of contents) ok(await author.post('/scheduled_messages', { ...inLobby(content), scheduled_delivery_timestamp: at }));
  const claims = await Promise.all([passAfter(at), passAfter(at), passAfter(at)]);
  assert.equal(
    claims.reduce((a, b) => a + b, 0),
    5,
  );
  for (const content of contents) assert.equal((await lobbyMessages(friend, content)).length, 1, content);
});

test('a delivery that crashes before its commit is sent later, once', async () => {
  const at = later();
  const id = ok(await author.post('/scheduled_messages', { ...inLobby('after the crash'), scheduled_delivery_timestamp: at })).scheduled_message_id;
  const svc = server.svc;
  const realm = await svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const sender = (await getUser(svc.db, realm.id, author.id))!;
  // A pass that claimed the row and wrote the message, then died before committing.
  await assert.rejects(
    svc.db.transaction().execute(async (tx) => {
      const row = await tx.selectFrom('scheduled_messages').selectAll().where('id', '=', id).forNoKeyUpdate().executeTakeFirstOrThrow();
      await sendWithin({ svc, tx, emit: () => {}, realm, actor: sender }, sendRequestOf(row));
      // Meanwhile another process's pass passes it by (PGlite has one connection: no other pass can run).
      if (svc.dbKind === 'postgres') assert.equal(await passAfter(at), 0);
      throw new Error('crash');
    }),
    /crash/,
  );
  assert.deepEqual(await lobbyMessages(friend, 'after the crash'), []);
  assert.equal(await passAfter(at), 1);
  assert.equal((await lobbyMessages(friend, 'after the crash')).length, 1);
});

test('one that can no longer be sent is marked failed, its author told; a new time revives it', async () => {
  const doomed = await createChannel('sched doomed', [author.id, friend.id]);
  const viewer = await registerViewer(server, author);
  const at = later();
  const id = ok(
    await author.post('/scheduled_messages', { type: 'stream', to: doomed, topic: 't', content: 'into the void', scheduled_delivery_timestamp: at }),
  ).scheduled_message_id;
  ok(await server.owner.delete(`/streams/${doomed}`));
  assert.equal(await passAfter(at), 1);
  const row = (await scheduledOf(author)).find((m) => m.scheduled_message_id === id);
  assert.equal(row.failed, true);
  const notice = await lastMessageOf(author);
  const iso = new Date(at * 1000).toISOString().replace('.000Z', '+00:00');
  assert.equal(notice.sender_id, botId);
  assert.equal(
    notice.content,
    `The message you scheduled for <time:${iso}> was not sent because of the following error:\n\n> Not authorized to send to channel 'sched doomed'\n\n[View scheduled messages](#scheduled)`,
  );
  await expectStateInSync(server, viewer, 'after the failure');
  // Tried once: a later pass leaves it alone.
  assert.equal(await passAfter(at), 0);
  refused(await author.patch(`/scheduled_messages/${id}`, { content: 'again?' }), 'Scheduled delivery time must be in the future.');
  const next = later();
  ok(await author.patch(`/scheduled_messages/${id}`, { type: 'stream', to: lobby, topic: 't', scheduled_delivery_timestamp: next }));
  assert.equal((await scheduledOf(author)).find((m) => m.scheduled_message_id === id).failed, false);
  await expectStateInSync(server, viewer, 'after the revival');
  assert.equal(await passAfter(next), 1);
  assert.equal((await lobbyMessages(friend, 'into the void')).length, 1);
});

test('permission lost after scheduling: unsubscribed from a private channel, or too late', async () => {
  const club = await createChannel('sched club', [author.id, server.owner.id], { invite_only: true });
  const at = later();
  const id = ok(
    await author.post('/scheduled_messages', { type: 'stream', to: club, topic: 't', content: 'members only', scheduled_delivery_timestamp: at }),
  ).scheduled_message_id;
  ok(await server.owner.delete('/users/me/subscriptions', { subscriptions: ['sched club'], principals: [author.id] }));
  await passAfter(at);
  assert.equal((await scheduledOf(author)).find((m) => m.scheduled_message_id === id).failed, true);
  assert.match((await lastMessageOf(author)).content, /> Not authorized to send to channel 'sched club'/);

  const late = later();
  const lateId = ok(await author.post('/scheduled_messages', { ...inLobby('stale news'), scheduled_delivery_timestamp: late })).scheduled_message_id;
  await deliverDue(server.svc, new Date((late + 11 * 60) * 1000));
  assert.equal((await scheduledOf(author)).find((m) => m.scheduled_message_id === lateId).failed, true);
  assert.match((await lastMessageOf(author)).content, /> Message could not be sent at the scheduled time\./);
  assert.deepEqual(await lobbyMessages(friend, 'stale news'), []);
});

test('a deactivated author: no access, nothing sent, no notice', async () => {
  const leaver = await server.createUser({ email: 'leaver@example.com' });
  ok(await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'sched lobby' }], principals: [leaver.id] }));
  const at = later();
  const id = ok(await leaver.post('/scheduled_messages', { ...inLobby('from beyond'), scheduled_delivery_timestamp: at })).scheduled_message_id;
  const copies = () => server.svc.db.selectFrom('user_messages').select('message_id').where('user_id', '=', leaver.id).execute();
  const before = (await copies()).length;
  ok(await server.owner.delete(`/users/${leaver.id}`));
  assert.equal((await leaver.get('/scheduled_messages')).status, 401);
  assert.equal((await leaver.delete(`/scheduled_messages/${id}`)).status, 401);
  assert.equal(await passAfter(at), 1);
  assert.deepEqual(await lobbyMessages(friend, 'from beyond'), []);
  const row = await server.svc.db.selectFrom('scheduled_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  assert.deepEqual([row.failed, row.failure_message, row.delivered], [true, 'Account is deactivated', false]);
  assert.equal((await copies()).length, before, 'no notice to a deactivated user');
});

test('a guest schedules where they may post, and nowhere else', async () => {
  await createChannel('sched elsewhere', [server.owner.id]);
  const elsewhere = ok(await server.owner.get('/get_stream_id', { stream: 'sched elsewhere' })).stream_id;
  const id = await schedule(guest, inLobby('guest says hi'));
  refused(
    await guest.post('/scheduled_messages', { type: 'stream', to: elsewhere, topic: 't', content: 'x', scheduled_delivery_timestamp: later() }),
    "Not authorized to send to channel 'sched elsewhere'",
  );
  assert.deepEqual(
    (await scheduledOf(guest)).map((m) => m.scheduled_message_id),
    [id],
  );
  refused(await guest.delete(`/scheduled_messages/${await schedule(author, inLobby('not yours'))}`), 'Scheduled message does not exist', 404);
});

test('another organization sees none of it and reaches none of ours', async () => {
  const id = await schedule(author, inLobby('ours'));
  const other = await server.createOrganization('schedother');
  assert.deepEqual(await scheduledOf(other), []);
  refused(await other.delete(`/scheduled_messages/${id}`), 'Scheduled message does not exist', 404);
  refused(await other.patch(`/scheduled_messages/${id}`, { content: 'theirs' }), 'Scheduled message does not exist', 404);
  refused(
    await other.post('/scheduled_messages', { ...inLobby('x'), scheduled_delivery_timestamp: later() }),
    `Channel with ID '${lobby}' does not exist`,
    400,
    'STREAM_DOES_NOT_EXIST',
  );
  refused(
    await other.post('/scheduled_messages', { type: 'direct', to: [author.id], content: 'x', scheduled_delivery_timestamp: later() }),
    `Invalid user ID ${author.id}`,
  );
  assert.equal((await scheduledOf(author)).find((m) => m.scheduled_message_id === id).content, 'ours');
});

/** Polls (no fixed sleep) until the client has messages with this content; gives them. The cap only bounds a hang. */
async function arrival(c: Client, content: string, timeoutMs = 120_000): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = ok(await c.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, apply_markdown: false }));
    const found = (body.messages as any[]).filter((m) => m.content === content);
    if (found.length > 0 || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('the running scheduler sends on time, and after a restart what fell due while it was down', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'confab-sched-'));
  let running = await startTestServer({ dataDir, schedulerIntervalMs: 100 });
  try {
    const writer = await running.createUser({ email: 'writer@example.com' });
    const due = () => Math.floor(Date.now() / 1000) + 3;
    const onTime = due();
    ok(await writer.post('/scheduled_messages', { type: 'direct', to: [running.owner.id], content: 'on the dot', scheduled_delivery_timestamp: onTime }));
    // On a loaded machine the request itself may outlast the time: then it is due on arrival.
    const dueBy = Math.max(onTime, Math.ceil(Date.now() / 1000));
    const [sent] = await arrival(running.owner, 'on the dot');
    assert.ok(sent.timestamp >= onTime && sent.timestamp <= dueBy + 3, `sent at ${sent.timestamp}, due ${onTime}, scheduled by ${dueBy}`);

    ok(
      await writer.post('/scheduled_messages', { type: 'direct', to: [running.owner.id], content: 'across the restart', scheduled_delivery_timestamp: due() }),
    );
    running = await running.restart();
    const owner = await running.clientFor(running.owner.id);
    assert.equal((await arrival(owner, 'across the restart')).length, 1);
    assert.equal((await arrival(owner, 'on the dot')).length, 1);
  } finally {
    await running.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
