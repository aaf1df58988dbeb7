// Reads of user groups: named groups (system or created by users), their direct
// members (active users) and their subgroups, direct or recursive.

import { sql, type Selectable } from 'kysely';
import type { Executor } from '../db/schema.ts';
import type { UserGroupTable } from './tables.ts';
import { directMemberIds, directSubgroupIds, groupMemberIds } from './group-setting.ts';
import { GROUP_PERMISSION_SETTINGS, type GroupPermission } from './permission-settings.ts';

export type UserGroupRow = Selectable<UserGroupTable>;

/** The group permission settings in API order. */
export const GROUP_SETTING_NAMES = Object.keys(GROUP_PERMISSION_SETTINGS) as GroupPermission[];

/** The column that holds a group permission setting's group. */
export const settingColumn = (setting: GroupPermission) => `${setting}_id` as const;

/** A named group of the organization (anonymous setting values are not groups one can name). */
export async function getNamedGroup(db: Executor, realmId: number, groupId: number, opts: { forUpdate?: boolean } = {}): Promise<UserGroupRow | undefined> {
  let q = db.selectFrom('user_groups').selectAll().where('realm_id', '=', realmId).where('id', '=', groupId).where('name', 'is not', null);
  if (opts.forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function getNamedGroups(db: Executor, realmId: number, groupIds: number[]): Promise<UserGroupRow[]> {
  if (groupIds.length === 0) return [];
  return db.selectFrom('user_groups').selectAll().where('realm_id', '=', realmId).where('id', 'in', groupIds).where('name', 'is not', null).execute();
}

/** Another group of the organization with this name, compared without case. */
export async function groupNameTaken(db: Executor, realmId: number, name: string, exceptId?: number): Promise<boolean> {
  let q = db
    .selectFrom('user_groups')
    .select('id')
    .where('realm_id', '=', realmId)
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()));
  if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** Every group below the given ones (subgroups of subgroups too), not the given ones themselves unless reached. */
export async function recursiveSubgroupIds(db: Executor, groupIds: number[]): Promise<number[]> {
  if (groupIds.length === 0) return [];
  const rows = await sql<{ id: number }>`
    with recursive down(id) as (
      select subgroup_id from user_group_subgroups where supergroup_id in (${sql.join(groupIds)})
      union
      select s.subgroup_id from user_group_subgroups s join down on s.supergroup_id = down.id
    )
    select id from down order by id`.execute(db);
  return rows.rows.map((r) => r.id);
}

/** The groups a user is a direct member of: named ones, and anonymous setting values naming them. */
async function directGroupsOf(db: Executor, realmId: number, userId: number) {
  const rows = await db
    .selectFrom('user_group_members as m')
    .innerJoin('user_groups as g', 'g.id', 'm.group_id')
    .select(['g.id', 'g.name', 'g.deactivated'])
    .where('m.user_id', '=', userId)
    .where('g.realm_id', '=', realmId)
    .orderBy('g.id')
    .execute();
  return { named: rows.filter((r) => r.name !== null), anonymous: rows.filter((r) => r.name === null).map((r) => r.id) };
}

/**
 * The anonymous setting values (of groups, channels or the organization) that name the user
 * directly: the settings whose value changes when the user is deactivated or reactivated.
 */
export async function settingValuesNaming(db: Executor, realmId: number, userId: number): Promise<number[]> {
  return (await directGroupsOf(db, realmId, userId)).anonymous;
}

/**
 * The named groups a user is a direct member of, and the named groups whose
 * permission settings hold an anonymous value naming the user directly.
 */
export async function directMembershipsOf(db: Executor, realmId: number, userId: number) {
  const { named, anonymous } = await directGroupsOf(db, realmId, userId);
  const settingHolders = anonymous.length === 0 ? [] : await groupsWithSettingIn(db, realmId, anonymous);
  return { named, settingHolders };
}

/** Named groups whose permission settings point at one of `settingGroupIds`, with those settings. */
export async function groupsWithSettingIn(
  db: Executor,
  realmId: number,
  settingGroupIds: number[],
): Promise<{ group: UserGroupRow; settings: GroupPermission[] }[]> {
  if (settingGroupIds.length === 0) return [];
  const groups = await db
    .selectFrom('user_groups')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('name', 'is not', null)
    .where((eb) => eb.or(GROUP_SETTING_NAMES.map((s) => eb(settingColumn(s), 'in', settingGroupIds))))
    .orderBy('id')
    .execute();
  return groups.map((group) => ({
    group,
    settings: GROUP_SETTING_NAMES.filter((s) => settingGroupIds.includes(group[settingColumn(s)] as number)),
  }));
}

/** Active members of a group: direct ones, or also those of its subgroups (recursively). */
export async function memberIds(db: Executor, groupId: number, opts: { directOnly: boolean }): Promise<number[]> {
  if (opts.directOnly) return (await directMemberIds(db, [groupId])).get(groupId)!;
  return groupMemberIds(db, groupId);
}

/** Subgroups of a group: direct ones, or every group below it. */
export async function subgroupIds(db: Executor, groupId: number, opts: { directOnly: boolean }): Promise<number[]> {
  if (opts.directOnly) return (await directSubgroupIds(db, [groupId])).get(groupId)!;
  return recursiveSubgroupIds(db, [groupId]);
}
