// The other calls existing clients make (issue 11, point 8): message reports,
// topic deletion with partial completion, API key regeneration, code
// playgrounds, and the legacy push-token endpoints; who may and who may not.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, Client, type TestServer, ok } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { deleteTopic } from '../../src/messages/topics/delete-topic.ts';

let server: TestServer;
let admin: Client;
let alice: Client;
let bob: Client;
let guest: Client;
let moderation: number;

function expectError(res: { status: number; body: any }, msg: string, code = 'BAD_REQUEST') {
  assert.deepEqual({ msg: res.body.msg, code: res.body.code }, { msg, code });
}

before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com', fullName: 'Ada Admin' });
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com', fullName: 'Gus Guest' });
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }], principals: [admin.id, alice.id, bob.id] }));
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'mods' }], principals: [admin.id], invite_only: true }));
  moderation = ok(await admin.get('/get_stream_id', { stream: 'mods' })).stream_id;
});
after(() => server.close());

const channelMessage = async (topic: string, content = 'hello', sender = alice) =>
  ok(await sender.post('/messages', { type: 'stream', to: 'Denmark', topic, content })).id as number;

async function lastModerationMessage() {
  const res = ok(
    await admin.get('/messages', {
      anchor: 'newest',
      num_before: 1,
      num_after: 0,
      narrow: [{ operator: 'channel', operand: moderation }],
      apply_markdown: false,
    }),
  );
  return res.messages[0];
}

// --- reports ---

test('reporting needs a moderation request channel', async () => {
  const id = await channelMessage('report me');
  expectError(await bob.post(`/messages/${id}/report`, { report_type: 'spam' }), 'Message reporting is not enabled in this organization.');
  ok(await server.owner.patch('/realm', { moderation_request_channel_id: moderation }));
});

test('a report of a channel message: Notification Bot posts the reference text in the moderation channel', async () => {
  const id = await channelMessage('spammy', 'buy ```now```');
  ok(await bob.post(`/messages/${id}/report`, { report_type: 'spam', description: 'Ads again' }));
  const notice = await lastModerationMessage();
  assert.equal(notice.sender_email.startsWith('notification-bot@'), true);
  assert.equal(notice.subject, 'Alice Able moderation');
  const sent = ok(await admin.get(`/messages/${id}`)).message.timestamp;
  const when = new Date(sent * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
  assert.equal(
    notice.content,
    `@_**Bob Baker|${bob.id}** reported a message sent by @_**Alice Able|${alice.id}** at <time:${when}>.\n` +
      '```quote\n**Spam**. Ads again\n```\n\n' +
      `\`\`\` spoiler Original message at #**Denmark>spammy@${id}**\nbuy \`\`\`now\`\`\`\n\`\`\``,
  );
});

test('a report of one’s own direct message names its recipient; "other" needs an explanation', async () => {
  const id = ok(await bob.post('/messages', { type: 'private', to: [alice.id], content: 'sorry' })).id;
  expectError(await bob.post(`/messages/${id}/report`, { report_type: 'other' }), 'An explanation is required.');
  ok(await bob.post(`/messages/${id}/report`, { report_type: 'other', description: 'I regret it' }));
  const notice = await lastModerationMessage();
  assert.match(
    notice.content,
    new RegExp(
      `^@_\\*\\*Bob Baker\\|${bob.id}\\*\\* reported a message sent by @_\\*\\*Bob Baker\\|${bob.id}\\*\\* to @_\\*\\*Alice Able\\|${alice.id}\\*\\* at <time:`,
    ),
  );
  assert.match(notice.content, /\*\*Other reason\*\*\. I regret it/);
  assert.match(notice.content, new RegExp(`\\[Original message\\]\\(http://confab.test/#narrow/dm/[0-9,]+-dm/near/${id}\\)`));
});

test('who may report: only messages one can read; bad input changes nothing', async () => {
  const dm = ok(await alice.post('/messages', { type: 'private', to: [admin.id], content: 'private words' })).id;
  const before = (await lastModerationMessage()).id;
  expectError(await bob.post(`/messages/${dm}/report`, { report_type: 'spam' }), 'Invalid message(s)');
  expectError(await guest.post(`/messages/${await channelMessage('guests cannot see')}/report`, { report_type: 'spam' }), 'Invalid message(s)');
  const other = await server.createOrganization('reports');
  expectError(await other.post(`/messages/${dm}/report`, { report_type: 'spam' }), 'Message reporting is not enabled in this organization.');
  expectError(await bob.post(`/messages/${await channelMessage('x')}/report`, { report_type: 'rude' }), 'Invalid report_type');
  expectError(
    await bob.post(`/messages/${await channelMessage('y')}/report`, { report_type: 'norms', description: 'x'.repeat(1001) }),
    'description is too long (limit: 1000 characters)',
  );
  assert.equal((await lastModerationMessage()).id, before);
});

// --- delete_topic ---

test('delete_topic: administrators only; deletes every message of the topic', async () => {
  const ids: number[] = [];
  for (let i = 0; i < 3; i++) ids.push(await channelMessage('Doomed'));
  const keep = await channelMessage('kept');
  expectError(
    await alice.post(`/streams/${ids.length && (await admin.get('/get_stream_id', { stream: 'Denmark' })).body.stream_id}/delete_topic`, {
      topic_name: 'doomed',
    }),
    'Must be an organization administrator',
    'UNAUTHORIZED_PRINCIPAL',
  );
  const denmark = ok(await admin.get('/get_stream_id', { stream: 'Denmark' })).stream_id;
  expectError(
    await guest.post(`/streams/${denmark}/delete_topic`, { topic_name: 'doomed' }),
    'Must be an organization administrator',
    'UNAUTHORIZED_PRINCIPAL',
  );
  const viewer = await registerViewer(server, bob);
  const queue = ok(await bob.post('/register', { event_types: ['delete_message'] }));
  // Case-insensitive, as topics are.
  assert.deepEqual(ok(await admin.post(`/streams/${denmark}/delete_topic`, { topic_name: 'doomed' })).complete, true);
  for (const id of ids) expectError(await admin.get(`/messages/${id}`), 'Invalid message(s)');
  ok(await admin.get(`/messages/${keep}`));
  const events = ok(await bob.get('/events', { queue_id: queue.queue_id, last_event_id: -1, dont_block: true })).events;
  assert.deepEqual(
    events.map((e: any) => [e.type, e.message_id, e.topic]),
    ids.map((id) => ['delete_message', id, 'Doomed']),
  );
  await expectStateInSync(server, viewer, 'delete_topic');
  // Another organization's administrator cannot reach the channel.
  const other = await server.createOrganization('topics');
  expectError(await other.post(`/streams/${denmark}/delete_topic`, { topic_name: 'kept' }), 'Invalid channel ID');
  ok(await admin.get(`/messages/${keep}`));
});

test('delete_topic: past its time budget it answers complete: false, and repeating finishes', async () => {
  for (let i = 0; i < 3; i++) await channelMessage('big');
  const denmark = ok(await admin.get('/get_stream_id', { stream: 'Denmark' })).stream_id;
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const user = await server.svc.db.selectFrom('users').selectAll().where('id', '=', admin.id).executeTakeFirstOrThrow();
  const inTopic = async () =>
    ok(
      await admin.get('/messages', {
        anchor: 'newest',
        num_before: 10,
        num_after: 0,
        narrow: [
          { operator: 'channel', operand: denmark },
          { operator: 'topic', operand: 'big' },
        ],
      }),
    ).messages.map((m: any) => m.id);
  const [oldest] = await inTopic();
  // Batches of two with no time left: the newest two go, and the answer says to ask again.
  assert.deepEqual(await deleteTopic(server.svc, realm, user, denmark, 'big', { budgetMs: 0, batchSize: 2 }), { complete: false });
  assert.deepEqual(await inTopic(), [oldest]);
  assert.deepEqual(ok(await admin.post(`/streams/${denmark}/delete_topic`, { topic_name: 'big' })).complete, true);
});

test('delete_topic in a private channel with protected history deletes only what the administrator received', async () => {
  ok(await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'Vault' }], invite_only: true, history_public_to_subscribers: false }));
  const vault = ok(await alice.get('/get_stream_id', { stream: 'Vault' })).stream_id;
  const early = ok(await alice.post('/messages', { type: 'stream', to: 'Vault', topic: 't', content: 'before the admin' })).id;
  expectError(await admin.post(`/streams/${vault}/delete_topic`, { topic_name: 't' }), 'Invalid channel ID');
  ok(await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'Vault' }], principals: [admin.id] }));
  const late = ok(await alice.post('/messages', { type: 'stream', to: 'Vault', topic: 't', content: 'after' })).id;
  assert.equal(ok(await admin.post(`/streams/${vault}/delete_topic`, { topic_name: 't' })).complete, true);
  ok(await alice.get(`/messages/${early}`));
  expectError(await alice.get(`/messages/${late}`), 'Invalid message(s)');
});

// --- API key ---

test('regenerating the API key: the old key stops working at once', async () => {
  const carol = await server.createUser({ email: 'carol@example.com' });
  ok(await carol.get('/users/me')); // the old key is now in the credential cache
  const { api_key } = ok(await carol.post('/users/me/api_key/regenerate'));
  assert.match(api_key, /^[A-Za-z0-9]{32}$/);
  assert.notEqual(api_key, carol.apiKey);
  expectError(await carol.get('/users/me'), 'Invalid API key', 'UNAUTHORIZED');
  const fresh = new Client(server, carol.id, carol.email, api_key);
  assert.equal(ok(await fresh.get('/users/me')).user_id, carol.id);
  // A bot may not (Welcome Bot, a system bot with a key of its own); a deactivated user cannot authenticate.
  const welcome = await server.svc.db
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', 1)
    .where('is_bot', '=', true)
    .where('full_name', '=', 'Welcome Bot')
    .executeTakeFirstOrThrow();
  const bot = await server.clientFor(welcome.id);
  expectError(await bot.post('/users/me/api_key/regenerate'), 'This endpoint does not accept bot requests.');
  ok(await server.owner.delete(`/users/${carol.id}`));
  assert.equal((await fresh.post('/users/me/api_key/regenerate')).status, 401);
});

// --- playgrounds ---

test('playgrounds: administrators add and remove them; register and events stay in sync', async () => {
  const viewer = await registerViewer(server, bob);
  assert.deepEqual(viewer.state.realm_playgrounds, []);
  const params = { name: ' Python playground ', pygments_language: 'Python', url_template: 'https://python.example/?code={code}' };
  expectError(await alice.post('/realm/playgrounds', params), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
  expectError(await guest.post('/realm/playgrounds', params), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
  const { id } = ok(await admin.post('/realm/playgrounds', params));
  await expectStateInSync(server, viewer, 'playground added');
  assert.deepEqual(viewer.state.realm_playgrounds, [
    { id, name: 'Python playground', pygments_language: 'Python', url_template: 'https://python.example/?code={code}' },
  ]);
  const dup = await admin.post('/realm/playgrounds', params);
  assert.deepEqual(dup.body.errors, { __all__: ['Realm playground with this Realm, Pygments language and Name already exists.'] });
  expectError(await admin.post('/realm/playgrounds', { ...params, pygments_language: 'Py$thon' }), 'Invalid characters in pygments language');
  expectError(await admin.post('/realm/playgrounds', { ...params, pygments_language: 'x'.repeat(41) }), 'pygments_language is too long (limit: 40 characters)');
  expectError(await admin.post('/realm/playgrounds', { ...params, url_template: 'https://x.example/{code' }), 'Invalid URL template.');
  expectError(
    await admin.post('/realm/playgrounds', { ...params, url_template: 'https://x.example/' }),
    'Missing the required variable "code" in the URL template',
  );
  expectError(
    await admin.post('/realm/playgrounds', { ...params, url_template: 'https://x.example/{code}/{lang}' }),
    '"code" should be the only variable present in the URL template',
  );
  expectError(await admin.post('/realm/playgrounds', { ...params, name: '  ' }), 'This field cannot be blank.');
  const other = await server.createOrganization('playgrounds');
  expectError(await other.delete(`/realm/playgrounds/${id}`), 'Invalid playground');
  expectError(await alice.delete(`/realm/playgrounds/${id}`), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
  ok(await admin.delete(`/realm/playgrounds/${id}`));
  expectError(await admin.delete(`/realm/playgrounds/${id}`), 'Invalid playground');
  await expectStateInSync(server, viewer, 'playground removed');
  assert.deepEqual(viewer.state.realm_playgrounds, []);
});

// --- legacy push tokens ---

const tokensOf = (userId: number) =>
  server.svc.db.selectFrom('push_device_tokens').select(['kind', 'token', 'ios_app_id']).where('user_id', '=', userId).orderBy('id').execute();

test('legacy push tokens are stored without a push service, and removed', async () => {
  assert.equal(server.config.pushServiceUrl, undefined);
  ok(await alice.post('/users/me/apns_device_token', { token: 'c0ffee00c0ffee00', appid: 'org.zulip.Zulip' }));
  ok(await alice.post('/users/me/apns_device_token', { token: 'c0ffee00c0ffee00', appid: 'org.zulip.Zulip' }));
  ok(await alice.post('/users/me/android_gcm_reg_id', { token: 'fcm-token:APA91b' }));
  assert.deepEqual(await tokensOf(alice.id), [
    { kind: 'apns', token: 'c0ffee00c0ffee00', ios_app_id: 'org.zulip.Zulip' },
    { kind: 'fcm', token: 'fcm-token:APA91b', ios_app_id: null },
  ]);
  // Another user's token is theirs: removing it from Bob is "does not exist".
  expectError(await bob.delete('/users/me/android_gcm_reg_id', { token: 'fcm-token:APA91b' }), 'Token does not exist');
  ok(await alice.delete('/users/me/android_gcm_reg_id', { token: 'fcm-token:APA91b' }));
  ok(await alice.delete('/users/me/apns_device_token', { token: 'c0ffee00c0ffee00' }));
  expectError(await alice.delete('/users/me/apns_device_token', { token: 'c0ffee00c0ffee00' }), 'Token does not exist');
  assert.deepEqual(await tokensOf(alice.id), []);
});

test('legacy push tokens as long as the reference allows: stored once, removed (no index overflow)', async () => {
  // 4,096 incompressible characters: more than a btree index row holds.
  let x = 7;
  const token = Array.from({ length: 4096 }, () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) % 16).toString(16)).join('');
  ok(await alice.post('/users/me/apns_device_token', { token, appid: 'org.zulip.Zulip' }));
  ok(await alice.post('/users/me/apns_device_token', { token, appid: 'org.zulip.Other' }));
  assert.deepEqual(await tokensOf(alice.id), [{ kind: 'apns', token, ios_app_id: 'org.zulip.Other' }]);
  ok(await alice.delete('/users/me/apns_device_token', { token }));
  assert.deepEqual(await tokensOf(alice.id), []);
});

test('legacy push tokens: the reference checks', async () => {
  expectError(await alice.post('/users/me/android_gcm_reg_id', { token: '' }), 'Empty or invalid length token');
  expectError(await alice.post('/users/me/android_gcm_reg_id', { token: 'x'.repeat(4097) }), 'Empty or invalid length token');
  expectError(await alice.post('/users/me/apns_device_token', { token: 'abcde', appid: 'org.zulip.Zulip' }), 'Invalid APNS token');
  expectError(await alice.post('/users/me/apns_device_token', { token: 'c0ffee' }), "Missing 'appid' argument", 'REQUEST_VARIABLE_MISSING');
  expectError(await alice.delete('/users/me/apns_device_token', { token: '' }), 'Empty or invalid length token');
  assert.deepEqual(await tokensOf(alice.id), []);
  // A guest may keep tokens; a deactivated user cannot.
  ok(await guest.post('/users/me/android_gcm_reg_id', { token: 'guest-token' }));
  const dave = await server.createUser({ email: 'dave@example.com' });
  ok(await server.owner.delete(`/users/${dave.id}`));
  assert.equal((await dave.post('/users/me/android_gcm_reg_id', { token: 'dave-token' })).status, 401);
  assert.deepEqual(await tokensOf(dave.id), []);
});
