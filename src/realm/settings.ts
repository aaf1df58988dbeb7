// Organization settings: the defaults of every scalar setting and of every
// permission (group) setting. A realm row stores only what differs.

import type { SystemGroupName } from '../user_groups/system-groups.ts';

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

/** Permission settings of an organization and the system group each starts as. */
export const REALM_GROUP_SETTING_DEFAULTS = {
  can_access_all_users_group: 'role:everyone',
  can_add_custom_emoji_group: 'role:members',
  can_add_subscribers_group: 'role:members',
  can_create_bots_group: 'role:members',
  can_create_groups: 'role:members',
  can_create_private_channel_group: 'role:members',
  can_create_public_channel_group: 'role:members',
  can_create_web_public_channel_group: 'role:owners',
  can_create_write_only_bots_group: 'role:members',
  can_delete_any_message_group: 'role:administrators',
  can_delete_own_message_group: 'role:everyone',
  can_invite_users_group: 'role:members',
  can_manage_all_groups: 'role:owners',
  can_manage_billing_group: 'role:administrators',
  can_mention_many_users_group: 'role:administrators',
  can_move_messages_between_channels_group: 'role:members',
  can_move_messages_between_topics_group: 'role:everyone',
  can_resolve_topics_group: 'role:everyone',
  can_set_delete_message_policy_group: 'role:moderators',
  can_set_topics_policy_group: 'role:moderators',
  can_summarize_topics_group: 'role:everyone',
  create_multiuse_invite_group: 'role:administrators',
  direct_message_initiator_group: 'role:everyone',
  direct_message_permission_group: 'role:everyone',
} as const satisfies Record<string, SystemGroupName>;

export type RealmGroupSettingName = keyof typeof REALM_GROUP_SETTING_DEFAULTS;

export function realmSettings(stored: Record<string, unknown>): RealmSettings {
  return { ...REALM_SETTING_DEFAULTS, ...stored } as RealmSettings;
}
