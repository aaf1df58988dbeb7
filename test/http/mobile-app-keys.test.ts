// The keys the Zulip mobile app (zulip-flutter) requires (issue 11, point 10):
// its parser (lib/api/model/initial_snapshot.dart, lib/api/route/realm.dart,
// lib/api/model/model.dart) reads these as non-nullable, so a server without
// any of them cannot be connected to. The OpenAPI document (zulip-openapi-10.2)
// lists the same keys for /server_settings and /register.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';

let server: TestServer;
let alice: Client;

before(async () => {
  server = await startTestServer();
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }] });
});
after(() => server.close());

/** GET /server_settings: the app's GetServerSettingsResult. */
const SERVER_SETTINGS_KEYS = [
  'authentication_methods',
  'external_authentication_methods',
  'zulip_feature_level',
  'zulip_version',
  'zulip_merge_base',
  'push_notifications_enabled',
  'is_incompatible',
  'email_auth_enabled',
  'require_email_format_usernames',
  'realm_uri',
  'realm_name',
  'realm_icon',
  'realm_description',
  'realm_web_public_access_enabled',
];

/** POST /register: the app's InitialSnapshot, non-nullable fields. */
const REGISTER_KEYS = [
  'queue_id',
  'last_event_id',
  'zulip_feature_level',
  'zulip_version',
  'zulip_merge_base',
  'custom_profile_fields',
  'max_stream_name_length',
  'max_topic_length',
  'server_presence_ping_interval_seconds',
  'server_presence_offline_threshold_seconds',
  'presences',
  'realm_emoji',
  'realm_user_groups',
  'recent_private_conversations',
  'subscriptions',
  'unread_msgs',
  'starred_messages',
  'streams',
  'user_settings',
  'user_topics',
  'realm_name',
  'realm_waiting_period_threshold',
  'realm_allow_message_editing',
  'realm_enable_read_receipts',
  'realm_icon_url',
  'realm_presence_disabled',
  'realm_default_external_accounts',
  'max_file_upload_size_mib',
  'server_emoji_data_url',
  'event_queue_longpoll_timeout_seconds',
  'realm_users',
  'realm_non_active_users',
  'cross_realm_bots',
];

/** Also required by the app, added by issue 11's points 3-5 (user status, muted users, alert words) on their own branches. */
const REGISTER_KEYS_OF_OTHER_POINTS = ['alert_words', 'muted_users', 'user_status'];

/** The app's User (realm_users, cross_realm_bots entries); `is_active` it reads from which list a user is in. */
const USER_KEYS = ['user_id', 'email', 'full_name', 'date_joined', 'is_bot', 'role', 'timezone', 'avatar_version'];
/** The app's UserSettings. */
const USER_SETTINGS_KEYS = ['starred_message_counts', 'display_emoji_reaction_users', 'emojiset', 'presence_enabled'];
/** The app's ZulipStream (streams, and the channel part of subscriptions). */
const STREAM_KEYS = [
  'stream_id',
  'name',
  'description',
  'rendered_description',
  'date_created',
  'invite_only',
  'is_web_public',
  'history_public_to_subscribers',
];

const missing = (body: Record<string, unknown>, keys: string[]) => keys.filter((k) => body[k] === undefined || body[k] === null);

test('/server_settings carries every key the mobile app requires', async () => {
  const res = await server.anonymous.get('/server_settings');
  assert.equal(res.status, 200);
  assert.deepEqual(missing(res.body, SERVER_SETTINGS_KEYS), []);
  assert.equal(typeof res.body.zulip_feature_level, 'number');
  assert.equal(typeof res.body.zulip_merge_base, 'string');
});

test('/register carries every key the mobile app requires, with the nested objects it parses', async () => {
  const res = await alice.post('/register', {});
  assert.equal(res.status, 200);
  assert.deepEqual(missing(res.body, REGISTER_KEYS), []);
  for (const user of [...res.body.realm_users, ...res.body.cross_realm_bots]) assert.deepEqual(missing(user, USER_KEYS), [], JSON.stringify(user));
  assert.deepEqual(missing(res.body.user_settings, USER_SETTINGS_KEYS), []);
  for (const stream of [...res.body.streams, ...res.body.subscriptions]) assert.deepEqual(missing(stream, STREAM_KEYS), [], JSON.stringify(stream));
});

test('/register carries the keys issue 11 points 3-5 add', async () => {
  const res = await alice.post('/register', {});
  assert.deepEqual(missing(res.body, REGISTER_KEYS_OF_OTHER_POINTS), []);
});
