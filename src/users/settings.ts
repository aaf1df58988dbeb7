// Personal settings: one table of every user setting in the reference (name,
// type, allowed values, default). `users.settings` holds only what differs from
// these defaults; `timezone` lives in its own column (users.timezone).

import { badRequest } from '../http/errors.ts';

export const EMAIL_ADDRESS_VISIBILITY = {
  EVERYONE: 1,
  MEMBERS: 2,
  ADMINS: 3,
  NOBODY: 4,
  MODERATORS: 5,
} as const;

export function emailAddressVisibility(settings: Record<string, unknown>): number {
  const v = settings.email_address_visibility;
  return typeof v === 'number' ? v : EMAIL_ADDRESS_VISIBILITY.EVERYONE;
}

export type SettingValue = boolean | number | string;

export interface UserSettingSpec {
  kind: 'bool' | 'int' | 'str';
  default: SettingValue;
  /** The only values allowed (enumerations); anything else is "Invalid <name>". */
  values?: readonly (number | string)[];
  /** Bounds of an integer setting. */
  min?: number;
  max?: number;
  /** Further checks of a value; throws the API's error. */
  check?: (value: any) => void;
  /**
   * The setting predates the `user_settings` object (feature level 89): clients
   * without `user_settings_object` also see it as a top-level register key and
   * get the matching legacy event.
   */
  legacy?: 'display' | 'notification';
}

/** Sound names clients may choose (plus "none"). */
export const AVAILABLE_NOTIFICATION_SOUNDS = ['chime', 'ding', 'zulip'] as const;

export const EMOJISET_CHOICES = [
  { key: 'google', text: 'Google' },
  { key: 'twitter', text: 'Twitter' },
  { key: 'text', text: 'Plain text' },
  { key: 'google-blob', text: 'Google blobs' },
] as const;

/** Language codes a user may choose, with the name events report as `language_name`. */
export const LANGUAGES: Record<string, string> = {
  ar: 'العربيّة',
  bg: 'български',
  ca: 'català',
  cs: 'čeština',
  de: 'Deutsch',
  el: 'Ελληνικά',
  en: 'English',
  'en-gb': 'British English',
  es: 'español',
  fa: 'فارسی',
  fi: 'suomi',
  fr: 'français',
  hi: 'हिन्दी',
  hu: 'magyar',
  id: 'Bahasa Indonesia',
  it: 'italiano',
  ja: '日本語',
  ko: '한국어',
  lt: 'lietuvių',
  nl: 'Nederlands',
  pl: 'polski',
  pt: 'português',
  'pt-br': 'português (Brasil)',
  ro: 'română',
  ru: 'Русский',
  sv: 'svenska',
  tr: 'Türkçe',
  uk: 'українська',
  vi: 'Tiếng Việt',
  'zh-hans': '简体中文',
  'zh-hant': '繁體中文',
};

const MAX_EMAIL_BATCHING_SECONDS = 7 * 24 * 3600;

/**
 * A valid IANA zone name in its usual spelling ("utc" -> "UTC"), or undefined.
 * Names are kept as given otherwise: the platform's own canonical names are the
 * older ones (it reads "Asia/Kolkata" as "Asia/Calcutta").
 */
export function canonicalTimezone(name: string): string | undefined {
  if (name.trim() === '') return undefined;
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    return resolved.toLowerCase() === name.toLowerCase() ? resolved : name;
  } catch {
    return undefined;
  }
}

const bool = (value: boolean, legacy?: UserSettingSpec['legacy']): UserSettingSpec => ({ kind: 'bool', default: value, legacy });
const oneOf = <V extends number | string>(values: readonly V[], value: V, legacy?: UserSettingSpec['legacy']): UserSettingSpec => ({
  kind: typeof value === 'number' ? 'int' : 'str',
  default: value,
  values,
  legacy,
});

/** Every personal setting, in the reference's order, with Zulip's defaults. */
export const USER_SETTINGS = {
  twenty_four_hour_time: bool(false, 'display'),
  web_mark_read_on_scroll_policy: oneOf([1, 2, 3], 1),
  web_channel_default_view: oneOf([1, 2], 1),
  starred_message_counts: bool(true, 'display'),
  receives_typing_notifications: bool(true),
  web_suggest_update_timezone: bool(true),
  fluid_layout_width: bool(false, 'display'),
  high_contrast_mode: bool(false, 'display'),
  web_font_size_px: { kind: 'int', default: 16, min: 1, max: 32767 },
  web_line_height_percent: { kind: 'int', default: 140, min: 1, max: 32767 },
  color_scheme: oneOf([1, 2, 3], 1, 'display'),
  translate_emoticons: bool(false, 'display'),
  display_emoji_reaction_users: bool(true),
  default_language: {
    kind: 'str',
    default: 'en',
    legacy: 'display',
    check: (v: string) => {
      if (!Object.hasOwn(LANGUAGES, v)) throw badRequest('Invalid default_language');
    },
  },
  web_home_view: oneOf(['recent_topics', 'inbox', 'all_messages'], 'inbox', 'display'),
  web_escape_navigates_to_home_view: bool(true),
  left_side_userlist: bool(false, 'display'),
  emojiset: oneOf(['google', 'google-blob', 'twitter', 'text'], 'google', 'display'),
  demote_inactive_streams: oneOf([1, 2, 3], 1, 'display'),
  user_list_style: oneOf([1, 2, 3], 3),
  web_animate_image_previews: oneOf(['always', 'on_hover', 'never'], 'on_hover'),
  web_stream_unreads_count_display_policy: oneOf([1, 2, 3], 2),
  hide_ai_features: bool(false),
  timezone: {
    kind: 'str',
    default: '',
    legacy: 'display',
    check: (v: string) => {
      if (canonicalTimezone(v) === undefined) throw badRequest('Not a recognized time zone');
    },
  },
  enter_sends: bool(false, 'display'),
  enable_drafts_synchronization: bool(true, 'display'),
  enable_stream_desktop_notifications: bool(false, 'notification'),
  enable_stream_email_notifications: bool(false, 'notification'),
  enable_stream_push_notifications: bool(false, 'notification'),
  enable_stream_audible_notifications: bool(false, 'notification'),
  notification_sound: {
    kind: 'str',
    default: 'zulip',
    legacy: 'notification',
    check: (v: string) => {
      if (v !== 'none' && !(AVAILABLE_NOTIFICATION_SOUNDS as readonly string[]).includes(v)) {
        throw badRequest(`Invalid notification sound '${v}'`);
      }
    },
  },
  enable_desktop_notifications: bool(true, 'notification'),
  enable_sounds: bool(true, 'notification'),
  enable_followed_topic_desktop_notifications: bool(true),
  enable_followed_topic_email_notifications: bool(true),
  enable_followed_topic_push_notifications: bool(true),
  enable_followed_topic_audible_notifications: bool(true),
  email_notifications_batching_period_seconds: {
    kind: 'int',
    default: 120,
    legacy: 'notification',
    check: (v: number) => {
      if (v <= 0 || v > MAX_EMAIL_BATCHING_SECONDS) throw badRequest(`Invalid email batching period: ${v} seconds`);
    },
  },
  enable_offline_email_notifications: bool(true, 'notification'),
  enable_offline_push_notifications: bool(true, 'notification'),
  enable_online_push_notifications: bool(true, 'notification'),
  enable_digest_emails: bool(true, 'notification'),
  enable_marketing_emails: bool(true, 'notification'),
  enable_login_emails: bool(true, 'notification'),
  message_content_in_email_notifications: bool(true, 'notification'),
  pm_content_in_desktop_notifications: bool(true, 'notification'),
  wildcard_mentions_notify: bool(true, 'notification'),
  enable_followed_topic_wildcard_mentions_notify: bool(true),
  desktop_icon_count_display: oneOf([1, 2, 3, 4], 1, 'notification'),
  realm_name_in_email_notifications_policy: oneOf([1, 2, 3], 1, 'notification'),
  automatically_follow_topics_policy: oneOf([1, 2, 3, 4], 3),
  automatically_unmute_topics_in_muted_streams_policy: oneOf([1, 2, 3, 4], 2),
  automatically_follow_topics_where_mentioned: bool(true),
  presence_enabled: bool(true, 'notification'),
  send_private_typing_notifications: bool(true),
  send_stream_typing_notifications: bool(true),
  send_read_receipts: bool(true),
  allow_private_data_export: bool(false),
  email_address_visibility: oneOf(Object.values(EMAIL_ADDRESS_VISIBILITY), EMAIL_ADDRESS_VISIBILITY.EVERYONE),
  web_navigate_to_sent_message: bool(true),
} as const satisfies Record<string, UserSettingSpec>;

export type UserSettingName = keyof typeof USER_SETTINGS;
export type UserSettings = Record<UserSettingName, SettingValue>;

export const USER_SETTING_NAMES = Object.keys(USER_SETTINGS) as UserSettingName[];

/** The settings stored in a column of their own rather than in `users.settings`. */
export const COLUMN_SETTINGS: ReadonlySet<UserSettingName> = new Set(['timezone']);

const DEFAULTS = Object.freeze(Object.fromEntries(USER_SETTING_NAMES.map((n) => [n, USER_SETTINGS[n].default])) as UserSettings);

export function settingDefaults(): UserSettings {
  return { ...DEFAULTS };
}

/** A user's every setting: the stored differences over the defaults. */
export function userSettings(user: { settings: Record<string, unknown>; timezone: string }): UserSettings {
  // A send asks this of every recipient: copy the defaults once, then walk only what is stored (a few keys).
  const values = settingDefaults();
  for (const name in user.settings) {
    if (!Object.hasOwn(USER_SETTINGS, name) || COLUMN_SETTINGS.has(name as UserSettingName)) continue;
    const stored = user.settings[name];
    if (stored !== undefined) values[name as UserSettingName] = stored as SettingValue;
  }
  values.timezone = user.timezone;
  return values;
}

/** What `users.settings` stores: the values that differ from the defaults (other keys kept). */
export function storedSettings(previous: Record<string, unknown>, values: Partial<UserSettings>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...previous };
  for (const [name, value] of Object.entries(values) as [UserSettingName, SettingValue][]) {
    if (COLUMN_SETTINGS.has(name)) continue;
    if (value === USER_SETTINGS[name].default) delete out[name];
    else out[name] = value;
  }
  return out;
}

/** The settings with their legacy group ('display' or 'notification'). */
export function legacySettings(group: 'display' | 'notification'): UserSettingName[] {
  return USER_SETTING_NAMES.filter((n) => (USER_SETTINGS[n] as UserSettingSpec).legacy === group);
}
