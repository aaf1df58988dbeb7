// What PATCH /realm accepts for each organization setting an administrator may
// change (the reference's update_realm): the parameter's type, the values it may
// take, and which settings only owners may change. The action (settings-actions.ts)
// applies them; the route declares these parameters.

import { z } from 'zod';
import { p, type Param } from '../http/params.ts';
import { badRequest, badValue } from '../http/errors.ts';
import { LANGUAGES } from '../users/settings.ts';
import { groupSettingChangeSchema, type GroupSettingChange } from '../user_groups/group-setting.ts';
import { REALM_PERMISSION_SETTINGS, type RealmPermission } from '../user_groups/permission-settings.ts';
import {
  DIGEST_WEEKDAYS,
  EDIT_HISTORY_VISIBILITY_POLICIES,
  GIPHY_RATING_OPTIONS,
  ORG_TYPES,
  REALM_TOPICS_POLICIES,
  VIDEO_CHAT_PROVIDERS,
  type RealmSettingName,
} from './settings.ts';
import { requireOwnerFor } from '../users/access.ts';
import type { User } from '../users/tables.ts';

const flag = () => p.bool().optional();
/** A number, or a word for a special value ("unlimited"), as JSON. */
const numberOrWord = () => p.json(z.union([z.int(), z.string()])).optional();
const oneOf = (values: readonly number[]) =>
  p
    .int()
    .map((v, name) => {
      if (!values.includes(v)) throw badRequest(`Invalid ${name}`);
      return v;
    })
    .optional();

/** Every scalar setting PATCH /realm changes, with its parameter. */
export const SETTING_PARAMS = {
  allow_message_editing: flag(),
  avatar_changes_disabled: flag(),
  default_code_block_language: p.str().optional(),
  default_language: p.str().optional(),
  digest_emails_enabled: flag(),
  digest_weekday: oneOf(DIGEST_WEEKDAYS),
  disallow_disposable_email_addresses: flag(),
  email_changes_disabled: flag(),
  emails_restricted_to_domains: flag(),
  enable_guest_user_dm_warning: flag(),
  enable_guest_user_indicator: flag(),
  enable_read_receipts: flag(),
  enable_spectator_access: flag(),
  giphy_rating: p.int().optional(),
  inline_image_preview: flag(),
  inline_url_embed_preview: flag(),
  invite_required: flag(),
  jitsi_server_url: p.json(z.string()).optional(),
  message_content_allowed_in_email_notifications: flag(),
  message_content_delete_limit_seconds: numberOrWord(),
  message_content_edit_limit_seconds: numberOrWord(),
  message_edit_history_visibility_policy: p.choice(EDIT_HISTORY_VISIBILITY_POLICIES).optional(),
  message_retention_days: numberOrWord(),
  moderation_request_channel_id: p.int().optional(),
  move_messages_between_streams_limit_seconds: numberOrWord(),
  move_messages_within_stream_limit_seconds: numberOrWord(),
  name_changes_disabled: flag(),
  new_stream_announcements_stream_id: p.int().optional(),
  org_type: oneOf(ORG_TYPES),
  require_unique_names: flag(),
  send_welcome_emails: flag(),
  signup_announcements_stream_id: p.int().optional(),
  topics_policy: p.choice(REALM_TOPICS_POLICIES).optional(),
  video_chat_provider: p.int().optional(),
  waiting_period_threshold: p.int(z.int().min(0)).optional(),
  want_advertise_in_communities_directory: flag(),
  zulip_update_announcements_stream_id: p.int().optional(),
} satisfies Partial<Record<RealmSettingName, Param<any, true>>>;

export type ChangeableSetting = keyof typeof SETTING_PARAMS;

/** Settings that name a channel (-1: none). */
export const CHANNEL_SETTINGS = [
  'moderation_request_channel_id',
  'new_stream_announcements_stream_id',
  'signup_announcements_stream_id',
  'zulip_update_announcements_stream_id',
] as const satisfies readonly ChangeableSetting[];

/** Settings (scalar or group) that only owners may change, whatever the new value. */
export const OWNER_ONLY_SETTINGS: ReadonlySet<string> = new Set([
  'can_create_groups',
  'can_invite_users_group',
  'can_manage_all_groups',
  'can_manage_billing_group',
  'create_multiuse_invite_group',
  'disallow_disposable_email_addresses',
  'emails_restricted_to_domains',
  'invite_required',
  'message_retention_days',
  'waiting_period_threshold',
]);

/**
 * A positive integer, or one of the special words (Zulip's time-limit and
 * retention parsing); anything else is "Bad value for 'X': v".
 */
export function positiveOrSpecial<T>(value: unknown, name: string, special: Record<string, T>): number | T {
  if (typeof value === 'string' && Object.hasOwn(special, value)) return special[value];
  if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  throw badValue(name, value);
}

const JITSI_URL_MAX_LENGTH = 200;

/** `jitsi_server_url`: "default" (the server's, null) or an http(s) URL. */
function checkJitsiUrl(value: string): string | null {
  if (value === 'default') return null;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || value.length > JITSI_URL_MAX_LENGTH) {
    throw badRequest('jitsi_server_url is not an allowed_type');
  }
  return value;
}

const idsOf = (options: Record<string, { id: number }>) => Object.values(options).map((o) => o.id);

/**
 * The checks beyond types, in the reference's order (owners-only settings among
 * them: `names` are all the settings asked for), and each parameter turned into
 * the value stored (e.g. "unlimited" -> null).
 */
export function settingValues(
  given: Partial<Record<ChangeableSetting, unknown>>,
  names: readonly string[],
  actor: Pick<User, 'role'>,
): Partial<Record<ChangeableSetting, unknown>> {
  const language = given.default_language;
  if (typeof language === 'string' && !Object.hasOwn(LANGUAGES, language)) throw badRequest(`Invalid language '${language}'`);
  const provider = given.video_chat_provider;
  if (typeof provider === 'number' && !idsOf(VIDEO_CHAT_PROVIDERS).includes(provider)) throw badRequest(`Invalid video_chat_provider ${provider}`);
  const rating = given.giphy_rating;
  if (typeof rating === 'number' && !idsOf(GIPHY_RATING_OPTIONS).includes(rating)) throw badRequest(`Invalid giphy_rating ${rating}`);
  requireOwnerFor(actor, names, OWNER_ONLY_SETTINGS);
  const values: Partial<Record<ChangeableSetting, unknown>> = { ...given };
  for (const name of [
    'message_content_delete_limit_seconds',
    'message_content_edit_limit_seconds',
    'move_messages_between_streams_limit_seconds',
    'move_messages_within_stream_limit_seconds',
  ] as const) {
    if (given[name] !== undefined) values[name] = positiveOrSpecial(given[name], name, { unlimited: null });
  }
  if (given.message_retention_days !== undefined) {
    values.message_retention_days = positiveOrSpecial(given.message_retention_days, 'message_retention_days', { unlimited: -1 });
  }
  if (typeof given.jitsi_server_url === 'string') values.jitsi_server_url = checkJitsiUrl(given.jitsi_server_url);
  return values;
}

/** Every permission setting, as `{"new": value, "old"?: value}`. */
export const GROUP_SETTING_PARAMS = Object.fromEntries(
  Object.keys(REALM_PERMISSION_SETTINGS).map((name) => [name, p.json(groupSettingChangeSchema).optional()]),
) as Record<RealmPermission, Param<GroupSettingChange, true>>;
