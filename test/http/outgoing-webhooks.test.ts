// Outgoing webhooks (issue 17.2): a local receiver plays the bot's service,
// answering, failing, or not answering in time; the tests run the job worker's
// passes themselves (moving its clock past the backoff instead of waiting).
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { runDueJobs } from '../../src/jobs/worker.ts';
import { JOB_KINDS } from '../../src/jobs/kinds.ts';
import { OUTGOING_WEBHOOK_JOB } from '../../src/webhooks/outgoing/trigger.ts';

interface Received {
  contentType: string;
  body: string;
}

type Answer = (res: http.ServerResponse) => void;

let server: TestServer;
let member: Client;
let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];
const answers: Answer[] = [];
const json =
  (status: number, body: unknown): Answer =>
  (res) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
let genericBot: { id: number; email: string };
let slackBot: { id: number };
const held: http.ServerResponse[] = [];

before(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ contentType: req.headers['content-type'] ?? '', body });
      (answers.shift() ?? json(200, { response_not_required: true }))(res);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  server = await startTestServer({ allowPrivateUrls: true, outgoingWebhookTimeoutMs: 1500, jobIntervalMs: 3_600_000 });
  member = await server.createUser({ email: 'member@example.com', fullName: 'Mem Ber' });
  await member.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }] });
  const generic = await member.post('/bots', { full_name: 'Echo Bot', short_name: 'echo', bot_type: 3, payload_url: JSON.stringify(receiverUrl) });
  assert.equal(generic.status, 200, JSON.stringify(generic.body));
  genericBot = { id: generic.body.user_id, email: 'echo-bot@confab.test' };
  const slack = await member.post('/bots', {
    full_name: 'Slack Bot',
    short_name: 'slacky',
    bot_type: 3,
    payload_url: JSON.stringify(receiverUrl),
    interface_type: 2,
  });
  slackBot = { id: slack.body.user_id };
});
after(async () => {
  for (const res of held) res.destroy();
  await server.close();
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});
beforeEach(() => {
  received.length = 0;
  answers.length = 0;
});

async function say(content: string, topic = 'bots'): Promise<number> {
  const res = await member.post('/messages', { type: 'stream', to: 'general', topic, content });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

/** Runs the worker `secondsLater` from now (past any backoff). */
// Only the webhook deliveries: the emails its messages cause (missed-message batches) are not counted.
const pass = (secondsLater = 0) =>
  runDueJobs(server.svc, { [OUTGOING_WEBHOOK_JOB]: JOB_KINDS[OUTGOING_WEBHOOK_JOB] }, new Date(Date.now() + secondsLater * 1000));

async function messagesFrom(botId: number, after: number) {
  return server.svc.db
    .selectFrom('messages')
    .select(['id', 'content', 'topic', 'channel_id', 'recipient_id'])
    .where('sender_id', '=', botId)
    .where('id', '>', after)
    .orderBy('id')
    .execute();
}

const pendingJobs = () => server.svc.db.selectFrom('jobs').selectAll().where('kind', '=', OUTGOING_WEBHOOK_JOB).where('failed_at', 'is', null).execute();

test('a mention POSTs the generic payload, and the answer is posted where the bot was mentioned', async () => {
  answers.push(json(200, { content: 'pong' }));
  const id = await say('@**Echo Bot** ping');
  assert.equal((await pendingJobs()).length, 1);
  assert.equal(await pass(), 1);
  assert.equal(received.length, 1);
  const payload = JSON.parse(received[0].body);
  assert.equal(received[0].contentType, 'application/json');
  assert.equal(payload.trigger, 'mention');
  assert.equal(payload.data, '@**Echo Bot** ping');
  assert.equal(payload.bot_email, genericBot.email);
  assert.equal(payload.bot_full_name, 'Echo Bot');
  assert.match(payload.token, /^[A-Za-z0-9]{32}$/);
  assert.equal(payload.message.id, id);
  assert.equal(payload.message.sender_email, 'member@example.com');
  assert.equal(payload.message.display_recipient, 'general');
  assert.equal(payload.message.subject, 'bots');
  assert.match(payload.message.rendered_content, /user-mention/);
  const replies = await messagesFrom(genericBot.id, id);
  assert.deepEqual(
    replies.map((m) => [m.content, m.topic]),
    [['pong', 'bots']],
  );
  assert.equal((await pendingJobs()).length, 0);
});

test('a direct message triggers direct_message; the answer goes to the conversation', async () => {
  answers.push(json(200, { response_string: 'hi there' }));
  const res = await member.post('/messages', { type: 'private', to: JSON.stringify([genericBot.id]), content: 'hello bot' });
  await pass();
  assert.equal(JSON.parse(received[0].body).trigger, 'direct_message');
  const [reply] = await messagesFrom(genericBot.id, res.body.id);
  assert.equal(reply.content, 'hi there');
  assert.equal(reply.channel_id, null);
  const original = await server.svc.db.selectFrom('messages').select('recipient_id').where('id', '=', res.body.id).executeTakeFirstOrThrow();
  assert.equal(reply.recipient_id, original.recipient_id);
});

test('nothing is sent for silent mentions, unmentioned bots, or messages bots send', async () => {
  await say('@_**Echo Bot** quietly');
  await say('no bot here');
  const bot = await server.clientFor(slackBot.id);
  assert.equal((await bot.post('/messages', { type: 'stream', to: 'general', topic: 'bots', content: '@**Echo Bot** from a bot' })).status, 200);
  assert.equal((await pendingJobs()).length, 0);
});

test('the Slack format is form-encoded and answered with `text`', async () => {
  answers.push(json(200, { text: 'slack says hi' }));
  const id = await say('@**Slack Bot** hello');
  await pass();
  const form = new URLSearchParams(received[0].body);
  assert.equal(received[0].contentType, 'application/x-www-form-urlencoded');
  assert.equal(form.get('text'), '@**Slack Bot** hello');
  assert.equal(form.get('trigger_word'), 'mention');
  assert.equal(form.get('channel_name'), 'general');
  assert.equal(form.get('user_name'), 'Mem Ber');
  assert.equal(form.get('user_id'), `U${member.id}`);
  assert.equal(form.get('service_id'), String(slackBot.id));
  assert.deepEqual(
    (await messagesFrom(slackBot.id, id)).map((m) => m.content),
    ['slack says hi'],
  );
});

test('a failing service is retried with backoff; after the last attempt the conversation and the owner are told', async () => {
  for (let i = 0; i < 4; i++) answers.push(json(500, { error: 'down' }));
  const id = await say('@**Echo Bot** are you there', 'outage');
  await pass();
  assert.equal(received.length, 1);
  const [job] = await pendingJobs();
  assert.equal(job.attempts, 1);
  assert.equal(job.last_error, 'Third party responded with 500');
  assert.ok(job.run_after.getTime() > Date.now() + 5000, 'waits before the next attempt');
  assert.equal(await pass(), 0, 'not yet due');
  for (const later of [15, 45, 120]) await pass(later);
  assert.equal(received.length, 4);
  const failed = await server.svc.db.selectFrom('jobs').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
  assert.notEqual(failed.failed_at, null);
  const told = await messagesFrom(genericBot.id, id);
  assert.equal(told.length, 2);
  assert.deepEqual([told[0].content, told[0].topic], ['Failure! Bot is unavailable', 'outage']);
  assert.equal(told[1].channel_id, null);
  assert.match(
    told[1].content,
    /^\[A message\]\(http:\/\/confab\.test\/#narrow\/channel\/\d+-general\/topic\/outage\/near\/\d+\) to your bot @_\*\*Echo Bot\*\* triggered an outgoing webhook\.\nThird party responded with 500$/,
  );
  const ownerCopy = await server.svc.db.selectFrom('user_messages').select('user_id').where('message_id', '=', told[1].id).execute();
  assert.ok(ownerCopy.some((r) => r.user_id === member.id));
});

test('a slow service times out and is tried again', async () => {
  answers.push((res) => held.push(res)); // never answers
  answers.push(json(200, { content: 'sorry, was busy' }));
  const id = await say('@**Echo Bot** slow?', 'slow');
  await pass();
  const [job] = await pendingJobs();
  assert.equal(job.last_error, 'Request timed out after 1.5 seconds.');
  await pass(15);
  assert.deepEqual(
    (await messagesFrom(genericBot.id, id)).map((m) => m.content),
    ['sorry, was busy'],
  );
});

test('a refusal (4xx) or an unreadable answer is told at once, without retrying', async () => {
  answers.push((res) => res.writeHead(404).end('no such hook'));
  const id = await say('@**Echo Bot** 404', 'refused');
  await pass();
  assert.equal((await pendingJobs()).length, 0);
  const [failure, owner] = await messagesFrom(genericBot.id, id);
  assert.equal(failure.content, 'Failure! Third party responded with 404');
  assert.match(owner.content, /The webhook got a response with status code \*404\*\.\nThe response contains the following payload:\n```\nno such hook\n```$/);

  answers.push((res) => res.writeHead(200).end('not json'));
  const id2 = await say('@**Echo Bot** garbage', 'refused');
  await pass();
  assert.equal((await messagesFrom(genericBot.id, id2))[0].content, 'Failure! Invalid JSON in response');
});

test('without ALLOW_PRIVATE_URLS a service on a private address is never reached', async () => {
  server.svc.config.allowPrivateUrls = false;
  try {
    const id = await say('@**Echo Bot** private?', 'private');
    await pass();
    assert.equal(received.length, 0);
    const [failure, owner] = await messagesFrom(genericBot.id, id);
    assert.equal(failure.content, 'Failure! The URL configured for the webhook is for a private or disallowed network.');
    assert.match(owner.content, /private or disallowed network\.$/);
  } finally {
    server.svc.config.allowPrivateUrls = true;
  }
});

test('a delivery held by a worker that died is taken up again when its lease ends', async () => {
  answers.push(json(200, { content: 'recovered' }));
  const id = await say('@**Echo Bot** after a crash', 'crash');
  // As if a worker had claimed it and died mid-delivery.
  const [job] = await pendingJobs();
  await server.svc.db
    .updateTable('jobs')
    .set({ attempts: 1, locked_until: new Date(Date.now() + 60_000) })
    .where('id', '=', job.id)
    .execute();
  assert.equal(await pass(), 0, 'held by the lease');
  assert.equal(await pass(10 * 60), 1);
  assert.deepEqual(
    (await messagesFrom(genericBot.id, id)).map((m) => m.content),
    ['recovered'],
  );
});

test('jobs left in the table are delivered by the worker a restarted server starts', async () => {
  answers.push(json(200, { content: 'after restart' }));
  const id = await say('@**Echo Bot** restart', 'restart');
  assert.equal((await pendingJobs()).length, 1);
  if (process.env.CONFAB_TEST_DB !== 'postgres') return; // an in-memory PGlite database does not outlive its server
  server = await server.restart();
  // The restarted worker delivers when it gets to it: the cap (two minutes) only bounds a hang.
  for (let i = 0; i < 2400 && (await messagesFrom(genericBot.id, id)).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(
    (await messagesFrom(genericBot.id, id)).map((m) => m.content),
    ['after restart'],
  );
});
