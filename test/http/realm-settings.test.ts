// Organization settings over the API: PATCH /realm (the reference's update_realm).
// Who may change what, validation, all-or-nothing, realm events and register
// state, and what follows from a change (full members, guests' view of users).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type Response, type TestServer, ok } from '../support/server.ts';
import { expectStateInSync, registerViewer, type Viewer } from '../support/state.ts';
import { ROLE } from '../../src/users/roles.ts';
import { systemGroupIds } from '../../src/user_groups/group-setting.ts';
import type { SystemGroupName } from '../../src/user_groups/system-groups.ts';

let server: TestServer;
let owner: Client;
let admin: Client;
let moderator: Client;
let member: Client;
let guest: Client;
let sys: Record<SystemGroupName, number>;
before(async () => {
  server = await startTestServer();
  owner = server.owner;
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, fullName: 'Ada Admin' });
  moderator = await server.createUser({ role: ROLE.MODERATOR, fullName: 'Mo Derator' });
  member = await server.createUser({ role: ROLE.MEMBER, fullName: 'Mem Ber' });
  guest = await server.createUser({ role: ROLE.GUEST, fullName: 'Gue St' });
  sys = await systemGroupIds(server.svc.db, 1);
});
after(() => server.close());

function refused(res: Response, msg: string, code = 'BAD_REQUEST'): void {
  assert.equal(res.status, 400, `${msg}: ${JSON.stringify(res.body)}`);
  assert.equal(res.body.msg, msg);
  assert.equal(res.body.code, code);
}

const change = (value: unknown, old?: unknown) => (old === undefined ? { new: value } : { new: value, old });

/** The organization's `realm` state as a fresh register gives it. */
async function realmState(client: Client = owner): Promise<any> {
  const { queue_id, ...state } = ok(await client.post('/register', { fetch_event_types: ['realm'] }));
  await client.delete('/events', { queue_id });
  return state;
}

/** A queue of `realm` events, read as they come. */
async function listen(client: Client, types = ['realm']) {
  const queue = ok(await client.post('/register', { event_types: types, fetch_event_types: ['realm'] }));
  let last = queue.last_event_id;
  return {
    async next(): Promise<any[]> {
      const events = ok(await client.get('/events', { queue_id: queue.queue_id, last_event_id: last, dont_block: true })).events;
      if (events.length > 0) last = events[events.length - 1].id;
      return events.filter((e: any) => e.type !== 'heartbeat').map(({ id: _id, ...e }: any) => e);
    },
    close: () => client.delete('/events', { queue_id: queue.queue_id }),
  };
}

let channels = 0;
async function createChannel(opts: Record<string, unknown> = {}): Promise<number> {
  return ok(await owner.post('/channels/create', { name: `settings channel ${++channels}`, subscribers: [owner.id], ...opts })).id;
}

test('only administrators change settings; owner-only settings need an owner', async () => {
  for (const c of [guest, member, moderator]) {
    refused(await c.patch('/realm', { name: 'Not Yours' }), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
    refused(await c.patch('/realm', { can_create_groups: change(sys['role:members']) }), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
  }
  assert.equal((await realmState()).realm_name, 'Test Organization');

  assert.deepEqual(ok(await admin.patch('/realm', { name: 'Renamed by Admin' })), { result: 'success', msg: '', name: 'updated' });
  assert.equal((await realmState(member)).realm_name, 'Renamed by Admin');
  assert.equal(ok(await server.anonymous.get('/server_settings')).realm_name, 'Renamed by Admin');

  const ownerOnly: Record<string, unknown> = {
    invite_required: false,
    emails_restricted_to_domains: true,
    disallow_disposable_email_addresses: false,
    waiting_period_threshold: 0,
    message_retention_days: 30,
    create_multiuse_invite_group: change(sys['role:moderators']),
    can_create_groups: change(sys['role:moderators']),
    can_invite_users_group: change(sys['role:moderators']),
    can_manage_all_groups: change(sys['role:administrators']),
    can_manage_billing_group: change(sys['role:owners']),
  };
  for (const [key, value] of Object.entries(ownerOnly)) {
    // Even a value equal to the current one: asking is what needs the role.
    refused(await admin.patch('/realm', { [key]: value }), 'Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
  }
  const answer = ok(await owner.patch('/realm', ownerOnly));
  const state = await realmState();
  assert.equal(state.realm_invite_required, false);
  assert.equal(state.realm_emails_restricted_to_domains, true);
  assert.equal(state.realm_disallow_disposable_email_addresses, false);
  assert.equal(state.realm_message_retention_days, 30);
  assert.equal(state.realm_can_create_groups, sys['role:moderators']);
  assert.equal(state.realm_can_manage_billing_group, sys['role:owners']);
  // The answer names what changed (waiting_period_threshold was already 0).
  assert.equal(answer.waiting_period_threshold, undefined);
  assert.equal(answer.message_retention_days, 30);
  assert.equal(answer.can_invite_users_group, sys['role:moderators']);
  // Administrators change the rest.
  ok(await admin.patch('/realm', { can_create_public_channel_group: change(sys['role:moderators']), allow_message_editing: false }));
  assert.equal((await realmState()).realm_can_create_public_channel_group, sys['role:moderators']);
  ok(
    await owner.patch('/realm', {
      name: 'Test Organization',
      invite_required: true,
      emails_restricted_to_domains: false,
      disallow_disposable_email_addresses: true,
      message_retention_days: '"unlimited"',
      create_multiuse_invite_group: change(sys['role:administrators']),
      can_create_groups: change(sys['role:members']),
      can_invite_users_group: change(sys['role:members']),
      can_manage_all_groups: change(sys['role:owners']),
      can_manage_billing_group: change(sys['role:administrators']),
      can_create_public_channel_group: change(sys['role:members']),
      allow_message_editing: true,
    }),
  );
  assert.equal((await realmState()).realm_message_retention_days, -1);
});

test('each setting is stored, answered and reported by register', async () => {
  const announcements = await createChannel();
  const moderation = await createChannel({ invite_only: true });
  const values: Record<string, [unknown, unknown, unknown]> = {
    // parameter: [sent, answered, register's value]
    description: ['We **talk** here.', 'updated', 'We **talk** here.'],
    avatar_changes_disabled: [true, true, true],
    default_code_block_language: ['python', 'updated', 'python'],
    default_language: ['de', 'updated', 'de'],
    digest_emails_enabled: [true, true, true],
    digest_weekday: [4, 4, 4],
    email_changes_disabled: [true, true, true],
    enable_guest_user_dm_warning: [false, false, false],
    enable_guest_user_indicator: [false, false, false],
    enable_read_receipts: [true, true, true],
    enable_spectator_access: [true, true, true],
    giphy_rating: [5, 5, 5],
    inline_image_preview: [false, false, false],
    inline_url_embed_preview: [true, true, true],
    jitsi_server_url: ['"https://jitsi.example.com"', 'updated', 'https://jitsi.example.com'],
    message_content_allowed_in_email_notifications: [false, false, false],
    message_content_delete_limit_seconds: [3600, 3600, 3600],
    message_content_edit_limit_seconds: ['"unlimited"', null, null],
    message_edit_history_visibility_policy: ['moves', 'moves', 'moves'],
    moderation_request_channel_id: [moderation, moderation, moderation],
    move_messages_between_streams_limit_seconds: ['"unlimited"', null, null],
    move_messages_within_stream_limit_seconds: [60, 60, 60],
    name_changes_disabled: [true, true, true],
    new_stream_announcements_stream_id: [announcements, announcements, announcements],
    org_type: [20, 20, 20],
    require_unique_names: [true, true, true],
    send_welcome_emails: [false, false, false],
    signup_announcements_stream_id: [announcements, announcements, announcements],
    topics_policy: ['disable_empty_topic', 'disable_empty_topic', 'disable_empty_topic'],
    video_chat_provider: [0, 0, 0],
    want_advertise_in_communities_directory: [true, true, true],
    zulip_update_announcements_stream_id: [announcements, announcements, announcements],
  };
  const sent = Object.fromEntries(Object.entries(values).map(([k, [v]]) => [k, v]));
  const answer = ok(await admin.patch('/realm', sent));
  const state = await realmState();
  for (const [key, [, answered, registered]] of Object.entries(values)) {
    assert.deepEqual(answer[key], answered, `answer ${key}`);
    assert.deepEqual(state[`realm_${key}`], registered, `register ${key}`);
  }
  // What register derives follows.
  assert.equal(state.realm_mandatory_topics, true);
  assert.equal(state.realm_allow_edit_history, true);
  // The same request again changes nothing and answers nothing.
  assert.deepEqual(ok(await admin.patch('/realm', sent)), { result: 'success', msg: '' });
  // Unsetting: "default" Jitsi server, -1 channels.
  const back = ok(
    await admin.patch('/realm', {
      jitsi_server_url: '"default"',
      new_stream_announcements_stream_id: -1,
      moderation_request_channel_id: -1,
      message_content_edit_limit_seconds: 600,
      topics_policy: 'allow_empty_topic',
      enable_spectator_access: false,
      message_edit_history_visibility_policy: 'none',
    }),
  );
  assert.equal(back.jitsi_server_url, null);
  assert.equal(back.new_stream_announcements_stream_id, -1);
  const after = await realmState();
  assert.equal(after.realm_jitsi_server_url, null);
  assert.equal(after.realm_new_stream_announcements_stream_id, -1);
  assert.equal(after.realm_moderation_request_channel_id, -1);
  assert.equal(after.realm_mandatory_topics, false);
  assert.equal(after.realm_allow_edit_history, false);
  // The organization's description is rendered for the login page.
  assert.equal(ok(await server.anonymous.get('/server_settings')).realm_description, '<p>We <strong>talk</strong> here.</p>');
  // Settings equal to the defaults are not kept.
  ok(await admin.patch('/realm', { message_edit_history_visibility_policy: 'all', description: '' }));
  const row = await server.svc.db.selectFrom('realms').select('settings').where('id', '=', 1).executeTakeFirstOrThrow();
  assert.equal('message_edit_history_visibility_policy' in row.settings, false);
  assert.equal('jitsi_server_url' in row.settings, false);
});

test("validation: the reference's messages and codes", async () => {
  const publicChannel = await createChannel();
  const archived = await createChannel();
  ok(await owner.delete(`/streams/${archived}`));
  const named = ok(await owner.post('/user_groups/create', { name: 'settings crew', description: '', members: [member.id] })).group_id;
  const cases: [Client, Record<string, unknown>, string, string?][] = [
    [admin, { name: 'x'.repeat(41) }, 'name is too long (limit: 40 characters)'],
    [admin, { name: '   ' }, 'name cannot be blank'],
    [admin, { description: 'x'.repeat(1001) }, 'description is too long (limit: 1000 characters)'],
    [admin, { default_language: 'xx' }, "Invalid language 'xx'"],
    [admin, { video_chat_provider: 7 }, 'Invalid video_chat_provider 7'],
    [admin, { giphy_rating: 9 }, 'Invalid giphy_rating 9'],
    [admin, { digest_weekday: 7 }, 'Invalid digest_weekday'],
    [admin, { org_type: 5 }, 'Invalid org_type'],
    [admin, { allow_message_editing: 1 }, 'allow_message_editing is not a boolean'],
    [admin, { inline_image_preview: 'yes' }, 'inline_image_preview is not valid JSON'],
    [admin, { giphy_rating: '"2"' }, 'giphy_rating is not an integer'],
    [owner, { waiting_period_threshold: -1 }, 'waiting_period_threshold is too small'],
    [admin, { message_content_edit_limit_seconds: 0 }, "Bad value for 'message_content_edit_limit_seconds': 0", 'REQUEST_VARIABLE_INVALID'],
    [admin, { message_content_delete_limit_seconds: '"forever"' }, "Bad value for 'message_content_delete_limit_seconds': forever", 'REQUEST_VARIABLE_INVALID'],
    [admin, { move_messages_within_stream_limit_seconds: -5 }, "Bad value for 'move_messages_within_stream_limit_seconds': -5", 'REQUEST_VARIABLE_INVALID'],
    [owner, { message_retention_days: 0 }, "Bad value for 'message_retention_days': 0", 'REQUEST_VARIABLE_INVALID'],
    [owner, { message_retention_days: '"realm_default"' }, "Bad value for 'message_retention_days': realm_default", 'REQUEST_VARIABLE_INVALID'],
    [admin, { message_edit_history_visibility_policy: 'some' }, 'Invalid message_edit_history_visibility_policy'],
    [admin, { topics_policy: 'empty_topic_only' }, 'Invalid topics_policy'],
    [admin, { jitsi_server_url: '"not a url"' }, 'jitsi_server_url is not an allowed_type'],
    [admin, { jitsi_server_url: '"ftp://jitsi.example.com"' }, 'jitsi_server_url is not an allowed_type'],
    [admin, { new_stream_announcements_stream_id: 999999 }, 'Invalid channel ID'],
    [admin, { signup_announcements_stream_id: archived }, 'Invalid channel ID'],
    [admin, { moderation_request_channel_id: publicChannel }, 'Moderation request channel must be private.'],
    [
      admin,
      { can_access_all_users_group: change(sys['role:administrators']) },
      "'can_access_all_users_group' setting cannot be set to 'role:administrators' group.",
    ],
    [admin, { can_access_all_users_group: change(sys['role:nobody']) }, "'can_access_all_users_group' setting cannot be set to 'role:nobody' group."],
    [admin, { can_access_all_users_group: change(named) }, "'can_access_all_users_group' must be a system user group.", 'SYSTEM_GROUP_REQUIRED'],
    [
      admin,
      { can_create_web_public_channel_group: change(sys['role:members']) },
      "'can_create_web_public_channel_group' setting cannot be set to 'role:members' group.",
    ],
    [
      admin,
      { can_create_web_public_channel_group: change({ direct_members: [admin.id], direct_subgroups: [] }) },
      "'can_create_web_public_channel_group' must be a system user group.",
      'SYSTEM_GROUP_REQUIRED',
    ],
    [owner, { can_manage_all_groups: change(sys['role:nobody']) }, "'can_manage_all_groups' setting cannot be set to 'role:nobody' group."],
    [
      owner,
      { can_manage_billing_group: change({ direct_members: [], direct_subgroups: [] }) },
      "'can_manage_billing_group' setting cannot be set to 'role:nobody' group.",
    ],
    [admin, { can_delete_any_message_group: change(sys['role:everyone']) }, "'can_delete_any_message_group' setting cannot be set to 'role:everyone' group."],
    [admin, { can_add_custom_emoji_group: change(sys['role:internet']) }, "'can_add_custom_emoji_group' setting cannot be set to 'role:internet' group."],
    [admin, { can_add_custom_emoji_group: change(999999) }, 'Invalid user group ID: 999999'],
    [admin, { can_add_custom_emoji_group: change({ direct_members: [999999], direct_subgroups: [] }) }, 'Invalid user ID: 999999'],
    [admin, { can_add_custom_emoji_group: { old: sys['role:members'] } }, 'can_add_custom_emoji_group["new"] is not valid'],
    [
      admin,
      { can_add_custom_emoji_group: change(sys['role:moderators'], sys['role:owners']) },
      "'old' value does not match the expected value.",
      'EXPECTATION_MISMATCH',
    ],
  ];
  for (const [client, params, msg, code] of cases) refused(await client.patch('/realm', params), msg, code);
  // Deactivated groups cannot become a setting's value.
  ok(await owner.post(`/user_groups/${named}/deactivate`));
  refused(await admin.patch('/realm', { can_add_custom_emoji_group: change(named) }), 'User group is deactivated.');
});

test('a failed request changes nothing and announces nothing', async () => {
  const viewer = await registerViewer(server, member);
  const before = await realmState();
  const countGroups = async () => (await server.svc.db.selectFrom('user_groups').select('id').execute()).length;
  const groupsBefore = await countGroups();
  const res = await owner.patch('/realm', {
    name: 'Half Done',
    allow_message_editing: false,
    waiting_period_threshold: 30,
    can_create_groups: change({ direct_members: [member.id], direct_subgroups: [sys['role:administrators']] }),
    can_access_all_users_group: change(sys['role:members']),
    // The last check fails.
    zulip_update_announcements_stream_id: 999999,
  });
  refused(res, 'Invalid channel ID');
  assert.deepEqual(await realmState(), before);
  const events = ok(await member.get('/events', { queue_id: viewer.queueId, last_event_id: viewer.lastEventId, dont_block: true })).events;
  assert.deepEqual(
    events.filter((e: any) => e.type !== 'heartbeat'),
    [],
  );
  // No anonymous group was left behind, and every member is still a full member.
  assert.equal(await countGroups(), groupsBefore);
  const full = await server.svc.db.selectFrom('user_group_members').select('user_id').where('group_id', '=', sys['role:fullmembers']).execute();
  assert.ok(full.some((r) => r.user_id === member.id));
  await expectStateInSync(server, viewer, 'after a failed request');
});

test('unknown and retired parameters are reported as ignored; nothing to change is no error', async () => {
  const body = ok(await admin.patch('/realm', { mandatory_topics: true, authentication_methods: { Email: true }, bogus: 1 }));
  assert.deepEqual(body, { result: 'success', msg: '', ignored_parameters_unsupported: ['authentication_methods', 'bogus', 'mandatory_topics'] });
  assert.equal((await realmState()).realm_mandatory_topics, false);
  assert.deepEqual(ok(await admin.patch('/realm', {})), { result: 'success', msg: '' });
  const current = await realmState();
  assert.deepEqual(
    ok(await owner.patch('/realm', { name: current.realm_name, can_create_groups: change(current.realm_can_create_groups, current.realm_can_create_groups) })),
    { result: 'success', msg: '' },
  );
});

test('events: realm/update for most settings, update_dict for message editing, topics policy and group settings', async () => {
  const events = await listen(member);
  ok(await admin.patch('/realm', { name: 'Evented', description: 'New *words*', allow_message_editing: false }));
  assert.deepEqual(await events.next(), [
    { type: 'realm', op: 'update', property: 'name', value: 'Evented' },
    { type: 'realm', op: 'update', property: 'description', value: 'New *words*' },
    { type: 'realm', op: 'update_dict', property: 'default', data: { allow_message_editing: false } },
  ]);
  ok(
    await admin.patch('/realm', {
      message_content_edit_limit_seconds: '"unlimited"',
      message_content_delete_limit_seconds: 120,
      topics_policy: 'disable_empty_topic',
      message_edit_history_visibility_policy: 'moves',
    }),
  );
  assert.deepEqual(await events.next(), [
    { type: 'realm', op: 'update', property: 'message_content_delete_limit_seconds', value: 120 },
    { type: 'realm', op: 'update_dict', property: 'default', data: { message_content_edit_limit_seconds: null } },
    { type: 'realm', op: 'update', property: 'message_edit_history_visibility_policy', value: 'moves' },
    { type: 'realm', op: 'update_dict', property: 'default', data: { topics_policy: 'disable_empty_topic', mandatory_topics: true } },
  ]);
  const anonymous = { direct_members: [member.id], direct_subgroups: [sys['role:moderators']] };
  const answer = ok(
    await admin.patch('/realm', {
      can_add_custom_emoji_group: change(anonymous, sys['role:members']),
      can_mention_many_users_group: change({ direct_members: [], direct_subgroups: [sys['role:moderators']] }),
    }),
  );
  assert.deepEqual(answer.can_add_custom_emoji_group, anonymous);
  // A single subgroup and no members is that group.
  assert.equal(answer.can_mention_many_users_group, sys['role:moderators']);
  assert.deepEqual(await events.next(), [
    { type: 'realm', op: 'update_dict', property: 'default', data: { can_add_custom_emoji_group: anonymous } },
    { type: 'realm', op: 'update_dict', property: 'default', data: { can_mention_many_users_group: sys['role:moderators'] } },
  ]);
  // `old` naming the anonymous value as it is now.
  ok(
    await admin.patch('/realm', {
      can_add_custom_emoji_group: change(sys['role:members'], { direct_members: [member.id], direct_subgroups: [sys['role:moderators']] }),
    }),
  );
  assert.equal((await events.next())[0].data.can_add_custom_emoji_group, sys['role:members']);
  // The anonymous group is gone once nothing uses it.
  const anonymousGroups = await server.svc.db.selectFrom('user_groups').select('id').where('name', 'is', null).where('realm_id', '=', 1).execute();
  const used = new Set(
    Object.values((await server.svc.db.selectFrom('realms').select('group_settings').where('id', '=', 1).executeTakeFirstOrThrow()).group_settings),
  );
  const channelUses = await server.svc.db.selectFrom('channels').selectAll().execute();
  for (const g of anonymousGroups) {
    const byChannel = channelUses.some((c: any) => Object.entries(c).some(([k, v]) => k.endsWith('_group_id') && v === g.id));
    const byGroup = await server.svc.db
      .selectFrom('user_groups')
      .select('id')
      .where((eb) =>
        eb.or([
          eb('can_add_members_group_id', '=', g.id),
          eb('can_join_group_id', '=', g.id),
          eb('can_leave_group_id', '=', g.id),
          eb('can_manage_group_id', '=', g.id),
          eb('can_mention_group_id', '=', g.id),
          eb('can_remove_members_group_id', '=', g.id),
        ]),
      )
      .executeTakeFirst();
    assert.ok(used.has(g.id) || byChannel || byGroup, `anonymous group ${g.id} left behind`);
  }
  ok(
    await owner.patch('/realm', {
      name: 'Test Organization',
      description: '',
      allow_message_editing: true,
      message_content_edit_limit_seconds: 600,
      message_content_delete_limit_seconds: '"unlimited"',
      topics_policy: 'allow_empty_topic',
      message_edit_history_visibility_policy: 'all',
      can_mention_many_users_group: change(sys['role:administrators']),
    }),
  );
  await events.close();
});

test('register stays in sync for owner, member and guest viewers', async () => {
  const viewers: Viewer[] = [
    await registerViewer(server, owner),
    await registerViewer(server, member),
    await registerViewer(server, member, { client_svcavatar: true, client_capabilities: { notification_settings_null: false, user_list_incomplete: true } }),
    await registerViewer(server, guest),
    await registerViewer(server, moderator, { fetch_event_types: ['realm', 'realm_user'] }),
  ];
  const sync = async (label: string) => {
    for (const v of viewers) await expectStateInSync(server, v, `${label} (viewer ${v.client.id})`);
  };
  ok(await admin.patch('/realm', { name: 'Synced', description: 'Hello', default_language: 'fr', digest_weekday: 2 }));
  await sync('name, description and scalars');
  // The creation permissions register derives for the caller follow the group settings.
  ok(
    await admin.patch('/realm', {
      can_create_public_channel_group: change(sys['role:administrators']),
      can_add_subscribers_group: change(sys['role:moderators']),
    }),
  );
  await sync('narrower creation permissions');
  const mine = (await realmState(member)) && ok(await member.post('/register', { fetch_event_types: ['realm_user'] }));
  assert.equal(mine.can_create_public_streams, false);
  assert.equal(mine.can_subscribe_other_users, false);
  await member.delete('/events', { queue_id: mine.queue_id });
  ok(await admin.patch('/realm', { can_create_public_channel_group: change({ direct_members: [member.id], direct_subgroups: [sys['role:owners']] }) }));
  await sync('an anonymous group naming the member');
  ok(
    await admin.patch('/realm', {
      can_create_private_channel_group: change(sys['role:moderators']),
      can_create_web_public_channel_group: change(sys['role:moderators']),
    }),
  );
  await sync('legacy policies');
  ok(await admin.patch('/realm', { enable_spectator_access: true }));
  await sync('web-public channels enabled');
  ok(await owner.patch('/realm', { can_invite_users_group: change(sys['role:fullmembers']), can_mention_many_users_group: change(sys['role:everyone']) }));
  await sync('invitations and wildcard mentions');
  ok(
    await admin.patch('/realm', {
      message_edit_history_visibility_policy: 'none',
      topics_policy: 'disable_empty_topic',
      message_content_edit_limit_seconds: '"unlimited"',
    }),
  );
  await sync('history and topics policies');
  // Role changes after setting changes: the caller's permissions follow both.
  ok(await owner.patch(`/users/${member.id}`, { role: ROLE.MODERATOR }));
  await sync('member made moderator');
  ok(await owner.patch(`/users/${member.id}`, { role: ROLE.MEMBER }));
  await sync('and back');
  ok(
    await owner.patch('/realm', {
      name: 'Test Organization',
      description: '',
      default_language: 'en',
      digest_weekday: 1,
      can_create_public_channel_group: change(sys['role:members']),
      can_add_subscribers_group: change(sys['role:members']),
      can_create_private_channel_group: change(sys['role:members']),
      can_create_web_public_channel_group: change(sys['role:owners']),
      enable_spectator_access: false,
      can_invite_users_group: change(sys['role:members']),
      can_mention_many_users_group: change(sys['role:administrators']),
      message_edit_history_visibility_policy: 'all',
      topics_policy: 'allow_empty_topic',
      message_content_edit_limit_seconds: 600,
    }),
  );
  await sync('everything back');
  for (const v of viewers) await v.client.delete('/events', { queue_id: v.queueId });
});

test('a new waiting period moves members out of and into role:fullmembers', async () => {
  const newcomer = await server.createUser({ fullName: 'New Comer' });
  const veteran = await server.createUser({ fullName: 'Vet Eran' });
  const leaver = await server.createUser({ fullName: 'Lea Ver' });
  // The veteran joined long ago; the leaver is deactivated (no events about them).
  await server.svc.db
    .updateTable('users')
    .set({ date_joined: new Date(Date.now() - 40 * 86_400_000) })
    .where('id', '=', veteran.id)
    .execute();
  ok(await owner.delete(`/users/${leaver.id}`));
  // A private channel that full members reach without being subscribed, and creation for full members only.
  const reach = await createChannel({ invite_only: true, can_subscribe_group: sys['role:fullmembers'] });
  ok(await admin.patch('/realm', { can_create_public_channel_group: change(sys['role:fullmembers']) }));
  const viewers = [await registerViewer(server, newcomer), await registerViewer(server, veteran), await registerViewer(server, owner)];
  const groupEvents = await listen(admin, ['user_group']);
  const fullMembers = async () =>
    (await server.svc.db.selectFrom('user_group_members').select('user_id').where('group_id', '=', sys['role:fullmembers']).orderBy('user_id').execute()).map(
      (r) => r.user_id,
    );
  assert.ok((await fullMembers()).includes(newcomer.id));

  ok(await owner.patch('/realm', { waiting_period_threshold: 30 }));
  const left = (await fullMembers()).filter((id) => [newcomer.id, veteran.id, leaver.id].includes(id));
  assert.deepEqual(left, [veteran.id]);
  const events = await groupEvents.next();
  const removal = events.find((e) => e.op === 'remove_members');
  assert.equal(removal.group_id, sys['role:fullmembers']);
  assert.ok(removal.user_ids.includes(newcomer.id) && removal.user_ids.includes(member.id) && !removal.user_ids.includes(leaver.id));
  assert.equal(events.filter((e) => e.op === 'add_members').length, 0);
  // The newcomer no longer sees the channel or may create public ones.
  refused(await newcomer.get(`/streams/${reach}`), 'Invalid channel ID');
  for (const v of viewers) await expectStateInSync(server, v, `waiting period 30 (viewer ${v.client.id})`);
  const state = ok(await newcomer.post('/register', { fetch_event_types: ['realm_user', 'stream'] }));
  assert.equal(state.can_create_public_streams, false);
  assert.equal(
    state.streams.some((s: any) => s.stream_id === reach),
    false,
  );
  await newcomer.delete('/events', { queue_id: state.queue_id });

  ok(await owner.patch('/realm', { waiting_period_threshold: 0 }));
  const back = await groupEvents.next();
  const addition = back.find((e) => e.op === 'add_members');
  assert.ok(addition.user_ids.includes(newcomer.id) && !addition.user_ids.includes(veteran.id));
  assert.ok((await fullMembers()).includes(newcomer.id));
  for (const v of viewers) await expectStateInSync(server, v, `waiting period 0 (viewer ${v.client.id})`);
  ok(await admin.patch('/realm', { can_create_public_channel_group: change(sys['role:members']) }));
  await groupEvents.close();
  for (const v of viewers) await v.client.delete('/events', { queue_id: v.queueId });
});

test('can_access_all_users_group: guests stop and start seeing users they share nothing with', async () => {
  const stranger = await server.createUser({ fullName: 'Stran Ger' });
  const companion = await server.createUser({ fullName: 'Com Panion' });
  // The guest shares a channel with the companion.
  const shared = await createChannel({ subscribers: [owner.id] });
  ok(await owner.post('/users/me/subscriptions', { subscriptions: [{ name: `settings channel ${channels}` }], principals: [guest.id, companion.id] }));
  void shared;
  const viewers = [
    await registerViewer(server, guest),
    await registerViewer(server, guest, { client_capabilities: { notification_settings_null: false, user_list_incomplete: true } }),
    await registerViewer(server, member),
  ];
  const guestEvents = await listen(guest, ['realm_user']);
  const memberEvents = await listen(member, ['realm_user']);

  ok(await owner.patch('/realm', { can_access_all_users_group: change(sys['role:members']) }));
  const removed = (await guestEvents.next()).filter((e) => e.op === 'remove').map((e) => e.person.user_id);
  assert.ok(removed.includes(stranger.id));
  assert.ok(!removed.includes(companion.id) && !removed.includes(guest.id));
  assert.deepEqual(await memberEvents.next(), []);
  refused(await guest.get(`/users/${stranger.id}`), 'No such user');
  for (const v of viewers) await expectStateInSync(server, v, `limited (viewer ${v.client.id}, ${JSON.stringify(v.params)})`);
  const listed = ok(await guest.get('/users')).members.map((u: any) => u.user_id);
  assert.ok(listed.includes(companion.id) && !listed.includes(stranger.id));
  // Register lists an "Unknown user" in their place, unless the client accepts an incomplete list.
  const limited = ok(await guest.post('/register', { fetch_event_types: ['realm_user'] }));
  assert.equal(limited.realm_users.find((u: any) => u.user_id === stranger.id).full_name, 'Unknown user');
  await guest.delete('/events', { queue_id: limited.queue_id });

  ok(await owner.patch('/realm', { can_access_all_users_group: change(sys['role:everyone']) }));
  const added = (await guestEvents.next()).filter((e) => e.op === 'add').map((e) => e.person);
  const strangerAgain = added.find((p) => p.user_id === stranger.id);
  assert.equal(strangerAgain.full_name, 'Stran Ger');
  assert.deepEqual(strangerAgain.profile_data, {});
  assert.deepEqual(await memberEvents.next(), []);
  for (const v of viewers) await expectStateInSync(server, v, `everyone (viewer ${v.client.id}, ${JSON.stringify(v.params)})`);
  await guestEvents.close();
  await memberEvents.close();
  for (const v of viewers) await v.client.delete('/events', { queue_id: v.queueId });
});

test('changes take effect at once, also for clients whose credentials the server remembers', async () => {
  // A request first, so that the member's credentials (with the organization) are remembered.
  ok(await member.patch('/settings', { full_name: 'Mem Ber' }));
  ok(await admin.patch('/realm', { name_changes_disabled: true }));
  ok(await member.patch('/settings', { full_name: 'Someone Else' }));
  assert.equal(ok(await member.get('/users/me')).full_name, 'Mem Ber');
  ok(await admin.patch('/realm', { name_changes_disabled: false }));
  ok(await member.patch('/settings', { full_name: 'Mem Ber Renamed' }));
  assert.equal(ok(await member.get('/users/me')).full_name, 'Mem Ber Renamed');
  ok(await member.patch('/settings', { full_name: 'Mem Ber' }));
});
