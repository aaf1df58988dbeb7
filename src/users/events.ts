// The events of users and their settings (digest 3.3), as actions emit them.

import type { SettingValue, UserSettingName } from './settings.ts';

/**
 * A user in a realm_user event: the whole user (add), or the user's id and the
 * facet that changed (update: one facet per event, as the reference sends them).
 */
export interface Person {
  user_id: number;
  full_name?: string;
  email?: string;
  new_email?: string;
  delivery_email?: string | null;
  role?: number;
  is_active?: boolean;
  timezone?: string;
  bot_owner_id?: number | null;
  avatar_url?: string | null;
  avatar_source?: string;
  avatar_url_medium?: string;
  avatar_version?: number;
  custom_profile_field?: { id: number; value: string | null; rendered_value?: string };
  [key: string]: unknown;
}

export type RealmUserEvent =
  | { type: 'realm_user'; op: 'add' | 'update'; person: Person }
  | { type: 'realm_user'; op: 'remove'; person: { user_id: number; full_name: string } };

export interface UserSettingsEvent {
  type: 'user_settings';
  op: 'update';
  property: UserSettingName;
  value: SettingValue;
  language_name?: string;
}

/** The forms of user_settings for clients without user_settings_object (events/shape.ts picks them). */
export type LegacySettingsEvent =
  | { type: 'update_display_settings'; user: string; setting_name: UserSettingName; setting: SettingValue; language_name?: string }
  | { type: 'update_global_notifications'; user: string; notification_name: UserSettingName; setting: SettingValue };

/** To administrators: who allows a private data export. */
export interface RealmExportConsentEvent {
  type: 'realm_export_consent';
  user_id: number;
  consented: boolean;
}

export type UsersEvent = RealmUserEvent | UserSettingsEvent | LegacySettingsEvent | RealmExportConsentEvent;
