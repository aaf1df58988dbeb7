// Register's `realm` section: every organization setting as `realm_<name>`, the
// permission settings as group-setting values, and the server's limits.

import type { StateSection } from '../events/state.ts';
import { REALM_SETTING_DEFAULTS } from './settings.ts';
import { realmHost, realmIconUrl, realmUrl, settingsOf } from './queries.ts';
import { renderHtml } from '../rendering/index.ts';
import { groupSettingValues, systemGroupIds } from '../user_groups/group-setting.ts';
import { REALM_PERMISSION_SETTINGS, supportedPermissionSettings } from '../user_groups/permission-settings.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../events/shape.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../users/validation.ts';
import type { SystemGroupName } from '../user_groups/system-groups.ts';

/** Text bounds clients read from register (digest section 4). */
export const TEXT_BOUNDS = {
  max_message_length: 10000,
  max_topic_length: 60,
  max_stream_name_length: 60,
  max_stream_description_length: 1024,
  max_channel_folder_name_length: 60,
  max_channel_folder_description_length: 1024,
} as const;

/** Server-wide values in the `realm` section. */
const SERVER_FACTS = {
  ...TEXT_BOUNDS,
  max_bulk_new_subscription_messages: 100,
  max_reminder_note_length: 1000,
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
  server_inline_url_embed_preview: false,
  server_avatar_changes_disabled: false,
  server_name_changes_disabled: false,
  server_web_public_streams_enabled: true,
  server_can_summarize_topics: false,
  server_jitsi_server_url: null,
  server_min_deactivated_realm_deletion_days: null,
  server_max_deactivated_realm_deletion_days: null,
  server_thumbnail_formats: [],
  server_emoji_data_url: '/static/generated/emoji/emoji_api.json',
  settings_send_digest_emails: false,
  development_environment: false,
  zulip_plan_is_not_limited: true,
  upgrade_text_for_wide_organization_logo: '',
  jitsi_server_url: 'https://meet.jit.si',
  giphy_rating_options: {
    disabled: { name: 'GIPHY integration disabled', id: -1 },
    y: { name: 'Allow GIFs rated Y (Very young audience)', id: 0 },
    g: { name: 'Allow GIFs rated G (General audience)', id: 1 },
    pg: { name: 'Allow GIFs rated PG (Parental guidance)', id: 2 },
    pg13: { name: 'Allow GIFs rated PG-13 (Parental guidance - under 13)', id: 3 },
    r: { name: 'Allow GIFs rated R (Restricted)', id: 4 },
  },
  realm_available_video_chat_providers: {
    disabled: { name: 'None', id: 0 },
    jitsi_meet: { name: 'Jitsi Meet', id: 1 },
  },
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

const SERVER_GENERATION = Math.floor(Date.now() / 1000);

export const realmSection: StateSection = {
  types: ['realm'],
  async fetch({ svc, realm }) {
    const settings = settingsOf(realm);
    const scalar: Record<string, unknown> = {};
    for (const key of Object.keys(REALM_SETTING_DEFAULTS)) {
      if (key === 'default_email_address_visibility') continue;
      scalar[`realm_${key}`] = settings[key as keyof typeof settings];
    }
    const groupIds = realm.group_settings;
    const values = await groupSettingValues(svc.db, Object.values(groupIds));
    const groupSettings: Record<string, unknown> = {};
    for (const name of Object.keys(REALM_PERMISSION_SETTINGS)) groupSettings[`realm_${name}`] = values.get(groupIds[name]);
    const system = await systemGroupIds(svc.db, realm.id);
    const nameOf = (setting: string) =>
      (Object.entries(system).find(([, id]) => id === groupIds[setting])?.[0] as SystemGroupName | undefined) ?? 'role:members';
    const url = realmUrl(realm, svc.config);
    return {
      ...SERVER_FACTS,
      ...scalar,
      ...groupSettings,
      realm_name: realm.name,
      realm_description: await renderHtml(svc, realm, realm.description),
      realm_date_created: Math.floor(realm.date_created.getTime() / 1000),
      realm_url: url,
      realm_uri: url,
      realm_bot_domain: realmHost(realm, svc.config),
      realm_icon_url: realmIconUrl(realm),
      realm_icon_source: 'G',
      realm_logo_url: '/static/images/logo/zulip-org-logo.svg',
      realm_logo_source: 'D',
      realm_night_logo_url: '/static/images/logo/zulip-org-logo.svg',
      realm_night_logo_source: 'D',
      realm_allow_edit_history: settings.message_edit_history_visibility_policy !== 'none',
      realm_email_auth_enabled: settings.password_auth_enabled,
      realm_authentication_methods: {
        Email: { enabled: settings.password_auth_enabled, available: true },
        Dev: { enabled: false, available: false },
        LDAP: { enabled: false, available: false },
      },
      realm_is_zephyr_mirror_realm: false,
      realm_empty_topic_display_name: EMPTY_TOPIC_DISPLAY_NAME,
      realm_create_public_stream_policy: CREATE_POLICY[nameOf('can_create_public_channel_group')] ?? 1,
      realm_create_private_stream_policy: CREATE_POLICY[nameOf('can_create_private_channel_group')] ?? 1,
      realm_create_web_public_stream_policy: CREATE_POLICY[nameOf('can_create_web_public_channel_group')] ?? 2,
      realm_wildcard_mention_policy: WILDCARD_POLICY[nameOf('can_mention_many_users_group')] ?? 5,
      server_supported_permission_settings: supportedPermissionSettings(),
      server_generation: SERVER_GENERATION,
    };
  },
  apply(state, event) {
    if (event.type !== 'realm') return;
    if (event.op === 'update') state[`realm_${event.property}`] = event.value;
    if (event.op === 'update_dict') {
      for (const [k, v] of Object.entries(event.data as Record<string, unknown>)) state[`realm_${k}`] = v;
    }
  },
};
