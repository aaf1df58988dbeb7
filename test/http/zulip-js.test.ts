// The `zulip-js` client library (npm), unchanged, against a listening Confab
// (issue 11, point 10): every call it wraps that Confab serves, through its own
// HTTP code (multipart POST bodies, query strings for GET, PATCH and DELETE).
// Not driven: users.me.pointer (gone from the reference API) and
// users.me.alertWords (issue 11 point 5, another branch); filters.retrieve
// calls GET /realm/filters, which the reference no longer serves either.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { startTestServer, OWNER_EMAIL, OWNER_PASSWORD, type Client, type TestServer } from '../support/server.ts';

const zulip = createRequire(import.meta.url)('zulip-js') as (config: Record<string, string>) => Promise<any>;

let server: TestServer;
let alice: Client;
let url: string;
let owner: any;
let client: any;

before(async () => {
  server = await startTestServer();
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  const address = await server.app.listen({ host: '127.0.0.1', port: 0 });
  url = address;
  // Password login: zulip-js fetches the API key itself (POST /fetch_api_key).
  owner = await zulip({ username: OWNER_EMAIL, password: OWNER_PASSWORD, realm: url });
  client = await zulip({ username: alice.email!, apiKey: alice.apiKey!, realm: url });
});
after(() => server.close());

function success(res: any) {
  assert.equal(res.result, 'success', JSON.stringify(res));
  return res;
}

test('login, server settings and the compatible version names', async () => {
  assert.equal(owner.config.apiKey.length, 32);
  const settings = success(await client.server.settings());
  assert.equal(typeof settings.zulip_feature_level, 'number');
  assert.equal(settings.zulip_version, settings.svc_version);
  const me = success(await owner.users.me.getProfile());
  assert.equal(me.email, OWNER_EMAIL);
});

test('channels, subscriptions, users and topics', async () => {
  success(await client.users.me.subscriptions.add({ subscriptions: JSON.stringify([{ name: 'Denmark' }]) }));
  const { stream_id } = success(await client.streams.getStreamId('Denmark'));
  assert.ok((success(await client.streams.retrieve()).streams as any[]).some((s) => s.stream_id === stream_id));
  assert.ok((success(await client.streams.subscriptions.retrieve()).subscriptions as any[]).some((s) => s.name === 'Denmark'));
  const users = success(await client.users.retrieve()).members as any[];
  assert.ok(users.some((u) => u.email === 'alice@example.com'));
  success(await client.messages.send({ to: 'Denmark', type: 'stream', topic: 'zulip-js', content: 'first' }));
  const topics = success(await client.streams.topics.retrieve({ stream_id })).topics as any[];
  assert.ok(topics.some((t) => t.name === 'zulip-js'));
  const created = success(await owner.users.create({ email: 'newbie@example.com', password: 'newbie-password-1', full_name: 'New Bie' }));
  assert.equal(typeof created.user_id, 'number');
  success(await client.users.me.subscriptions.remove({ subscriptions: JSON.stringify(['Denmark']) }));
  success(await client.users.me.subscriptions.add({ subscriptions: JSON.stringify([{ name: 'Denmark' }]) }));
});

test('register, events, messages, reactions, flags, typing and deregister', async () => {
  const queue = success(
    await client.queues.register({ event_types: ['message', 'reaction', 'update_message', 'typing', 'delete_message', 'update_message_flags'] }),
  );
  assert.equal(queue.zulip_feature_level, queue.svc_feature_level);
  const { id } = success(await owner.messages.send({ to: 'Denmark', type: 'stream', topic: 'zulip-js', content: 'hello from **zulip-js**' }));
  const rendered = success(await client.messages.render('**bold**'));
  assert.equal(rendered.rendered, '<p><strong>bold</strong></p>');
  const fetched = success(
    await client.messages.retrieve({ anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'stream', operand: 'Denmark' }] }),
  );
  assert.ok((fetched.messages as any[]).some((m) => m.id === id && m.content === '<p>hello from <strong>zulip-js</strong></p>'));
  success(await owner.messages.update({ message_id: id, content: 'edited' }));
  assert.equal(success(await client.messages.getById({ message_id: id, apply_markdown: false })).message.content, 'edited');
  assert.equal(success(await client.messages.getHistoryById({ message_id: id })).message_history.length, 2);
  success(await client.reactions.add({ message_id: id, emoji_name: 'octopus' }));
  success(await client.reactions.remove({ message_id: id, emoji_name: 'octopus' }));
  success(await client.messages.flags.add({ messages: [id], flag: 'starred' }));
  success(await client.messages.flags.remove({ messages: [id], flag: 'starred' }));
  success(await owner.typing.send({ to: [alice.id], op: 'start' }));
  success(await owner.messages.deleteById({ message_id: id }));
  const { events } = success(await client.events.retrieve({ queue_id: queue.queue_id, last_event_id: -1, dont_block: true }));
  assert.deepEqual(
    (events as any[]).map((e) => (e.op ? `${e.type}:${e.op}` : e.type)),
    [
      'message',
      'update_message',
      'reaction:add',
      'reaction:remove',
      'update_message_flags:add',
      'update_message_flags:remove',
      'typing:start',
      'delete_message',
    ],
  );
  success(await client.queues.deregister({ queue_id: queue.queue_id }));
  assert.equal((await client.events.retrieve({ queue_id: queue.queue_id, last_event_id: -1, dont_block: true })).code, 'BAD_EVENT_QUEUE_ID');
});

test('emoji, linkifiers, callEndpoint (submessages, API key) and a deleted channel', async () => {
  assert.deepEqual(success(await client.emojis.retrieve()).emoji, {});
  // GET /realm/filters left the reference API (GET /realm/linkifiers replaced it): refused there and here alike.
  assert.deepEqual(await client.filters.retrieve(), { result: 'error', msg: 'Method Not Allowed', allowed_methods: ['POST'] });
  const { id } = success(await client.messages.send({ to: 'Denmark', type: 'stream', topic: 'poll', content: '/poll Tea?\nYes\nNo' }));
  success(
    await client.callEndpoint('/submessage', 'POST', {
      message_id: id,
      msg_type: 'widget',
      content: JSON.stringify({ type: 'vote', key: 'canned,0', vote: 1 }),
    }),
  );
  assert.equal(success(await client.messages.getById({ message_id: id })).message.submessages.length, 2);
  const { api_key } = success(await client.callEndpoint('/users/me/api_key/regenerate', 'POST', {}));
  assert.equal((await client.users.me.getProfile()).code, 'UNAUTHORIZED');
  const renewed = await zulip({ username: alice.email!, apiKey: api_key, realm: url });
  success(await renewed.users.me.getProfile());
  const { stream_id } = success(await owner.streams.getStreamId('Denmark'));
  success(await owner.streams.deleteById({ stream_id }));
  assert.equal(success(await owner.streams.getStreamId('Denmark')).stream_id, stream_id);
});
