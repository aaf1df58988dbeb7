// Register's personal-settings sections: `user_settings` (the object), the
// legacy top-level keys of `update_display_settings` and
// `update_global_notifications` (only for clients without
// `user_settings_object`), and the organization's `realm_user_settings_defaults`.

import { once, type RegisterContext, type StateSection } from '../events/state.ts';
import { settingsOf } from '../realm/queries.ts';
import { getUser } from './queries.ts';
import {
  AVAILABLE_NOTIFICATION_SOUNDS,
  EMOJISET_CHOICES,
  legacySettings,
  settingDefaults,
  userSettings,
  type SettingValue,
  type UserSettingName,
  type UserSettings,
} from './settings.ts';

/** The caller's settings; spectators see the organization's defaults. */
async function settingsFor(ctx: RegisterContext): Promise<UserSettings> {
  if (!ctx.user) return organizationDefaults(ctx);
  // Read afresh: the authenticated row may be a few seconds old (credential cache).
  const user = await once(ctx, 'user:fresh', () => getUser(ctx.svc.db, ctx.realm.id, ctx.user!.id));
  return userSettings(user ?? ctx.user);
}

function organizationDefaults(ctx: RegisterContext): UserSettings {
  return { ...settingDefaults(), email_address_visibility: settingsOf(ctx.realm).default_email_address_visibility };
}

const choices = () => ({
  available_notification_sounds: [...AVAILABLE_NOTIFICATION_SOUNDS],
  emojiset_choices: EMOJISET_CHOICES.map((c) => ({ ...c })),
});

type Choices = ReturnType<typeof choices>;

const userSettingsSection: StateSection<{ user_settings: UserSettings & Choices }> = {
  types: ['user_settings'],
  async fetch(ctx) {
    return { user_settings: { ...(await settingsFor(ctx)), ...choices() } };
  },
  apply(state, event) {
    if (event.type === 'user_settings' && event.op === 'update') state.user_settings[event.property] = event.value;
  },
};

/** The legacy top-level settings of one group, and its choices; nothing for clients with user_settings_object. */
type LegacyState = Partial<Record<UserSettingName, SettingValue> & Choices>;

function legacySection(type: 'update_display_settings' | 'update_global_notifications'): StateSection<LegacyState> {
  const group = type === 'update_display_settings' ? 'display' : 'notification';
  const names = legacySettings(group);
  return {
    types: [type],
    async fetch(ctx) {
      if (ctx.capabilities.user_settings_object) return {};
      const values = await settingsFor(ctx);
      const state: LegacyState = Object.fromEntries(names.map((n) => [n, values[n]]));
      if (group === 'display') state.emojiset_choices = choices().emojiset_choices;
      else state.available_notification_sounds = choices().available_notification_sounds;
      return state;
    },
    apply(state, event, ctx) {
      if (ctx.capabilities.user_settings_object || event.type !== type) return;
      const name = event.type === 'update_display_settings' ? event.setting_name : event.notification_name;
      state[name] = event.setting;
    },
  };
}

/** Read-only: the defaults new accounts start with. */
const realmDefaultsSection: StateSection<{ realm_user_settings_defaults: Omit<UserSettings, 'timezone'> & Choices }> = {
  types: ['realm_user_settings_defaults'],
  async fetch(ctx) {
    const { timezone: _timezone, ...defaults } = organizationDefaults(ctx);
    return { realm_user_settings_defaults: { ...defaults, ...choices() } };
  },
};

export const settingsSections: readonly StateSection[] = [
  userSettingsSection,
  legacySection('update_display_settings'),
  legacySection('update_global_notifications'),
  realmDefaultsSection,
];
