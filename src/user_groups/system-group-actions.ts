// Writes that keep the system groups in step with organizations and roles.

import type { Tx } from '../db/transact.ts';
import { SYSTEM_GROUPS, directSystemGroups, isFullMember, type SystemGroupName } from './system-groups.ts';
import { systemGroupIds } from './group-setting.ts';
import type { Role } from '../users/roles.ts';

/** Creates a new organization's system groups, each containing the next stricter one. */
export async function createSystemGroups(tx: Tx, realmId: number): Promise<Record<SystemGroupName, number>> {
  const ids = {} as Record<SystemGroupName, number>;
  const now = new Date();
  for (const g of SYSTEM_GROUPS) {
    const row = await tx
      .insertInto('user_groups')
      .values({ realm_id: realmId, name: g.name, description: g.description, is_system_group: true, creator_id: null, date_created: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids[g.name] = row.id;
  }
  for (const g of SYSTEM_GROUPS) {
    if (g.subgroup) {
      await tx.insertInto('user_group_subgroups').values({ realm_id: realmId, supergroup_id: ids[g.name], subgroup_id: ids[g.subgroup] }).execute();
    }
  }
  // A system group's own permissions are nobody's: it changes only with roles.
  await tx
    .updateTable('user_groups')
    .set({
      can_add_members_group_id: ids['role:nobody'],
      can_join_group_id: ids['role:nobody'],
      can_leave_group_id: ids['role:nobody'],
      can_manage_group_id: ids['role:nobody'],
      can_mention_group_id: ids['role:nobody'],
      can_remove_members_group_id: ids['role:nobody'],
    })
    .where('realm_id', '=', realmId)
    .where('is_system_group', '=', true)
    .execute();
  return ids;
}

/** Group ids a user joined and left (direct memberships). */
export interface MembershipChanges {
  added: number[];
  removed: number[];
}

/** Puts a user in exactly the system groups of their role; says which memberships changed. */
export async function syncSystemGroupMembership(
  tx: Tx,
  user: { id: number; realm_id: number; role: number; date_joined: Date },
  waitingPeriodDays: number,
): Promise<MembershipChanges> {
  const ids = await systemGroupIds(tx, user.realm_id);
  const allSystem = Object.values(ids);
  const before = await tx.deleteFrom('user_group_members').where('user_id', '=', user.id).where('group_id', 'in', allSystem).returning('group_id').execute();
  const groups = directSystemGroups(user.role as Role, isFullMember(user.date_joined, waitingPeriodDays));
  await tx
    .insertInto('user_group_members')
    .values(groups.map((g) => ({ realm_id: user.realm_id, group_id: ids[g], user_id: user.id })))
    .execute();
  const after = groups.map((g) => ids[g]);
  const had = before.map((r) => r.group_id);
  return { added: after.filter((id) => !had.includes(id)), removed: had.filter((id) => !after.includes(id)) };
}
