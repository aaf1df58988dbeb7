// Compatible names (issue 11, point 1): the reference's version keys beside the
// spec's, client_gravatar and zulip_extra_emoji on input, and COMPAT_NAMES=false;
// and a sender who is not subscribed keeps no copy of a channel message (point 9).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer, ok } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { SVC_FEATURE_LEVEL, SVC_VERSION } from '../../src/version.ts';

let server: TestServer;
let alice: Client;
let bob: Client;

before(async () => {
  server = await startTestServer();
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  ok(await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }], principals: [server.owner.id, alice.id] }));
});
after(() => server.close());

const VERSION_KEYS = {
  svc_version: SVC_VERSION,
  svc_feature_level: SVC_FEATURE_LEVEL,
  svc_merge_base: SVC_VERSION,
  zulip_version: SVC_VERSION,
  zulip_feature_level: SVC_FEATURE_LEVEL,
  zulip_merge_base: SVC_VERSION,
};

function versionKeys(body: Record<string, unknown>) {
  return Object.fromEntries(
    Object.keys(VERSION_KEYS)
      .filter((k) => k in body)
      .map((k) => [k, body[k]]),
  );
}

test('/server_settings and /register carry both names of the version, with the same values', async () => {
  assert.deepEqual(versionKeys(ok(await server.anonymous.get('/server_settings'))), VERSION_KEYS);
  const state = ok(await alice.post('/register', { fetch_event_types: ['realm'] }));
  assert.deepEqual(versionKeys(state), VERSION_KEYS);
});

test('the restart event carries both names', async () => {
  const fs = await import('node:fs/promises');
  const dataDir = await fs.mkdtemp('/tmp/confab-compat-');
  let running = await startTestServer({ dataDir });
  try {
    const reg = ok(await running.owner.post('/register', { event_types: ['restart'] }));
    running = await running.restart();
    const res = ok(await running.owner.get('/events', { queue_id: reg.queue_id, last_event_id: -1, dont_block: true }));
    const restart = res.events.find((e: any) => e.type === 'restart');
    assert.deepEqual(versionKeys(restart), VERSION_KEYS);
  } finally {
    await running.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

test('client_gravatar is client_svcavatar; the spec name wins when both are given', async () => {
  // Gravatar avatars of users whose email the caller sees: null when the client computes them.
  const avatarOf = async (params: Record<string, unknown>) => {
    const res = ok(await alice.get(`/users/${bob.id}`, params));
    return { avatar: res.user.avatar_url, ignored: res.ignored_parameters_unsupported };
  };
  assert.deepEqual(await avatarOf({ client_gravatar: true }), { avatar: null, ignored: undefined });
  assert.notEqual((await avatarOf({ client_gravatar: false })).avatar, null);
  assert.deepEqual(await avatarOf({ client_svcavatar: false, client_gravatar: true }), {
    avatar: (await avatarOf({ client_svcavatar: false })).avatar,
    ignored: undefined,
  });
  // Where the parameter does not exist, the compatible name is not consumed either.
  assert.deepEqual(ok(await alice.get('/users/me/subscriptions', { client_gravatar: true })).ignored_parameters_unsupported, ['client_gravatar']);
  // On register too: the message's avatar in the event follows it.
  const reg = ok(await alice.post('/register', { event_types: ['message'], client_gravatar: false }));
  ok(await server.owner.post('/messages', { type: 'stream', to: 'Denmark', topic: 'avatars', content: 'hi' }));
  const events = ok(await alice.get('/events', { queue_id: reg.queue_id, last_event_id: -1, dont_block: true })).events;
  assert.notEqual(events.find((e: any) => e.type === 'message').message.avatar_url, null);
});

test('zulip_extra_emoji is accepted as a reaction_type; outputs say svc_extra_emoji', async () => {
  const id = ok(await alice.post('/messages', { type: 'stream', to: 'Denmark', topic: 'reactions', content: 'react' })).id;
  ok(await alice.post(`/messages/${id}/reactions`, { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' }));
  const reactions = ok(await alice.get(`/messages/${id}`)).message.reactions;
  assert.deepEqual(
    reactions.map((r: any) => r.reaction_type),
    ['svc_extra_emoji'],
  );
  ok(await alice.delete(`/messages/${id}/reactions`, { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' }));
  assert.deepEqual(ok(await alice.get(`/messages/${id}`)).message.reactions, []);
});

test('COMPAT_NAMES=false: only the spec names', async () => {
  const strict = await startTestServer({ compatNames: false });
  try {
    const settings = ok(await strict.anonymous.get('/server_settings'));
    assert.deepEqual(versionKeys(settings), { svc_version: SVC_VERSION, svc_feature_level: SVC_FEATURE_LEVEL, svc_merge_base: SVC_VERSION });
    assert.deepEqual(versionKeys(ok(await strict.owner.post('/register', { fetch_event_types: ['realm'] }))), versionKeys(settings));
    const user = ok(await strict.owner.get(`/users/${strict.owner.id}`, { client_gravatar: true }));
    assert.deepEqual(user.ignored_parameters_unsupported, ['client_gravatar']);
    const id = ok(await strict.owner.post('/messages', { type: 'private', to: [strict.owner.id], content: 'x' })).id;
    const res = await strict.owner.post(`/messages/${id}/reactions`, { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' });
    assert.deepEqual(res.body, { result: 'error', msg: 'Invalid emoji type.', code: 'BAD_REQUEST' });
  } finally {
    await strict.close();
  }
});

test('a sender who is not subscribed gets no copy and no event of a channel message', async () => {
  const reg = ok(await bob.post('/register', { event_types: ['message'] }));
  const before = ok(await bob.post('/register', { fetch_event_types: ['message', 'update_message_flags'] })).unread_msgs.count;
  const sent = ok(await bob.post('/messages', { type: 'stream', to: 'Denmark', topic: 'outsider', content: 'from outside' }));
  // Subscribers have it; the sender has no copy: nothing unread, nothing in the feed's flags.
  const copy = await server.svc.db.selectFrom('user_messages').select('user_id').where('message_id', '=', sent.id).execute();
  assert.deepEqual(
    copy.map((r) => r.user_id).sort((a, b) => a - b),
    [server.owner.id, alice.id].sort((a, b) => a - b),
  );
  assert.equal(ok(await bob.post('/register', { fetch_event_types: ['message', 'update_message_flags'] })).unread_msgs.count, before);
  const events = ok(await bob.get('/events', { queue_id: reg.queue_id, last_event_id: -1, dont_block: true })).events;
  assert.deepEqual(
    events.filter((e: any) => e.type === 'message'),
    [],
  );
  // It is still theirs to read as public history.
  assert.deepEqual(ok(await bob.get(`/messages/${sent.id}`)).message.flags, ['read', 'historical']);
  // A subscribed sender keeps a copy, as before.
  const mine = ok(await alice.post('/messages', { type: 'stream', to: 'Denmark', topic: 'insider', content: 'from inside' })).id;
  assert.ok(
    await server.svc.db.selectFrom('user_messages').select('user_id').where('message_id', '=', mine).where('user_id', '=', alice.id).executeTakeFirst(),
  );
});

test('a guest may use the compatible names too, and another organization sees its own version keys', async () => {
  const guest = await server.createUser({ role: ROLE.GUEST });
  assert.deepEqual(versionKeys(ok(await guest.post('/register', { fetch_event_types: ['realm'], client_gravatar: true }))), VERSION_KEYS);
  const other = await server.createOrganization('compat');
  assert.deepEqual(versionKeys(ok(await other.get('/server_settings'))), VERSION_KEYS);
});
