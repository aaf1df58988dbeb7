// Every permission setting that holds a group-setting value, with the groups it
// may take and the group it starts as: one table for the organization's, the
// channels' and the user groups' settings. Validation (group-setting.ts), the
// permission check below and register's `server_supported_permission_settings`
// all read it.

import type { Executor } from '../db/schema.ts';
import type { User } from '../users/tables.ts';
import { roleAdmits } from '../users/access.ts';
import { userGroupIds, type GroupSettingRules } from './group-setting.ts';
import type { SystemGroupName } from './system-groups.ts';

export interface PermissionSetting {
  requireSystemGroup: boolean;
  allowInternet: boolean;
  allowNobody: boolean;
  /** False: guests never hold the permission, whatever the value says. */
  allowEveryone: boolean;
  allowOwners?: boolean;
  /** The starting value; 'creator' is an anonymous group of the creating user. */
  default: SystemGroupName | 'creator';
  /** For user-group settings: the value on system groups. */
  defaultForSystemGroups?: SystemGroupName;
  allowedSystemGroups?: SystemGroupName[];
}

const setting = (defaultGroup: PermissionSetting['default'], opts: Partial<Omit<PermissionSetting, 'default'>> = {}): PermissionSetting => ({
  requireSystemGroup: false,
  allowInternet: false,
  allowNobody: true,
  allowEveryone: false,
  ...opts,
  default: defaultGroup,
});

const everyone = { allowEveryone: true };

export const REALM_PERMISSION_SETTINGS = {
  can_access_all_users_group: setting('role:everyone', {
    requireSystemGroup: true,
    allowNobody: false,
    allowEveryone: true,
    allowedSystemGroups: ['role:everyone', 'role:members'],
  }),
  can_add_custom_emoji_group: setting('role:members'),
  can_add_subscribers_group: setting('role:members'),
  can_create_bots_group: setting('role:members'),
  can_create_groups: setting('role:members'),
  can_create_private_channel_group: setting('role:members'),
  can_create_public_channel_group: setting('role:members'),
  can_create_web_public_channel_group: setting('role:owners', {
    requireSystemGroup: true,
    allowedSystemGroups: ['role:moderators', 'role:administrators', 'role:owners', 'role:nobody'],
  }),
  can_create_write_only_bots_group: setting('role:members'),
  can_delete_any_message_group: setting('role:administrators'),
  can_delete_own_message_group: setting('role:everyone', everyone),
  can_invite_users_group: setting('role:members'),
  can_manage_all_groups: setting('role:owners', { allowNobody: false }),
  can_manage_billing_group: setting('role:administrators', { allowNobody: false }),
  can_mention_many_users_group: setting('role:administrators', everyone),
  can_move_messages_between_channels_group: setting('role:members'),
  can_move_messages_between_topics_group: setting('role:everyone', everyone),
  can_resolve_topics_group: setting('role:everyone', everyone),
  can_set_delete_message_policy_group: setting('role:moderators'),
  can_set_topics_policy_group: setting('role:members', everyone),
  can_summarize_topics_group: setting('role:everyone', everyone),
  create_multiuse_invite_group: setting('role:administrators'),
  direct_message_initiator_group: setting('role:everyone', everyone),
  direct_message_permission_group: setting('role:everyone', everyone),
} as const satisfies Record<string, PermissionSetting>;

export type RealmPermission = keyof typeof REALM_PERMISSION_SETTINGS;

export const CHANNEL_PERMISSION_SETTINGS = {
  can_add_subscribers_group: setting('role:nobody'),
  can_administer_channel_group: setting('creator'),
  can_delete_any_message_group: setting('role:nobody', everyone),
  can_delete_own_message_group: setting('role:nobody', everyone),
  can_move_messages_out_of_channel_group: setting('role:nobody'),
  can_move_messages_within_channel_group: setting('role:nobody', everyone),
  can_remove_subscribers_group: setting('role:administrators', everyone),
  can_resolve_topics_group: setting('role:nobody', everyone),
  can_send_message_group: setting('role:everyone', everyone),
  can_subscribe_group: setting('role:nobody'),
} as const satisfies Record<string, PermissionSetting>;

export type ChannelPermission = keyof typeof CHANNEL_PERMISSION_SETTINGS;

export const GROUP_PERMISSION_SETTINGS = {
  can_add_members_group: setting('creator', { defaultForSystemGroups: 'role:nobody' }),
  can_join_group: setting('role:nobody', { defaultForSystemGroups: 'role:nobody' }),
  can_leave_group: setting('role:everyone', { ...everyone, defaultForSystemGroups: 'role:nobody' }),
  can_manage_group: setting('creator', { defaultForSystemGroups: 'role:nobody' }),
  can_mention_group: setting('role:everyone', { ...everyone, allowOwners: false, defaultForSystemGroups: 'role:nobody' }),
  can_remove_members_group: setting('role:nobody', { defaultForSystemGroups: 'role:nobody' }),
} as const satisfies Record<string, PermissionSetting>;

export type GroupPermission = keyof typeof GROUP_PERMISSION_SETTINGS;

/** The validation rules of a setting, for storeGroupSettingValue. */
export function rulesOf(s: PermissionSetting): GroupSettingRules {
  return {
    requireSystemGroup: s.requireSystemGroup,
    allowInternet: s.allowInternet,
    allowNobody: s.allowNobody,
    allowEveryone: s.allowEveryone,
    allowOwners: s.allowOwners,
    allowedSystemGroups: s.allowedSystemGroups,
  };
}

/** Whether `user` holds a permission whose value is `groupId` (guests only where the setting admits everyone). */
export async function hasPermission(db: Executor, user: User, s: PermissionSetting, groupId: number, groups?: Set<number>): Promise<boolean> {
  if (!roleAdmits(user, s.allowEveryone)) return false;
  return (groups ?? (await userGroupIds(db, user.id))).has(groupId);
}

/** `server_supported_permission_settings` for register. */
export function supportedPermissionSettings() {
  const describe = (table: Record<string, PermissionSetting>) =>
    Object.fromEntries(
      Object.entries(table).map(([name, s]) => [
        name,
        {
          require_system_group: s.requireSystemGroup,
          allow_internet_group: s.allowInternet,
          allow_nobody_group: s.allowNobody,
          allow_everyone_group: s.allowEveryone,
          default_group_name: s.default === 'creator' ? 'group_creator' : s.default,
          default_for_system_groups: s.defaultForSystemGroups ?? null,
          allowed_system_groups: s.allowedSystemGroups ?? [],
        },
      ]),
    );
  return {
    realm: describe(REALM_PERMISSION_SETTINGS),
    stream: describe(CHANNEL_PERMISSION_SETTINGS),
    group: describe(GROUP_PERMISSION_SETTINGS),
  };
}
