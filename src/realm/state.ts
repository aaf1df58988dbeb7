// Register's `realm` section: every organization setting as `realm_<name>`, the
// permission settings as group-setting values, and the server's limits.

import type { StateSection } from '../events/state.ts';
import type { RealmEvent } from './events.ts';
import { GIPHY_RATING_OPTIONS, REALM_SETTING_DEFAULTS, VIDEO_CHAT_PROVIDERS } from './settings.ts';
import { realmHost, realmIconUrl, realmLogoUrl, realmUrl, settingsOf } from './queries.ts';
import { SERVER_THUMBNAIL_FORMATS } from '../uploads/images.ts';
import { groupSettingValues, registerSystemGroupIds, type GroupSettingValue } from '../user_groups/group-setting.ts';
import { REALM_PERMISSION_SETTINGS, supportedPermissionSettings, type RealmPermission } from '../user_groups/permission-settings.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../events/shape.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../users/validation.ts';
import type { SystemGroupName } from '../user_groups/system-groups.ts';
import { SERVER_GENERATION } from '../version.ts';

/** Text bounds clients read from register (digest section 4). */
export const TEXT_BOUNDS = {
  max_message_length: 10000,
  max_topic_length: 60,
  max_stream_name_length: 60,
  max_stream_description_length: 1024,
  max_channel_folder_name_length: 60,
  max_channel_folder_description_length: 1024,
  max_reminder_note_length: 1000,
} as const;

/** Server-wide values in the `realm` section. */
const SERVER_FACTS = {
  ...TEXT_BOUNDS,
  max_bulk_new_subscription_messages: 100,
  max_file_upload_size_mib: 25,
  max_avatar_file_size_mib: 5,
  max_icon_file_size_mib: 5,
  max_logo_file_size_mib: 5,
  password_min_length: PASSWORD_MIN_LENGTH,
  password_max_length: PASSWORD_MAX_LENGTH,
  password_min_guesses: 10000,
  event_queue_longpoll_timeout_seconds: 90,
  server_presence_ping_interval_seconds: 60,
  server_presence_offline_threshold_seconds: 200,
  server_typing_started_expiry_period_milliseconds: 45000,
  server_typing_stopped_wait_period_milliseconds: 12000,
  server_typing_started_wait_period_milliseconds: 30000,
  server_needs_upgrade: false,
  server_inline_image_preview: true,
  server_inline_url_embed_preview: true,
  server_avatar_changes_disabled: false,
  server_name_changes_disabled: false,
  server_web_public_streams_enabled: true,
  server_can_summarize_topics: false,
  server_jitsi_server_url: null,
  server_min_deactivated_realm_deletion_days: null,
  server_max_deactivated_realm_deletion_days: null,
  server_thumbnail_formats: SERVER_THUMBNAIL_FORMATS,
  server_emoji_data_url: '/static/generated/emoji/emoji_api.json',
  settings_send_digest_emails: false,
  development_environment: false,
  zulip_plan_is_not_limited: true,
  upgrade_text_for_wide_organization_logo: '',
  jitsi_server_url: 'https://meet.jit.si',
  giphy_rating_options: GIPHY_RATING_OPTIONS,
  realm_available_video_chat_providers: VIDEO_CHAT_PROVIDERS,
  realm_default_external_accounts: {
    github: { name: 'GitHub', text: 'GitHub username', hint: '', url_pattern: 'https://github.com/%(username)s' },
    twitter: { name: 'Twitter', text: 'Twitter username', hint: '', url_pattern: 'https://twitter.com/%(username)s' },
  },
};

/** Legacy numeric policies, derived from the group settings that replaced them. */
const CREATE_POLICY: Partial<Record<SystemGroupName, number>> = {
  'role:members': 1,
  'role:everyone': 1,
  'role:administrators': 2,
  'role:owners': 2,
  'role:fullmembers': 3,
  'role:moderators': 4,
  'role:nobody': 2,
};
const WILDCARD_POLICY: Partial<Record<SystemGroupName, number>> = {
  'role:everyone': 1,
  'role:members': 2,
  'role:fullmembers': 3,
  'role:administrators': 5,
  'role:owners': 5,
  'role:nobody': 6,
  'role:moderators': 7,
};

/** Each legacy policy: the group setting it is derived from, its table, and its value for groups not in the table. */
const LEGACY_POLICIES: Record<string, [RealmPermission, Partial<Record<SystemGroupName, number>>, number]> = {
  realm_create_public_stream_policy: ['can_create_public_channel_group', CREATE_POLICY, 1],
  realm_create_private_stream_policy: ['can_create_private_channel_group', CREATE_POLICY, 1],
  realm_create_web_public_stream_policy: ['can_create_web_public_channel_group', CREATE_POLICY, 2],
  realm_wildcard_mention_policy: ['can_mention_many_users_group', WILDCARD_POLICY, 5],
};

/** System group names by id, read at fetch for apply. */
const SYSTEM_NAMES = 'realm:systemGroupNames';

/** The legacy policies that follow from `values` (group-setting values by setting). */
function legacyPolicies(values: Partial<Record<RealmPermission, GroupSettingValue>>, names: Record<number, SystemGroupName>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, [setting, table, otherwise]] of Object.entries(LEGACY_POLICIES)) {
    if (!(setting in values)) continue;
    const value = values[setting];
    // A group that is not a system group reads as "members", as the reference's conversion did.
    const name = (typeof value === 'number' ? names[value] : undefined) ?? 'role:members';
    out[key] = table[name] ?? otherwise;
  }
  return out;
}

/** `realm_<setting>` for every setting, and the server's facts: keys made from the settings' names. */
type RealmState = Record<string, unknown>;

export const realmSection: StateSection<RealmState> = {
  types: ['realm'],
  async fetch(ctx) {
    const { svc, realm } = ctx;
    const settings = settingsOf(realm);
    const scalar: Record<string, unknown> = {};
    for (const key of Object.keys(REALM_SETTING_DEFAULTS)) {
      if (key === 'default_email_address_visibility') continue;
      scalar[`realm_${key}`] = settings[key as keyof typeof settings];
    }
    const groupIds = realm.group_settings;
    const values = await groupSettingValues(svc.db, Object.values(groupIds));
    const groupValues: Partial<Record<RealmPermission, GroupSettingValue>> = {};
    const groupSettings: Record<string, unknown> = {};
    for (const name of Object.keys(REALM_PERMISSION_SETTINGS) as RealmPermission[]) {
      groupValues[name] = values.get(groupIds[name]);
      groupSettings[`realm_${name}`] = groupValues[name];
    }
    const system = await registerSystemGroupIds(ctx);
    const names = Object.fromEntries(Object.entries(system).map(([name, id]) => [id, name])) as Record<number, SystemGroupName>;
    ctx.cache.set(SYSTEM_NAMES, names);
    const url = realmUrl(realm, svc.config);
    return {
      ...SERVER_FACTS,
      ...scalar,
      ...groupSettings,
      realm_name: realm.name,
      // The Markdown source, as the reference sends it (GET /server_settings has the HTML).
      realm_description: realm.description,
      realm_date_created: Math.floor(realm.date_created.getTime() / 1000),
      realm_url: url,
      realm_uri: url,
      realm_bot_domain: realmHost(realm, svc.config),
      realm_icon_url: realmIconUrl(realm),
      realm_icon_source: realm.icon_source,
      realm_logo_url: realmLogoUrl(realm, false),
      realm_logo_source: realm.logo_source,
      realm_night_logo_url: realmLogoUrl(realm, true),
      realm_night_logo_source: realm.night_logo_source,
      max_file_upload_size_mib: svc.config.maxFileUploadMib,
      realm_allow_edit_history: settings.message_edit_history_visibility_policy !== 'none',
      realm_email_auth_enabled: settings.password_auth_enabled,
      realm_authentication_methods: {
        Email: { enabled: settings.password_auth_enabled, available: true },
        Dev: { enabled: false, available: false },
        LDAP: { enabled: false, available: false },
      },
      realm_is_zephyr_mirror_realm: false,
      realm_empty_topic_display_name: EMPTY_TOPIC_DISPLAY_NAME,
      ...legacyPolicies(groupValues, names),
      server_supported_permission_settings: supportedPermissionSettings(),
      server_generation: SERVER_GENERATION,
    };
  },
  apply(state, event, ctx) {
    if (event.type !== 'realm') return;
    const changed = realmEventChanges(event);
    for (const [k, v] of Object.entries(changed)) state[`realm_${k}`] = v;
    // What register derives from the settings follows them.
    if ('message_edit_history_visibility_policy' in changed) state.realm_allow_edit_history = changed.message_edit_history_visibility_policy !== 'none';
    const names = ctx.cache.get(SYSTEM_NAMES) as Record<number, SystemGroupName> | undefined;
    if (names) Object.assign(state, legacyPolicies(changed as Partial<Record<RealmPermission, GroupSettingValue>>, names));
  },
};

/** The settings a `realm` event changes, whether it carries one (`update`) or several (`update_dict`). */
export function realmEventChanges(event: RealmEvent): Record<string, unknown> {
  if (event.op === 'update') return { [event.property]: event.value };
  if (event.op === 'update_dict') return event.data;
  return {};
}
