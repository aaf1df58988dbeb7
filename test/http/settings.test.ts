// Personal settings: PATCH /settings (and its legacy aliases), the register
// sections and the events (digest section 2 "Settings", 3.3, section 4).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE, type Role } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { USER_SETTINGS, USER_SETTING_NAMES } from '../../src/users/settings.ts';
import { createUserAsOperator } from '../../src/users/actions.ts';

let server: TestServer;
let member: Client;
let other: Client;
before(async () => {
  server = await startTestServer();
  member = await server.createUser({ role: ROLE.MEMBER, email: 'member@example.com', fullName: 'Mem Ber' });
  other = await server.createUser({ role: ROLE.MEMBER, email: 'other@example.com', fullName: 'Oth Er' });
});
after(() => server.close());

async function register(c: Client, params: Record<string, unknown> = {}) {
  const res = await c.post('/register', params);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

async function eventsOf(c: Client, queueId: string) {
  const res = await c.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body.events as Record<string, unknown>[]).filter((e) => e.type !== 'heartbeat');
}

/** Organization settings as an administrator would set them (the change reaches cached credentials). */
async function setRealmSettings(settings: Record<string, unknown>) {
  await server.svc.db
    .updateTable('realms')
    .set({ settings: JSON.stringify(settings) })
    .where('id', '=', 1)
    .execute();
  server.svc.credentials.clear();
}

const userSettingsOf = async (c: Client) => (await register(c, { fetch_event_types: ['user_settings'] })).user_settings;

test('register: user_settings has every setting with its default, and the choices', async () => {
  const fresh = await server.createUser({ fullName: 'New Comer' });
  const s = await userSettingsOf(fresh);
  for (const name of USER_SETTING_NAMES) {
    if (name === 'timezone') continue;
    assert.deepEqual(s[name], USER_SETTINGS[name].default, name);
  }
  assert.equal(s.timezone, '');
  assert.equal(s.web_home_view, 'inbox');
  assert.equal(s.notification_sound, 'zulip');
  assert.equal(s.email_address_visibility, 1);
  assert.ok(s.available_notification_sounds.includes('ding'));
  assert.deepEqual(
    s.emojiset_choices.map((c: any) => c.key),
    ['google', 'twitter', 'text', 'google-blob'],
  );
  assert.deepEqual(Object.keys(s).sort(), [...USER_SETTING_NAMES, 'available_notification_sounds', 'emojiset_choices'].sort());
});

test('register: legacy top-level keys only without user_settings_object', async () => {
  const legacy = await register(member, { fetch_event_types: ['update_display_settings', 'update_global_notifications'] });
  assert.equal(legacy.twenty_four_hour_time, false);
  assert.equal(legacy.default_language, 'en');
  assert.equal(legacy.timezone, '');
  assert.equal(legacy.enable_desktop_notifications, true);
  assert.equal(legacy.presence_enabled, true);
  assert.ok(Array.isArray(legacy.emojiset_choices));
  assert.ok(Array.isArray(legacy.available_notification_sounds));
  // Settings newer than the object are not legacy keys.
  assert.equal('web_font_size_px' in legacy, false);
  assert.equal('user_settings' in legacy, false);

  const modern = await register(member, {
    fetch_event_types: ['update_display_settings', 'update_global_notifications', 'user_settings'],
    client_capabilities: { notification_settings_null: false, user_settings_object: true },
  });
  assert.equal('twenty_four_hour_time' in modern, false);
  assert.equal('enable_desktop_notifications' in modern, false);
  assert.equal(modern.user_settings.twenty_four_hour_time, false);
});

test('register: realm_user_settings_defaults are the defaults for new accounts', async () => {
  const state = await register(member, { fetch_event_types: ['realm_user_settings_defaults'] });
  const d = state.realm_user_settings_defaults;
  assert.equal(d.web_home_view, 'inbox');
  assert.equal(d.email_address_visibility, 1);
  assert.equal('timezone' in d, false);
  assert.ok(Array.isArray(d.available_notification_sounds));
  assert.ok(Array.isArray(d.emojiset_choices));
});

test('PATCH /settings changes any subset of settings, for every role', async () => {
  const roles: Role[] = [ROLE.GUEST, ROLE.MEMBER, ROLE.MODERATOR, ROLE.ADMINISTRATOR, ROLE.OWNER];
  for (const role of roles) {
    const c = await server.createUser({ role });
    const res = await c.patch('/settings', {
      twenty_four_hour_time: true,
      color_scheme: 2,
      emojiset: 'text',
      web_home_view: 'recent_topics',
      default_language: 'de',
      notification_sound: 'ding',
      email_notifications_batching_period_seconds: 300,
      web_font_size_px: 14,
      enable_sounds: false,
      web_animate_image_previews: 'never',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { result: 'success', msg: '' });
    const s = await userSettingsOf(c);
    assert.equal(s.twenty_four_hour_time, true);
    assert.equal(s.color_scheme, 2);
    assert.equal(s.emojiset, 'text');
    assert.equal(s.web_home_view, 'recent_topics');
    assert.equal(s.default_language, 'de');
    assert.equal(s.notification_sound, 'ding');
    assert.equal(s.email_notifications_batching_period_seconds, 300);
    assert.equal(s.web_font_size_px, 14);
    assert.equal(s.enable_sounds, false);
    assert.equal(s.web_animate_image_previews, 'never');
    // Untouched settings keep their defaults, and others' settings are untouched.
    assert.equal(s.enter_sends, false);
  }
  assert.equal((await userSettingsOf(other)).twenty_four_hour_time, false);
});

test('only what differs from the defaults is stored', async () => {
  const c = await server.createUser();
  await c.patch('/settings', { enter_sends: true, color_scheme: 3 });
  await c.patch('/settings', { color_scheme: 1 });
  const row = await server.svc.db.selectFrom('users').select('settings').where('id', '=', c.id).executeTakeFirstOrThrow();
  assert.equal(row.settings.enter_sends, true);
  assert.equal('color_scheme' in row.settings, false);
});

test('values are validated; a failed request changes nothing', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ color_scheme: 4 }, 'Invalid color_scheme'],
    [{ color_scheme: '"2"' }, 'color_scheme is not an integer'],
    [{ twenty_four_hour_time: 'yes' }, 'twenty_four_hour_time is not valid JSON'],
    [{ twenty_four_hour_time: 1 }, 'twenty_four_hour_time is not a boolean'],
    [{ emojiset: 'apple' }, 'Invalid emojiset'],
    [{ web_home_view: 'stream' }, 'Invalid web_home_view'],
    [{ web_animate_image_previews: 'sometimes' }, 'Invalid web_animate_image_previews'],
    [{ desktop_icon_count_display: 5 }, 'Invalid desktop_icon_count_display'],
    [{ email_address_visibility: 6 }, 'Invalid email_address_visibility'],
    [{ default_language: 'xx' }, 'Invalid default_language'],
    [{ notification_sound: 'gong' }, "Invalid notification sound 'gong'"],
    [{ timezone: 'Mars/Olympus' }, 'Not a recognized time zone'],
    [{ email_notifications_batching_period_seconds: 0 }, 'Invalid email batching period: 0 seconds'],
    [{ email_notifications_batching_period_seconds: 7 * 24 * 3600 + 1 }, 'Invalid email batching period: 604801 seconds'],
    [{ web_font_size_px: 0 }, 'web_font_size_px is too small'],
  ];
  for (const [params, msg] of cases) {
    // A valid change alongside: it must not be made either.
    const res = await member.patch('/settings', { enter_sends: true, ...params });
    assert.equal(res.status, 400, msg);
    assert.deepEqual(res.body, { result: 'error', msg, code: 'BAD_REQUEST' });
  }
  assert.equal((await userSettingsOf(member)).enter_sends, false);
  const ok = await member.patch('/settings', { notification_sound: 'none' });
  assert.equal(ok.status, 200);
});

test('unknown parameters are reported as ignored; the legacy paths are aliases', async () => {
  const c = await server.createUser();
  const res = await c.patch('/settings', { enter_sends: true, dense_mode: true, no_such_setting: 1 });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.ignored_parameters_unsupported, ['dense_mode', 'no_such_setting']);
  const display = await c.patch('/settings/display', { color_scheme: 3 });
  assert.deepEqual(display.body, { result: 'success', msg: '' });
  const notifications = await c.patch('/settings/notifications', { enable_sounds: false });
  assert.deepEqual(notifications.body, { result: 'success', msg: '' });
  const s = await userSettingsOf(c);
  assert.deepEqual([s.enter_sends, s.color_scheme, s.enable_sounds], [true, 3, false]);
  assert.equal((await server.anonymous.patch('/settings', { enter_sends: true })).status, 401);
});

test("bots may not change settings (the reference's human_users_only); nothing changes", async () => {
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const bot = await createUserAsOperator(server.svc, realm, {
    email: 'settings-bot@example.com',
    fullName: 'Set Bot',
    password: null,
    role: ROLE.MEMBER,
    isBot: true,
    botType: 1,
  });
  const botClient = await server.clientFor(bot.id);
  for (const path of ['/settings', '/settings/display', '/settings/notifications']) {
    const res = await botClient.patch(path, { full_name: 'Renamed Bot', enter_sends: true, timezone: 'Europe/Paris' });
    assert.equal(res.status, 400, path);
    assert.deepEqual(res.body, { result: 'error', msg: 'This endpoint does not accept bot requests.', code: 'BAD_REQUEST' });
  }
  const row = await server.svc.db.selectFrom('users').select(['full_name', 'settings', 'timezone']).where('id', '=', bot.id).executeTakeFirstOrThrow();
  assert.equal(row.full_name, 'Set Bot');
  assert.equal(row.settings.enter_sends, undefined);
  assert.notEqual(row.timezone, 'Europe/Paris');
});

test('events: user_settings to the user only, with the legacy event for older clients', async () => {
  const c = await server.createUser({ fullName: 'Eve Nts' });
  const modern = await register(c, { client_capabilities: { notification_settings_null: false, user_settings_object: true } });
  const legacy = await register(c);
  const bystander = await register(other);
  await c.patch('/settings', { twenty_four_hour_time: true, enable_sounds: false, default_language: 'fr', web_font_size_px: 15 });

  const modernEvents = await eventsOf(c, modern.queue_id);
  assert.deepEqual(
    modernEvents.map(({ id: _id, ...e }) => e),
    [
      // In the order of the settings table, whatever the order of the request.
      { type: 'user_settings', op: 'update', property: 'twenty_four_hour_time', value: true },
      { type: 'user_settings', op: 'update', property: 'web_font_size_px', value: 15 },
      { type: 'user_settings', op: 'update', property: 'default_language', value: 'fr', language_name: 'français' },
      { type: 'user_settings', op: 'update', property: 'enable_sounds', value: false },
    ],
  );
  const legacyEvents = (await eventsOf(c, legacy.queue_id)).map(({ id: _id, ...e }) => e);
  const email = (await c.get('/users/me')).body.email;
  assert.deepEqual(
    legacyEvents.filter((e) => e.type !== 'user_settings'),
    [
      { type: 'update_display_settings', user: email, setting_name: 'twenty_four_hour_time', setting: true },
      { type: 'update_display_settings', user: email, setting_name: 'default_language', setting: 'fr', language_name: 'français' },
      { type: 'update_global_notifications', user: email, notification_name: 'enable_sounds', setting: false },
    ],
  );
  assert.equal(legacyEvents.filter((e) => e.type === 'user_settings').length, 4);
  assert.deepEqual(await eventsOf(other, bystander.queue_id), []);

  // An unchanged value sends nothing.
  const again = await register(c);
  await c.patch('/settings', { twenty_four_hour_time: true });
  assert.deepEqual(await eventsOf(c, again.queue_id), []);
});

test('state stays in sync for modern and legacy clients', async () => {
  const c = await server.createUser({ fullName: 'Sta Te' });
  const viewers = [
    await registerViewer(server, c),
    await registerViewer(server, c, { client_capabilities: { notification_settings_null: false, user_settings_object: true } }),
    await registerViewer(server, c, { fetch_event_types: ['update_display_settings', 'update_global_notifications', 'user_settings'] }),
    await registerViewer(server, other),
  ];
  const steps: Record<string, unknown>[] = [
    { color_scheme: 2, enable_digest_emails: false, timezone: 'Europe/Berlin' },
    { default_language: 'ja', user_list_style: 1, presence_enabled: false },
    { email_address_visibility: 4, full_name: 'Sta Te Two' },
    { email_address_visibility: 1, presence_enabled: true, enable_drafts_synchronization: false },
  ];
  for (const step of steps) {
    const res = await c.patch('/settings', step);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    for (const v of viewers) await expectStateInSync(server, v, `after ${JSON.stringify(step)}`);
  }
});

test('timezone: stored canonical, shown in the user object, announced to everyone', async () => {
  const c = await server.createUser({ fullName: 'Time Zone' });
  const watcher = await register(other, { event_types: ['realm_user'] });
  const res = await c.patch('/settings', { timezone: 'Asia/Kolkata' });
  assert.equal(res.status, 200);
  assert.equal((await c.get('/users/me')).body.timezone, 'Asia/Kolkata');
  assert.equal((await userSettingsOf(c)).timezone, 'Asia/Kolkata');
  const events = await eventsOf(other, watcher.queue_id);
  assert.deepEqual(
    events.map(({ id: _id, ...e }) => e),
    [{ type: 'realm_user', op: 'update', person: { user_id: c.id, email: c.email, timezone: 'Asia/Kolkata' } }],
  );
  // Zone names are matched without regard to case.
  assert.equal((await c.patch('/settings', { timezone: 'utc' })).status, 200);
  assert.equal((await userSettingsOf(c)).timezone, 'UTC');
});

test('full_name: checked, announced, and refused silently where the organization disables name changes', async () => {
  const c = await server.createUser({ fullName: 'Old Name' });
  const watcher = await register(other, { event_types: ['realm_user'] });
  const res = await c.patch('/settings', { full_name: '  New Name  ' });
  assert.equal(res.status, 200);
  assert.equal((await c.get('/users/me')).body.full_name, 'New Name');
  assert.deepEqual(
    (await eventsOf(other, watcher.queue_id)).map(({ id: _id, ...e }) => e),
    [{ type: 'realm_user', op: 'update', person: { user_id: c.id, full_name: 'New Name' } }],
  );
  for (const [name, msg] of [
    ['x', 'Name too short!'],
    ['Bad*Name', 'Invalid characters in name!'],
    ['y'.repeat(101), 'Name too long!'],
  ]) {
    const bad = await c.patch('/settings', { full_name: name, enter_sends: true });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.msg, msg);
  }
  assert.equal((await userSettingsOf(c)).enter_sends, false);

  await setRealmSettings({ name_changes_disabled: true });
  try {
    const admin = await server.createUser({ role: ROLE.ADMINISTRATOR, fullName: 'Ad Min' });
    for (const role of [ROLE.GUEST, ROLE.MEMBER, ROLE.MODERATOR]) {
      const u = await server.createUser({ role, fullName: 'Fixed Name' });
      const r = await u.patch('/settings', { full_name: 'Changed Name', enter_sends: true });
      assert.equal(r.status, 200);
      assert.equal((await u.get('/users/me')).body.full_name, 'Fixed Name', `role ${role}`);
      // The rest of the request still applies.
      assert.equal((await userSettingsOf(u)).enter_sends, true);
    }
    assert.equal((await admin.patch('/settings', { full_name: 'Ad Min Two' })).status, 200);
    assert.equal((await admin.get('/users/me')).body.full_name, 'Ad Min Two');
    assert.equal((await server.owner.patch('/settings', { full_name: 'Own Er' })).status, 200);
    assert.equal((await server.owner.get('/users/me')).body.full_name, 'Own Er');
  } finally {
    await setRealmSettings({});
  }
});

test('password: the old one is required, the new one must be strong, failures are limited', async () => {
  const c = await server.createUser({ email: 'pw@example.com', password: 'first-password' });
  const wrong = await c.patch('/settings', { old_password: 'nope-nope', new_password: 'second-password' });
  assert.deepEqual(wrong.body, { result: 'error', msg: 'Wrong password!', code: 'BAD_REQUEST' });
  const missing = await c.patch('/settings', { new_password: 'second-password' });
  assert.equal(missing.body.msg, 'Wrong password!');
  const weak = await c.patch('/settings', { old_password: 'first-password', new_password: '123' });
  assert.equal(weak.body.msg, 'New password is too weak!');
  const login = (password: string) => server.anonymous.post('/fetch_api_key', { username: 'pw@example.com', password });
  assert.equal((await login('first-password')).status, 200);

  const ok = await c.patch('/settings', { old_password: 'first-password', new_password: 'second-password' });
  assert.deepEqual(ok.body, { result: 'success', msg: '' });
  assert.equal((await login('first-password')).status, 401);
  assert.equal((await login('second-password')).status, 200);
  // The API key still works.
  assert.equal((await c.get('/users/me')).status, 200);

  // Wrong old passwords count with failed logins; past the limit even the right one waits.
  for (let i = 0; i < server.config.rateLimit.loginFailures; i++) await c.patch('/settings', { old_password: 'bad', new_password: 'third-password' });
  const limited = await c.patch('/settings', { old_password: 'second-password', new_password: 'third-password' });
  assert.equal(limited.status, 400);
  assert.match(limited.body.msg, /^You're making too many attempts! Try again in \d+ seconds\.$/);
  await server.svc.rateLimiter.reset('login:1:pw@example.com');
  assert.equal((await login('second-password')).status, 200);
});

test('email: checked, then confirmed by the new address (the link is tested in email.test.ts)', async () => {
  const c = await server.createUser({ email: 'mail@example.com' });
  assert.equal((await c.patch('/settings', { email: 'mail@example.com' })).status, 200);
  const invalid = await c.patch('/settings', { email: 'not an email' });
  assert.equal(invalid.body.msg, 'Invalid address.');
  const taken = await c.patch('/settings', { email: 'OTHER@example.com' });
  assert.equal(taken.body.msg, 'Email is already in use.');
  const asked = await c.patch('/settings', { email: 'new-mail@example.com', enter_sends: true });
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  // Unchanged until the new address confirms; the other settings change at once.
  assert.equal((await c.get('/users/me')).body.delivery_email, 'mail@example.com');
  assert.equal((await userSettingsOf(c)).enter_sends, true);
  const mail = (await server.outbox()).find((m) => m.to === 'new-mail@example.com');
  assert.ok(mail, 'a confirmation email to the new address');
  assert.match(mail.text, /http:\/\/confab\.test\/accounts\/confirm_new_email\/[A-Za-z0-9]+/);

  await setRealmSettings({ email_changes_disabled: true });
  try {
    const disabled = await c.patch('/settings', { email: 'new-mail@example.com' });
    assert.equal(disabled.body.msg, 'Email address changes are disabled in this organization.');
    const admin = await server.createUser({ role: ROLE.ADMINISTRATOR });
    assert.equal((await admin.patch('/settings', { email: 'admin-new@example.com' })).status, 200);
  } finally {
    await setRealmSettings({});
  }
});

test('email_address_visibility: the API email and who sees the real one follow the setting', async () => {
  const c = await server.createUser({ email: 'private@example.com', fullName: 'Pri Vate' });
  const admin = await server.createUser({ role: ROLE.ADMINISTRATOR, fullName: 'Vis Admin' });
  const moderator = await server.createUser({ role: ROLE.MODERATOR, fullName: 'Vis Moderator' });
  const guest = await server.createUser({ role: ROLE.GUEST, fullName: 'Vis Guest' });
  const viewers = [
    await registerViewer(server, c),
    await registerViewer(server, admin),
    await registerViewer(server, moderator),
    await registerViewer(server, other),
    await registerViewer(server, guest),
    await registerViewer(server, other, { client_svcavatar: false }),
  ];
  const fake = `user${c.id}@confab.test`;
  const seen = async (viewer: Client) => (await viewer.get(`/users/${c.id}`)).body.user;

  // 3: administrators only.
  assert.equal((await c.patch('/settings', { email_address_visibility: 3 })).status, 200);
  for (const v of viewers) await expectStateInSync(server, v, 'admins only');
  assert.equal((await seen(other)).email, fake);
  assert.equal((await seen(other)).delivery_email, null);
  assert.equal((await seen(admin)).delivery_email, 'private@example.com');
  assert.equal((await seen(moderator)).delivery_email, null);
  assert.equal((await c.get('/users/me')).body.email, fake);
  // The fake address authenticates like the real one.
  const byFake = await (await server.clientFor(c.id)).get('/users/me');
  assert.equal(byFake.status, 200);

  // 5 (moderators), 2 (members), 4 (nobody), back to 1 (everyone).
  for (const [visibility, visibleTo] of [
    [5, [admin, moderator]],
    [2, [admin, moderator, other]],
    [4, []],
  ] as [number, Client[]][]) {
    assert.equal((await c.patch('/settings', { email_address_visibility: visibility })).status, 200);
    for (const v of viewers) await expectStateInSync(server, v, `visibility ${visibility}`);
    for (const viewer of [admin, moderator, other, guest]) {
      const user = await seen(viewer);
      assert.equal(user.email, fake);
      assert.equal(user.delivery_email, visibleTo.includes(viewer) ? 'private@example.com' : null, `${visibility}`);
    }
  }
  assert.equal((await c.patch('/settings', { email_address_visibility: 1 })).status, 200);
  for (const v of viewers) await expectStateInSync(server, v, 'everyone');
  assert.equal((await seen(guest)).email, 'private@example.com');
  assert.equal((await seen(guest)).delivery_email, 'private@example.com');
});
