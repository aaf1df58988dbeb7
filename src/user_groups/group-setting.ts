// The group-setting value (spec "Group-setting value"): every `can_*_group`
// permission is either the id of a named user group or an anonymous set of
// users and groups. Both are stored as a user_groups row: an anonymous value is a
// row without a name, replaced whenever the setting changes.
//
// `userGroupIds` + `isUserInGroup` are the one way the server answers "may this user
// do this": every permission check goes through them.

import { isRowId } from '../db/ids.ts';
import { z } from 'zod';
import { sql } from 'kysely';
import type { Executor } from '../db/schema.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import type { SystemGroupName } from './system-groups.ts';
import { once, type RegisterContext } from '../events/state.ts';

export type GroupSettingValue = number | { direct_members: number[]; direct_subgroups: number[] };

export const groupSettingValueSchema: z.ZodType<GroupSettingValue> = z.union([
  z.int(),
  z.object({ direct_members: z.array(z.int()), direct_subgroups: z.array(z.int()) }),
]);

/** The `{new, old?}` form used when a setting is updated. */
export const groupSettingChangeSchema = z.object({ new: groupSettingValueSchema, old: groupSettingValueSchema.optional() });
export type GroupSettingChange = z.infer<typeof groupSettingChangeSchema>;

/**
 * Every group that contains the user, directly or through subgroups: a set to
 * test permission settings against. Deactivated users belong to nothing.
 */
export async function userGroupIds(db: Executor, userId: number): Promise<Set<number>> {
  const rows = await userGroupIdsQuery(userId).execute(db);
  return new Set(rows.rows.map((r) => r.id));
}

/** The query of userGroupIds, for a caller that reads more in the same statement (as a subquery). */
export function userGroupIdsQuery(userId: number) {
  return sql<{ id: number }>`
    with recursive up(id) as (
      select m.group_id from user_group_members m join users u on u.id = m.user_id
      where m.user_id = ${userId} and u.is_active
      union
      select s.supergroup_id from user_group_subgroups s join up on s.subgroup_id = up.id
    )
    select id from up`;
}

/** Whether the user is in the group that holds a setting's value. */
export async function isUserInGroup(db: Executor, userId: number, groupId: number): Promise<boolean> {
  return (await userGroupIds(db, userId)).has(groupId);
}

/** Active users in a group, recursively: who a setting's value admits. */
export async function groupMemberIds(db: Executor, groupId: number): Promise<number[]> {
  const rows = await sql<{ user_id: number }>`
    with recursive down(id) as (
      select ${groupId}::integer
      union
      select s.subgroup_id from user_group_subgroups s join down on s.supergroup_id = down.id
    )
    select distinct m.user_id from user_group_members m
    join down on m.group_id = down.id
    join users u on u.id = m.user_id and u.is_active
    order by m.user_id`.execute(db);
  return rows.rows.map((r) => r.user_id);
}

export async function systemGroupIds(db: Executor, realmId: number): Promise<Record<SystemGroupName, number>> {
  const rows = await db.selectFrom('user_groups').select(['id', 'name']).where('realm_id', '=', realmId).where('is_system_group', '=', true).execute();
  return Object.fromEntries(rows.map((r) => [r.name, r.id])) as Record<SystemGroupName, number>;
}

/** The register caller's userGroupIds, read once per register call: several sections test them. */
export function viewerGroupIds(ctx: RegisterContext): Promise<Set<number>> {
  return once(ctx, 'groups:viewer', () => userGroupIds(ctx.svc.db, ctx.user!.id));
}

/** systemGroupIds, read once per register call. */
export function registerSystemGroupIds(ctx: RegisterContext): Promise<Record<SystemGroupName, number>> {
  return once(ctx, 'groups:system', () => systemGroupIds(ctx.svc.db, ctx.realm.id));
}

/** Direct members of each group, active users only, by id. */
export async function directMemberIds(db: Executor, groupIds: number[]): Promise<Map<number, number[]>> {
  const result = new Map<number, number[]>(groupIds.map((id) => [id, []]));
  if (groupIds.length === 0) return result;
  // A row per group, not per member: system groups hold the whole organization.
  const rows = await db
    .selectFrom('user_group_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.group_id', sql<number[]>`json_agg(m.user_id order by m.user_id)`.as('user_ids')])
    .where('m.group_id', 'in', groupIds)
    .where('u.is_active', '=', true)
    .groupBy('m.group_id')
    .execute();
  for (const r of rows) result.set(r.group_id, r.user_ids);
  return result;
}

/** Direct subgroups of each group, by id. */
export async function directSubgroupIds(db: Executor, groupIds: number[]): Promise<Map<number, number[]>> {
  const result = new Map<number, number[]>(groupIds.map((id) => [id, []]));
  if (groupIds.length === 0) return result;
  const rows = await db
    .selectFrom('user_group_subgroups')
    .select(['supergroup_id', 'subgroup_id'])
    .where('supergroup_id', 'in', groupIds)
    .orderBy('subgroup_id')
    .execute();
  for (const r of rows) result.get(r.supergroup_id)!.push(r.subgroup_id);
  return result;
}

/**
 * The API form of the value a setting's group holds. Deactivated users belong to no group
 * (feature level 303): `direct_members` names active users only, in every setting (user groups,
 * channels, the organization); the stored value keeps them, for a reactivation.
 */
export async function groupSettingValue(db: Executor, groupId: number): Promise<GroupSettingValue> {
  return (await groupSettingValues(db, [groupId])).get(groupId)!;
}

/** The API form of many settings at once (one query each for names, members, subgroups). */
export async function groupSettingValues(db: Executor, groupIds: number[]): Promise<Map<number, GroupSettingValue>> {
  const result = new Map<number, GroupSettingValue>();
  if (groupIds.length === 0) return result;
  const ids = [...new Set(groupIds)];
  const groups = await db.selectFrom('user_groups').select(['id', 'name']).where('id', 'in', ids).execute();
  const anonymous = groups.filter((g) => g.name === null).map((g) => g.id);
  for (const g of groups) if (g.name !== null) result.set(g.id, g.id);
  const [members, subgroups] = await Promise.all([directMemberIds(db, anonymous), directSubgroupIds(db, anonymous)]);
  for (const id of anonymous) result.set(id, { direct_members: members.get(id)!, direct_subgroups: subgroups.get(id)! });
  return result;
}

/** What a permission setting accepts, beyond "some group of this organization". */
export interface GroupSettingRules {
  allowInternet?: boolean;
  allowEveryone?: boolean;
  allowNobody?: boolean;
  allowOwners?: boolean;
  /** Only system groups (`SYSTEM_GROUP_REQUIRED` otherwise). */
  requireSystemGroup?: boolean;
  /** Where set, the only system groups the setting may name. */
  allowedSystemGroups?: readonly SystemGroupName[];
}

type Normalized = { groupId: number } | { members: number[]; subgroups: number[] };

/**
 * A named group of the organization that may be used (in a value, as a subgroup):
 * "Invalid user group ID: N" or "User group is deactivated." otherwise.
 */
export async function checkUsableGroup(db: Executor, realmId: number, id: number, opts: { allowDeactivated?: boolean } = {}): Promise<void> {
  if (!isRowId(id)) throw badRequest(`Invalid user group ID: ${id}`);
  const group = await db
    .selectFrom('user_groups')
    .select(['id', 'name', 'deactivated'])
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    // A group being deactivated meanwhile waits for this transaction (and sees the new use).
    .forShare()
    .executeTakeFirst();
  if (!group || group.name === null) throw badRequest(`Invalid user group ID: ${id}`);
  if (group.deactivated && !opts.allowDeactivated) throw badRequest('User group is deactivated.');
}

/** The distinct ids, sorted, if each is an active user of the organization ("Invalid user ID: N" otherwise). */
export async function checkActiveUserIds(db: Executor, realmId: number, ids: number[]): Promise<number[]> {
  const unique = [...new Set(ids)].sort((a, b) => a - b);
  if (unique.length === 0) return unique;
  const outOfRange = ids.find((m) => !isRowId(m));
  if (outOfRange !== undefined) throw badRequest(`Invalid user ID: ${outOfRange}`);
  const found = await db.selectFrom('users').select('id').where('realm_id', '=', realmId).where('id', 'in', unique).where('is_active', '=', true).execute();
  const missing = ids.find((m) => !found.some((f) => f.id === m));
  if (missing !== undefined) throw badRequest(`Invalid user ID: ${missing}`);
  return unique;
}

/**
 * Validates an API value and reduces it to its simplest form: an anonymous set
 * that names one group and no users is that group; an empty set is role:nobody.
 */
async function normalize(db: Executor, realmId: number, value: GroupSettingValue, forComparison = false): Promise<Normalized> {
  // A value that still names a since-deactivated group compares equal to itself.
  const checkGroup = (id: number) => checkUsableGroup(db, realmId, id, { allowDeactivated: forComparison });
  if (typeof value === 'number') {
    await checkGroup(value);
    return { groupId: value };
  }
  const subgroups = [...new Set(value.direct_subgroups)].sort((a, b) => a - b);
  for (const id of subgroups) await checkGroup(id);
  const members = await checkActiveUserIds(db, realmId, value.direct_members);
  if (members.length === 0 && subgroups.length === 1) return { groupId: subgroups[0] };
  if (members.length === 0 && subgroups.length === 0) {
    return { groupId: (await systemGroupIds(db, realmId))['role:nobody'] };
  }
  return { members, subgroups };
}

async function checkRules(db: Executor, realmId: number, n: Normalized, setting: string, rules: GroupSettingRules) {
  const system = await systemGroupIds(db, realmId);
  const nameOf = Object.fromEntries(Object.entries(system).map(([name, id]) => [id, name])) as Record<number, SystemGroupName>;
  const refused = (name: string) => badRequest(`'${setting}' setting cannot be set to '${name}' group.`);
  if ('groupId' in n) {
    const name = nameOf[n.groupId];
    if (rules.requireSystemGroup && !name) {
      throw new ApiError('SYSTEM_GROUP_REQUIRED', `'${setting}' must be a system user group.`, { data: { setting_name: setting } });
    }
    if (name === 'role:internet' && !rules.allowInternet) throw refused(name);
    if (name === 'role:everyone' && rules.allowEveryone === false) throw refused(name);
    if (name === 'role:nobody' && rules.allowNobody === false) throw refused(name);
    if (name === 'role:owners' && rules.allowOwners === false) throw refused(name);
    if (name && rules.allowedSystemGroups && !rules.allowedSystemGroups.includes(name)) throw refused(name);
    return;
  }
  if (rules.requireSystemGroup) {
    throw new ApiError('SYSTEM_GROUP_REQUIRED', `'${setting}' must be a system user group.`, { data: { setting_name: setting } });
  }
  for (const id of n.subgroups) {
    const name = nameOf[id];
    if (name === 'role:internet' && !rules.allowInternet) throw refused(name);
    if (name === 'role:everyone' && rules.allowEveryone === false) throw refused(name);
  }
}

/**
 * Stores a new value for a setting and returns the group id to keep in the
 * setting's column. The previous anonymous group, if any, must be dropped by the
 * caller with `dropIfAnonymous` once nothing points at it.
 */
export async function storeGroupSettingValue(
  tx: Executor,
  realmId: number,
  value: GroupSettingValue,
  setting: string,
  rules: GroupSettingRules = {},
): Promise<number> {
  const n = await normalize(tx, realmId, value);
  await checkRules(tx, realmId, n, setting, rules);
  if ('groupId' in n) return n.groupId;
  const { id } = await tx
    .insertInto('user_groups')
    .values({ realm_id: realmId, name: null, creator_id: null, date_created: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (n.members.length > 0) {
    await tx
      .insertInto('user_group_members')
      .values(n.members.map((user_id) => ({ realm_id: realmId, group_id: id, user_id })))
      .execute();
  }
  if (n.subgroups.length > 0) {
    await tx
      .insertInto('user_group_subgroups')
      .values(n.subgroups.map((subgroup_id) => ({ realm_id: realmId, supergroup_id: id, subgroup_id })))
      .execute();
  }
  return id;
}

/** Removes an anonymous value's group after the setting moved away from it. */
export async function dropIfAnonymous(tx: Executor, groupId: number): Promise<void> {
  await tx.deleteFrom('user_groups').where('id', '=', groupId).where('name', 'is', null).execute();
}

/** Whether `expected` (an API value) denotes the same thing the setting holds now. */
export async function settingValueEquals(db: Executor, realmId: number, currentGroupId: number, expected: GroupSettingValue): Promise<boolean> {
  const current = await groupSettingValue(db, currentGroupId);
  let n: Normalized;
  try {
    n = await normalize(db, realmId, expected, true);
  } catch {
    return false;
  }
  // The current value as clients see it, reduced the same way: a set whose users were all
  // deactivated may now name one group, or nobody.
  let c: Normalized;
  if (typeof current === 'number') c = { groupId: current };
  else if (current.direct_members.length > 0 || current.direct_subgroups.length > 1)
    c = { members: current.direct_members, subgroups: current.direct_subgroups };
  else c = { groupId: current.direct_subgroups[0] ?? (await systemGroupIds(db, realmId))['role:nobody'] };
  if ('groupId' in n || 'groupId' in c) return 'groupId' in n && 'groupId' in c && c.groupId === n.groupId;
  return JSON.stringify(c) === JSON.stringify(n);
}

export function expectationMismatch(): ApiError {
  return new ApiError('EXPECTATION_MISMATCH', "'old' value does not match the expected value.");
}
