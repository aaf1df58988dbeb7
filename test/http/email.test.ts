// Email through SMTP (issue 17 points 4-5): a local SMTP server in this process
// receives what the server sends through EMAIL_URL. Invitations, password
// resets, email changes and missed-message notifications: recipient, subject
// and link of each, the links followed through HTTP, the queue's retries, and
// the settings that turn notifications off. Nothing here measures time: it
// waits (polls) until an email arrives, or runs the due jobs itself.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type Client } from '../support/server.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp.ts';
import { Browser } from '../support/browser.ts';
import { MISSED_MESSAGES_JOB } from '../../src/email/missed-messages.ts';
import { EMAIL_JOB } from '../../src/email/queue.ts';

let server: TestServer;
let smtp: TestSmtpServer;

before(async () => {
  smtp = await startSmtpServer();
  server = await startTestServer({ emailUrl: smtp.url, emailRetryMs: 200, jobIntervalMs: 200 });
});

after(async () => {
  await server.close();
  await smtp.close();
});

const to = (address: string) => (m: { to: string[] }) => m.to.includes(address);

/** Fires every pending missed-message batch now (as if its period had passed), then sends the emails. */
async function fireBatches(): Promise<void> {
  await server.svc.db.updateTable('jobs').set({ run_after: new Date() }).where('kind', '=', MISSED_MESSAGES_JOB).where('failed_at', 'is', null).execute();
  await server.flushEmails();
}

async function anonymousGet(path: string) {
  return server.app.inject({ method: 'GET', url: path, headers: { host: 'confab.test' } });
}

test('invitation: the inviter text and the link reach the invitee over SMTP; the link creates the account', async () => {
  const sent = await server.owner.post('/invites', {
    invitee_emails: 'smtp-invitee@example.com',
    stream_ids: [],
    welcome_message_custom_text: 'Welcome aboard, friend!',
  });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const mail = await smtp.waitFor(to('smtp-invitee@example.com'));
  assert.match(mail.subject, /invited you to join Test Organization$/);
  assert.match(mail.from, /noreply@localhost/);
  assert.match(mail.text, /Welcome aboard, friend!/);
  assert.match(mail.html, /<blockquote>Welcome aboard, friend!<\/blockquote>/);
  const link = /http:\/\/confab\.test\/join\/([a-z0-9]+)\//.exec(mail.text);
  assert.ok(link, mail.text);
  assert.ok(mail.html.includes(link[0]), 'the HTML part has the same link');

  const joined = await server.anonymous.post('/invites/accept', { key: link[1], full_name: 'Smtp Invitee', password: 'invitee-password-1' });
  assert.equal(joined.status, 200, JSON.stringify(joined.body));
  const key = await server.anonymous.post('/fetch_api_key', { username: 'smtp-invitee@example.com', password: 'invitee-password-1' });
  assert.equal(key.status, 200, JSON.stringify(key.body));
});

test('a failed request sends nothing: its email job is rolled back with it', async () => {
  const before = await server.svc.db.selectFrom('jobs').select('id').where('kind', '=', EMAIL_JOB).execute();
  const refused = await server.owner.post('/invites', { invitee_emails: 'fine@example.com, not-an-address', stream_ids: [] });
  assert.equal(refused.status, 400);
  const after = await server.svc.db.selectFrom('jobs').select('id').where('kind', '=', EMAIL_JOB).execute();
  assert.equal(after.length, before.length, 'no email queued');
  await server.flushEmails();
  assert.ok(!smtp.received.some(to('fine@example.com')));
});

test('password reset over SMTP: the emailed link sets the password once', async () => {
  await server.createUser({ email: 'smtp-forgetful@example.com', password: 'old-password-1' });
  const anon = new Browser(server);
  assert.equal((await anon.post('/accounts/password/reset', { email: 'smtp-forgetful@example.com' })).status, 200);
  const mail = await smtp.waitFor(to('smtp-forgetful@example.com'));
  assert.equal(mail.subject, 'Reset your password for Test Organization');
  const link = /http:\/\/confab\.test(\/accounts\/password\/reset\/[A-Za-z0-9]+)/.exec(mail.text);
  assert.ok(link, mail.text);
  assert.ok(mail.html.includes(link[0]));
  // The link is a page of the web client, which posts the new password to the same path.
  assert.notEqual((await anonymousGet(link[1])).statusCode, 404);
  const done = await anon.post(link[1], { new_password: 'new-password-1' });
  assert.equal(done.status, 200, JSON.stringify(done.body));
  assert.equal((await anon.post(link[1], { new_password: 'other-password-1' })).status, 400, 'single use');
  assert.equal((await server.anonymous.post('/fetch_api_key', { username: 'smtp-forgetful@example.com', password: 'new-password-1' })).status, 200);
});

test('email change: a link to the new address; following it changes the address, and the old one is told', async () => {
  const c = await server.createUser({ email: 'before-change@example.com', fullName: 'Chang Er' });
  const asked = await c.patch('/settings', { email: 'after-change@example.com' });
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  assert.equal((await c.get('/users/me')).body.delivery_email, 'before-change@example.com');
  const mail = await smtp.waitFor(to('after-change@example.com'));
  assert.equal(mail.subject, 'Verify your new email address for Test Organization');
  const link = /http:\/\/confab\.test(\/accounts\/confirm_new_email\/[A-Za-z0-9]+)/.exec(mail.text);
  assert.ok(link, mail.text);

  const page = await anonymousGet(link[1]);
  assert.equal(page.statusCode, 200, page.body);
  assert.match(page.headers['content-type'] as string, /text\/html/);
  assert.match(page.body, /after-change@example\.com/);
  const me = (await server.owner.get(`/users/${c.id}`)).body.user;
  assert.equal(me.delivery_email, 'after-change@example.com');
  const notice = await smtp.waitFor(to('before-change@example.com'));
  assert.equal(notice.subject, 'Email address changed for Test Organization');

  const again = await anonymousGet(link[1]);
  assert.equal(again.statusCode, 400);
  assert.match(again.body, /invalid or has already been used/);
  assert.equal((await anonymousGet('/accounts/confirm_new_email/nonsense')).statusCode, 400);
});

async function channelWith(name: string, members: Client[]): Promise<number> {
  const r = await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: members.map((m) => m.id) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return (await server.owner.get('/get_stream_id', { stream: name })).body.stream_id;
}

const send = async (from: Client, params: Record<string, unknown>): Promise<number> => {
  const r = await from.post('/messages', params);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.id;
};

test('missed messages: a short batching period; the email arrives by itself (DM)', async () => {
  const away = await server.createUser({ email: 'away-dm@example.com', fullName: 'Away Dee' });
  assert.equal((await away.patch('/settings', { email_notifications_batching_period_seconds: 1 })).status, 200);
  const sender = await server.createUser({ email: 'dm-sender@example.com', fullName: 'Dee Sender' });
  await send(sender, { type: 'direct', to: JSON.stringify([away.id]), content: 'Are you there? Lunch at noon.' });
  const mail = await smtp.waitFor(to('away-dm@example.com'));
  assert.equal(mail.subject, 'DMs with Dee Sender');
  assert.match(mail.text, /Dee Sender:\nAre you there\? Lunch at noon\./);
  const ids = [away.id, sender.id].sort((a, b) => a - b).join(',');
  assert.ok(mail.text.includes(`http://confab.test/#narrow/dm/${ids}-dm/near/`), mail.text);
});

test('missed messages are batched: one email per conversation, read messages left out', async () => {
  const away = await server.createUser({ email: 'away-batch@example.com', fullName: 'Away Batch' });
  const other = await server.createUser({ email: 'batch-other@example.com', fullName: 'Bat Other' });
  // A long period: the batch fires when the test says so, not when the machine gets to it.
  assert.equal((await away.patch('/settings', { email_notifications_batching_period_seconds: 3600 })).status, 200);
  await channelWith('batching', [away, other]);
  const mention = `@**Away Batch|${away.id}**`;
  await send(other, { type: 'stream', to: 'batching', topic: 'plans', content: `${mention} first point` });
  await send(other, { type: 'stream', to: 'batching', topic: 'plans', content: `${mention} second point` });
  const read = await send(other, { type: 'stream', to: 'batching', topic: 'other topic', content: `${mention} already seen` });
  await send(other, { type: 'stream', to: 'batching', topic: 'quiet', content: 'no mention here' });
  assert.equal((await away.post('/messages/flags', { messages: [read], op: 'add', flag: 'read' })).status, 200);
  const pending = await server.svc.db.selectFrom('missed_message_emails').select(['scheduled_at']).where('user_id', '=', away.id).execute();
  assert.equal(pending.length, 3);
  assert.equal(new Set(pending.map((p) => p.scheduled_at.getTime())).size, 1, 'one batch');

  await fireBatches();
  const mails = smtp.received.filter(to('away-batch@example.com'));
  assert.equal(mails.length, 1, JSON.stringify(mails.map((m) => m.subject)));
  assert.equal(mails[0].subject, '#batching > plans');
  assert.match(mails[0].text, /first point[\s\S]*second point/);
  assert.doesNotMatch(mails[0].text, /already seen|no mention/);
  assert.match(mails[0].text, /http:\/\/confab\.test\/#narrow\/channel\/\d+-batching\/topic\/plans\/near\/\d+/);
  assert.match(mails[0].html, /first point/);
  assert.equal((await server.svc.db.selectFrom('missed_message_emails').select('id').where('user_id', '=', away.id).execute()).length, 0);
});

test('mentions sent at once join one batch: every message in it, one job', async () => {
  const away = await server.createUser({ email: 'away-burst@example.com', fullName: 'Away Burst' });
  const senders = await Promise.all([0, 1, 2, 3].map((i) => server.createUser({ email: `burst-${i}@example.com`, fullName: `Burst ${i}` })));
  assert.equal((await away.patch('/settings', { email_notifications_batching_period_seconds: 3600 })).status, 200);
  await channelWith('burst', [away, ...senders]);
  const mention = `@**Away Burst|${away.id}**`;
  // Sends adding to one batch (and racing to start it) do not wait on each other's batch row.
  await Promise.all(
    senders.flatMap((s, i) => [0, 1].map((k) => send(s, { type: 'stream', to: 'burst', topic: 'at once', content: `${mention} point ${i}.${k}` }))),
  );
  const pending = await server.svc.db.selectFrom('missed_message_emails').select(['scheduled_at']).where('user_id', '=', away.id).execute();
  assert.equal(pending.length, 8);
  assert.equal(new Set(pending.map((p) => p.scheduled_at.getTime())).size, 1, 'one batch');
  const jobs = await server.svc.db.selectFrom('jobs').select('payload').where('kind', '=', MISSED_MESSAGES_JOB).execute();
  assert.equal(jobs.filter((j) => (j.payload as { user_id: number }).user_id === away.id).length, 1, 'one job');
});

test('missed messages follow the settings: offline emails off, wildcard mentions off, channel email notifications on, active users', async () => {
  const quiet = await server.createUser({ email: 'quiet@example.com', fullName: 'Qui Et' });
  const noWildcards = await server.createUser({ email: 'no-wildcards@example.com', fullName: 'No Wild' });
  const watcher = await server.createUser({ email: 'watcher@example.com', fullName: 'Wat Cher' });
  const present = await server.createUser({ email: 'present@example.com', fullName: 'Pre Sent' });
  const discreet = await server.createUser({ email: 'discreet@example.com', fullName: 'Dis Creet' });
  const sender = await server.createUser({ email: 'settings-sender@example.com', fullName: 'Set Sender' });
  assert.equal((await discreet.patch('/settings', { message_content_in_email_notifications: false })).status, 200);
  assert.equal((await quiet.patch('/settings', { enable_offline_email_notifications: false })).status, 200);
  assert.equal((await noWildcards.patch('/settings', { wildcard_mentions_notify: false })).status, 200);
  const channelId = await channelWith('settings-room', [quiet, noWildcards, watcher, present, sender]);
  assert.equal(
    (await watcher.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: channelId, property: 'email_notifications', value: true }] }))
      .status,
    200,
  );
  assert.equal((await present.post('/users/me/presence', { status: 'active' })).status, 200);

  await send(sender, { type: 'direct', to: JSON.stringify([quiet.id]), content: 'a DM nobody emails' });
  await send(sender, { type: 'direct', to: JSON.stringify([present.id]), content: 'a DM to someone reading' });
  await send(sender, { type: 'direct', to: JSON.stringify([discreet.id]), content: 'the secret plan' });
  await send(sender, { type: 'stream', to: 'settings-room', topic: 'all hands', content: '@**all** meeting now' });
  await send(sender, { type: 'stream', to: 'settings-room', topic: 'news', content: 'nobody is mentioned here' });
  await fireBatches();

  assert.ok(!smtp.received.some(to('quiet@example.com')), 'enable_offline_email_notifications off');
  assert.ok(!smtp.received.some(to('no-wildcards@example.com')), 'wildcard_mentions_notify off');
  assert.ok(!smtp.received.some(to('present@example.com')), 'active presence: not missed');
  const watched = smtp.received.filter(to('watcher@example.com'));
  const hidden = smtp.received.filter(to('discreet@example.com'));
  assert.equal(hidden.length, 1);
  assert.equal(hidden[0].subject, 'DMs with Set Sender');
  assert.doesNotMatch(hidden[0].text + hidden[0].html, /secret plan/, 'message_content_in_email_notifications off');
  assert.match(hidden[0].text, /A message from Set Sender/);
  // Channel email notifications: every message of the channel, each topic its own email.
  assert.deepEqual(watched.map((m) => m.subject).sort(), ['#settings-room > all hands', '#settings-room > news']);
});

test('missed messages: group mentions and followed topics, and the follow setting turns the latter off', async () => {
  const helper = await server.createUser({ email: 'helper@example.com', fullName: 'Hel Per' });
  const follower = await server.createUser({ email: 'follower@example.com', fullName: 'Fol Lower' });
  const sender = await server.createUser({ email: 'group-sender@example.com', fullName: 'Grp Sender' });
  const channelId = await channelWith('group-room', [helper, follower, sender]);
  const group = await server.owner.post('/user_groups/create', { name: 'helpers', description: 'they help', members: [helper.id] });
  assert.equal(group.status, 200, JSON.stringify(group.body));
  assert.equal((await follower.post('/user_topics', { stream_id: channelId, topic: 'roadmap', visibility_policy: 3 })).status, 200);

  await send(sender, { type: 'stream', to: 'group-room', topic: 'help wanted', content: '@*helpers* can someone look?' });
  await send(sender, { type: 'stream', to: 'group-room', topic: 'roadmap', content: 'the roadmap moved' });
  await fireBatches();
  const helped = smtp.received.filter(to('helper@example.com'));
  assert.deepEqual(
    helped.map((m) => m.subject),
    ['#group-room > help wanted'],
  );
  assert.match(helped[0].text, /a group you belong to was mentioned/);
  const followed = smtp.received.filter(to('follower@example.com'));
  assert.deepEqual(
    followed.map((m) => m.subject),
    ['#group-room > roadmap'],
  );
  assert.match(followed[0].text, /you follow this topic/);

  assert.equal((await follower.patch('/settings', { enable_followed_topic_email_notifications: false })).status, 200);
  await send(sender, { type: 'stream', to: 'group-room', topic: 'roadmap', content: 'and moved again' });
  await fireBatches();
  assert.equal(smtp.received.filter(to('follower@example.com')).length, 1, 'no second email');
});

test('a failing SMTP server: 4xx answers and refused logins are retried until the email goes through; a 5xx to the recipient gives up', async () => {
  await server.createUser({ email: 'retry-me@example.com', password: 'retry-password-1' });
  smtp.refuseNext(2, 451);
  const refusedBefore = smtp.refusals;
  assert.equal((await new Browser(server).post('/accounts/password/reset', { email: 'retry-me@example.com' })).status, 200);
  const mail = await smtp.waitFor(to('retry-me@example.com'));
  assert.equal(mail.subject, 'Reset your password for Test Organization');
  assert.equal(smtp.refusals - refusedBefore, 2, 'two refusals, then delivered');

  // A refused login (the server's setup, not the message's fault) is retried too.
  await server.createUser({ email: 'login-retry@example.com', password: 'login-password-1' });
  smtp.refuseLoginNext(1);
  const beforeLogin = smtp.refusals;
  assert.equal((await new Browser(server).post('/accounts/password/reset', { email: 'login-retry@example.com' })).status, 200);
  await smtp.waitFor(to('login-retry@example.com'));
  assert.equal(smtp.refusals - beforeLogin, 1);

  await server.createUser({ email: 'bounce@example.com', password: 'bounce-password-1' });
  smtp.refuseNext(1, 550);
  assert.equal((await new Browser(server).post('/accounts/password/reset', { email: 'bounce@example.com' })).status, 200);
  await server.flushEmails();
  const failed = await server.svc.db
    .selectFrom('jobs')
    .select(['attempts', 'failed_at', 'last_error'])
    .where('kind', '=', EMAIL_JOB)
    .where('failed_at', 'is not', null)
    .execute();
  assert.equal(failed.length, 1, 'a permanent refusal is not retried');
  assert.equal(failed[0].attempts, 1);
  assert.match(failed[0].last_error!, /550/);
  assert.ok(!smtp.received.some(to('bounce@example.com')));
});

test('the queue survives a restart: an email queued before it is sent after it', async () => {
  const c = await server.createUser({ email: 'restart-mail@example.com' });
  assert.equal((await c.patch('/settings', { email: 'restart-new@example.com' })).status, 200);
  if (process.env.CONFAB_TEST_DB === 'postgres') server = await server.restart(); // an in-memory PGlite database does not outlive its server
  const mail = await smtp.waitFor(to('restart-new@example.com'));
  assert.match(mail.subject, /Verify your new email address/);
});
