// Who may do what with a user group (digest 1.3, 1.24, section 2). A group is
// managed by the organization's `can_manage_all_groups` and the group's own
// `can_manage_group`; membership changes also follow the group's join, leave,
// add and remove settings. System groups change only with roles.

import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { badRequest, insufficientPermission } from '../http/errors.ts';
import { userGroupIds } from './group-setting.ts';
import { GROUP_PERMISSION_SETTINGS, REALM_PERMISSION_SETTINGS, hasPermission, type GroupPermission, type RealmPermission } from './permission-settings.ts';
import { getNamedGroup, settingColumn, type UserGroupRow } from './queries.ts';

export async function hasRealmPermission(db: Executor, realm: Realm, user: User, setting: RealmPermission, groups?: Set<number>): Promise<boolean> {
  return hasPermission(db, user, REALM_PERMISSION_SETTINGS[setting], realm.group_settings[setting], groups);
}

/** A named group of the organization, as a reader sees it: deactivated groups only where allowed. */
export async function accessGroup(
  db: Executor,
  realm: Realm,
  groupId: number,
  opts: { allowDeactivated?: boolean; forUpdate?: boolean } = {},
): Promise<UserGroupRow> {
  const group = await getNamedGroup(db, realm.id, groupId, { forUpdate: opts.forUpdate });
  if (!group) throw badRequest('Invalid user group');
  if (group.deactivated && !opts.allowDeactivated) throw badRequest('User group is deactivated.');
  return group;
}

/**
 * The group, locked for the rest of the transaction, if `user` may change it:
 * managers may do everything; otherwise one of `permissions` (e.g. can_join_group
 * for joining) must admit the user.
 */
export async function accessGroupForUpdate(
  db: Executor,
  realm: Realm,
  user: User,
  groupId: number,
  permissions: GroupPermission[],
  opts: { allowDeactivated?: boolean } = {},
): Promise<UserGroupRow> {
  const group = await accessGroup(db, realm, groupId, { ...opts, forUpdate: true });
  if (group.is_system_group) throw insufficientPermission();
  const groups = await userGroupIds(db, user.id);
  if (await hasRealmPermission(db, realm, user, 'can_manage_all_groups', groups)) return group;
  for (const setting of ['can_manage_group', ...permissions] as GroupPermission[]) {
    if (await hasPermission(db, user, GROUP_PERMISSION_SETTINGS[setting], group[settingColumn(setting)]!, groups)) return group;
  }
  throw insufficientPermission();
}
