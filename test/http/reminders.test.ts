// Reminders: POST/GET /reminders, DELETE /reminders/{id}, register's
// `reminders` and its events, and Notification Bot's direct message when one
// fires (the message quoted as it reads then, or as it read when set).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { lastMessageOf, later, ok, people, refused } from './scheduled-messages.fixture.ts';
import { deliverDue } from '../../src/scheduled_messages/scheduler.ts';

let server: TestServer;
let author: Client;
let friend: Client;
let guest: Client;
let botId: number;
let lobby: number;
before(async () => {
  server = await startTestServer();
  ({ author, friend, guest, botId } = await people(server));
  lobby = ok(await server.owner.post('/channels/create', { name: 'remind lobby', subscribers: [author.id, friend.id] })).id;
});
after(() => server.close());

async function send(c: Client, params: Record<string, unknown>): Promise<number> {
  return ok(await c.post('/messages', params)).id;
}
const inLobby = (content: string) => ({ type: 'stream', to: String(lobby), topic: 'plans', content });

async function remind(c: Client, messageId: number, extra: Record<string, unknown> = {}) {
  const at = later();
  const id = ok(await c.post('/reminders', { message_id: messageId, scheduled_delivery_timestamp: at, ...extra })).reminder_id as number;
  return { id, at };
}

async function remindersOf(c: Client) {
  return ok(await c.get('/reminders')).reminders as any[];
}

const mention = (c: Client, name: string) => `@_**${name}|${c.id}**`;
const lobbyUrl = (id: number) => `http://confab.test/#narrow/channel/${lobby}-remind-lobby/topic/plans/near/${id}`;
const lobbyLink = (id: number) => `[#remind lobby > plans](#narrow/channel/${lobby}-remind-lobby/topic/plans/with/${id})`;

test('a reminder of a channel message: the reference object and wording, in GET and register, kept by events', async () => {
  const viewer = await registerViewer(server, friend);
  const messageId = await send(author, inLobby('Test message'));
  const { id, at } = await remind(friend, messageId);
  const content = `You requested a reminder for the following message.\n\n${mention(author, 'Au Thor')} [said](${lobbyUrl(messageId)}) in ${lobbyLink(messageId)}:\n\`\`\`quote\nTest message\n\`\`\``;
  const [listed] = await remindersOf(friend);
  assert.equal(typeof listed.rendered_content, 'string');
  assert.match(listed.rendered_content, /<blockquote>/);
  assert.deepEqual(
    { ...listed, rendered_content: undefined },
    {
      reminder_id: id,
      type: 'private',
      to: [friend.id],
      content,
      rendered_content: undefined,
      scheduled_delivery_timestamp: at,
      failed: false,
      reminder_target_message_id: messageId,
    },
  );
  // Only its owner sees it, and not among scheduled messages.
  assert.deepEqual(await remindersOf(author), []);
  assert.deepEqual(ok(await friend.get('/scheduled_messages')).scheduled_messages, []);
  refused(await friend.delete(`/scheduled_messages/${id}`), 'Scheduled message does not exist', 404);
  await expectStateInSync(server, viewer, 'after setting a reminder');
  assert.deepEqual(ok(await friend.post('/register', { fetch_event_types: ['reminders'] })).reminders, [listed]);
  ok(await friend.delete(`/reminders/${id}`));
  await expectStateInSync(server, viewer, 'after deleting it');
});

test('direct messages, notes, polls: the reference wording', async () => {
  const dm = await send(author, { type: 'direct', to: JSON.stringify([friend.id]), content: 'psst' });
  const self = await send(author, { type: 'direct', to: JSON.stringify([author.id]), content: 'buy milk' });
  const poll = await send(author, inLobby('/poll Lunch?\npizza\nsoup'));
  const dmUrl = `http://confab.test/#narrow/dm/${[author.id, friend.id].sort((a, b) => a - b).join(',')}/near/${dm}`;
  const quote = (text: string) => `\`\`\`quote\n${text}\n\`\`\``;
  const cases: [number, Record<string, unknown>, string][] = [
    [
      dm,
      {},
      `You requested a reminder for the following direct message.\n\n${mention(author, 'Au Thor')} [said](${dmUrl}) to ${mention(friend, 'Fri End')}:\n${quote('psst')}`,
    ],
    [
      dm,
      { note: '\n\nCall back  \n' },
      `You requested a reminder for the following direct message. Note:\n > Call back\n\n${mention(author, 'Au Thor')} [said](${dmUrl}) to ${mention(friend, 'Fri End')}:\n${quote('psst')}`,
    ],
    [
      self,
      {},
      `You requested a reminder for the following direct message.\n\nYou [sent](http://confab.test/#narrow/dm/${author.id}/near/${self}) a note to yourself:\n${quote('buy milk')}`,
    ],
    [poll, {}, `You requested a reminder for the following message.\n\n${mention(author, 'Au Thor')} [sent](${lobbyUrl(poll)}) a poll in ${lobbyLink(poll)}.`],
  ];
  for (const [messageId, extra, expected] of cases) {
    const { id } = await remind(author, messageId, extra);
    assert.equal((await remindersOf(author)).find((r) => r.reminder_id === id).content, expected);
    ok(await author.delete(`/reminders/${id}`));
  }
  // A quoted fence cannot close the quote.
  const fenced = await send(author, inLobby('```\ncode\n```'));
  const { id } = await remind(author, fenced);
  assert.match((await remindersOf(author)).find((r) => r.reminder_id === id).content, /\n````quote\n```\ncode\n```\n````$/);
  ok(await author.delete(`/reminders/${id}`));
});

test('refused: past times, unknown or unreadable messages, long notes; nothing is kept', async () => {
  const messageId = await send(author, inLobby('hello'));
  refused(await author.post('/reminders', { message_id: messageId, scheduled_delivery_timestamp: 1000 }), 'Scheduled delivery time must be in the future.');
  refused(await author.post('/reminders', { message_id: 99999, scheduled_delivery_timestamp: later() }), 'Invalid message(s)');
  refused(
    await author.post('/reminders', { message_id: messageId, scheduled_delivery_timestamp: later(), note: 'n'.repeat(1001) }),
    'Maximum reminder note length: 1000 characters',
  );
  // A private channel's message, to someone outside it; a direct message between others.
  const hidden = ok(await server.owner.post('/channels/create', { name: 'remind hidden', subscribers: [server.owner.id], invite_only: true })).id;
  const secretId = await send(server.owner, { type: 'stream', to: String(hidden), topic: 't', content: 'secret' });
  refused(await author.post('/reminders', { message_id: secretId, scheduled_delivery_timestamp: later() }), 'Invalid message(s)');
  const theirs = await send(server.owner, { type: 'direct', to: JSON.stringify([friend.id]), content: 'between us' });
  refused(await author.post('/reminders', { message_id: theirs, scheduled_delivery_timestamp: later() }), 'Invalid message(s)');
  // A guest reads only the channels they are in.
  refused(await guest.post('/reminders', { message_id: messageId, scheduled_delivery_timestamp: later() }), 'Invalid message(s)');
  assert.deepEqual(await remindersOf(author), []);
  assert.deepEqual(await remindersOf(guest), []);
  assert.equal((await server.anonymous.get('/reminders')).status, 401);
});

test('deleting: the owner only, once', async () => {
  const { id } = await remind(author, await send(author, inLobby('delete me')));
  refused(await friend.delete(`/reminders/${id}`), 'Reminder does not exist', 404);
  const other = await server.createOrganization('remindother');
  refused(await other.delete(`/reminders/${id}`), 'Reminder does not exist', 404);
  assert.deepEqual(await remindersOf(other), []);
  refused(await other.post('/reminders', { message_id: id, scheduled_delivery_timestamp: later() }), 'Invalid message(s)');
  ok(await author.delete(`/reminders/${id}`));
  refused(await author.delete(`/reminders/${id}`), 'Reminder does not exist', 404);
});

test('a reminder fires once, from Notification Bot, quoting the message as it reads then', async () => {
  const viewer = await registerViewer(server, friend);
  const messageId = await send(author, inLobby('first words'));
  const { id, at } = await remind(friend, messageId, { note: 'reply' });
  ok(await author.patch(`/messages/${messageId}`, { content: 'edited words' }));
  assert.equal(await deliverDue(server.svc, new Date((at + 30) * 1000)), 1);
  assert.equal(await deliverDue(server.svc, new Date((at + 30) * 1000)), 0);
  const fired = await lastMessageOf(friend);
  assert.equal(fired.sender_id, botId);
  assert.deepEqual(fired.display_recipient.map((u: any) => u.id).sort(), [botId, friend.id].sort());
  assert.equal(
    fired.content,
    `You requested a reminder for the following message. Note:\n > reply\n\n${mention(author, 'Au Thor')} [said](${lobbyUrl(messageId)}) in ${lobbyLink(messageId)}:\n\`\`\`quote\nedited words\n\`\`\``,
  );
  assert.equal(
    (await remindersOf(friend)).some((r) => r.reminder_id === id),
    false,
  );
  await expectStateInSync(server, viewer, 'after the reminder fired');
});

test('a reminder of a message since deleted is sent as it was set; long after its time, still sent', async () => {
  const messageId = await send(author, inLobby('soon gone'));
  const { id, at } = await remind(author, messageId);
  const kept = (await remindersOf(author)).find((r) => r.reminder_id === id).content;
  ok(await server.owner.delete(`/messages/${messageId}`));
  // Hours late: reminders are not dropped as late scheduled messages are.
  assert.equal(await deliverDue(server.svc, new Date((at + 3 * 3600) * 1000)), 1);
  const fired = await lastMessageOf(author);
  assert.deepEqual([fired.sender_id, fired.content], [botId, kept]);
});

test('a deactivated user: the reminder fails, silently', async () => {
  const leaver = await server.createUser({ email: 'leaver@example.com' });
  const messageId = await send(leaver, { type: 'direct', to: JSON.stringify([leaver.id]), content: 'mine' });
  const { id, at } = await remind(leaver, messageId);
  const copies = () => server.svc.db.selectFrom('user_messages').select('message_id').where('user_id', '=', leaver.id).execute();
  const before = (await copies()).length;
  ok(await server.owner.delete(`/users/${leaver.id}`));
  assert.equal((await leaver.get('/reminders')).status, 401);
  assert.equal(await deliverDue(server.svc, new Date((at + 30) * 1000)), 1);
  const row = await server.svc.db.selectFrom('scheduled_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  assert.deepEqual([row.failed, row.failure_message, row.delivered], [true, 'Account is deactivated', false]);
  assert.equal((await copies()).length, before);
});
