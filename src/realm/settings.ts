// Organization settings: the defaults of every scalar setting. A realm row stores
// only what differs. Permission settings are in user_groups/permission-settings.ts.

/** Scalar settings, reported as `realm_<name>` by register. Values are Zulip's defaults. */
export const REALM_SETTING_DEFAULTS = {
  allow_message_editing: true,
  avatar_changes_disabled: false,
  default_code_block_language: '',
  default_language: 'en',
  digest_emails_enabled: false,
  digest_weekday: 1,
  disallow_disposable_email_addresses: true,
  email_changes_disabled: false,
  emails_restricted_to_domains: false,
  enable_guest_user_dm_warning: true,
  enable_guest_user_indicator: true,
  enable_read_receipts: false,
  enable_spectator_access: false,
  giphy_rating: 2,
  inline_image_preview: true,
  inline_url_embed_preview: false,
  invite_required: true,
  jitsi_server_url: null,
  mandatory_topics: false,
  message_content_allowed_in_email_notifications: true,
  message_content_delete_limit_seconds: null,
  message_content_edit_limit_seconds: 600,
  message_edit_history_visibility_policy: 'all',
  message_retention_days: -1,
  moderation_request_channel_id: -1,
  move_messages_between_streams_limit_seconds: 604800,
  move_messages_within_stream_limit_seconds: 604800,
  name_changes_disabled: false,
  name_in_email_notifications_policy: 1,
  new_stream_announcements_stream_id: -1,
  org_type: 0,
  password_auth_enabled: true,
  plan_type: 1,
  presence_disabled: false,
  push_notifications_enabled: false,
  push_notifications_enabled_end_timestamp: null,
  require_unique_names: false,
  send_welcome_emails: true,
  signup_announcements_stream_id: -1,
  topics_policy: 'allow_empty_topic',
  upload_quota_mib: null,
  video_chat_provider: 1,
  waiting_period_threshold: 0,
  want_advertise_in_communities_directory: false,
  zulip_update_announcements_stream_id: -1,
  /** How email addresses of new users are visible (1 everyone ... 5 moderators). */
  default_email_address_visibility: 1,
} as const satisfies Record<string, unknown>;

export type RealmSettingName = keyof typeof REALM_SETTING_DEFAULTS;
export type RealmSettings = { -readonly [K in RealmSettingName]: (typeof REALM_SETTING_DEFAULTS)[K] | any };

export function realmSettings(stored: Record<string, unknown>): RealmSettings {
  return { ...REALM_SETTING_DEFAULTS, ...stored } as RealmSettings;
}

export const MAX_REALM_DESCRIPTION_LENGTH = 1000;

/** GIPHY ratings an organization may choose (`giphy_rating` is an id), as the reference numbers them. */
export const GIPHY_RATING_OPTIONS = {
  disabled: { name: 'GIPHY integration disabled', id: 0 },
  y: { name: 'Allow GIFs rated Y (Very young audience)', id: 1 },
  g: { name: 'Allow GIFs rated G (General audience)', id: 2 },
  pg: { name: 'Allow GIFs rated PG (Parental guidance)', id: 3 },
  'pg-13': { name: 'Allow GIFs rated PG-13 (Parental guidance - under 13)', id: 4 },
  r: { name: 'Allow GIFs rated R (Restricted)', id: 5 },
} as const;

/** Video call providers this server offers (`video_chat_provider` is an id). */
export const VIDEO_CHAT_PROVIDERS = {
  disabled: { name: 'None', id: 0 },
  jitsi_meet: { name: 'Jitsi Meet', id: 1 },
} as const;

/** `org_type` values: unspecified, business, open source, education (non-profit, for-profit), research, event, non-profit, government, political group, community, personal, other. */
export const ORG_TYPES = [0, 10, 20, 30, 35, 40, 50, 60, 70, 80, 90, 100, 1000] as const;

/** `digest_weekday`: 0 = Monday ... 6 = Sunday. */
export const DIGEST_WEEKDAYS = [0, 1, 2, 3, 4, 5, 6] as const;

export const EDIT_HISTORY_VISIBILITY_POLICIES = ['all', 'moves', 'none'] as const;

/** The organization's `topics_policy` (channels may also say `inherit` or `empty_topic_only`). */
export const REALM_TOPICS_POLICIES = ['allow_empty_topic', 'disable_empty_topic'] as const;
