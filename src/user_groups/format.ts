// The User group object of the API (GET /user_groups, register's
// realm_user_groups, user_group/add events).

import type { Executor } from '../db/schema.ts';
import { directMemberIds, directSubgroupIds, groupSettingValues, type GroupSettingValue } from './group-setting.ts';
import type { GroupPermission } from './permission-settings.ts';
import { GROUP_SETTING_NAMES, settingColumn, type UserGroupRow } from './queries.ts';

export type ApiUserGroup = {
  id: number;
  name: string;
  description: string;
  members: number[];
  direct_subgroup_ids: number[];
  is_system_group: boolean;
  creator_id: number | null;
  date_created: number | null;
  deactivated: boolean;
} & Record<GroupPermission, GroupSettingValue>;

/** API objects for these group rows, in id order. */
export async function formatGroups(db: Executor, groups: UserGroupRow[]): Promise<ApiUserGroup[]> {
  const ids = groups.map((g) => g.id);
  const settingIds = groups.flatMap((g) => GROUP_SETTING_NAMES.map((s) => g[settingColumn(s)]).filter((id): id is number => id !== null));
  const [members, subgroups, values] = await Promise.all([directMemberIds(db, ids), directSubgroupIds(db, ids), groupSettingValues(db, settingIds)]);
  return [...groups]
    .sort((a, b) => a.id - b.id)
    .map((g) => {
      const settings = Object.fromEntries(GROUP_SETTING_NAMES.map((s) => [s, values.get(g[settingColumn(s)]!)])) as Record<GroupPermission, GroupSettingValue>;
      return {
        id: g.id,
        name: g.name!,
        description: g.description,
        members: members.get(g.id)!,
        direct_subgroup_ids: subgroups.get(g.id)!,
        is_system_group: g.is_system_group,
        creator_id: g.creator_id,
        date_created: g.date_created === null ? null : Math.floor(g.date_created.getTime() / 1000),
        deactivated: g.deactivated,
        ...settings,
      };
    });
}

/** Every named group of the organization (deactivated ones only when asked for). */
export async function listGroups(db: Executor, realmId: number, opts: { includeDeactivated: boolean }): Promise<ApiUserGroup[]> {
  let q = db.selectFrom('user_groups').selectAll().where('realm_id', '=', realmId).where('name', 'is not', null);
  if (!opts.includeDeactivated) q = q.where('deactivated', '=', false);
  return formatGroups(db, await q.execute());
}
