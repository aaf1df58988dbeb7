// What members (not guests, not bots) may read about groups: the list, and the
// members and subgroups of an active group.

import type { Hooked } from '../services.ts';
import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { accessUser } from '../users/queries.ts';
import { accessGroup } from './access.ts';
import { requireMemberOrAdmin } from '../users/access.ts';
import { listGroups, type ApiUserGroup } from './format.ts';
import { memberIds, subgroupIds } from './queries.ts';

/** GET /user_groups. */
export async function groupsFor(db: Executor, realm: Realm, viewer: User, opts: { includeDeactivated: boolean }): Promise<ApiUserGroup[]> {
  requireMemberOrAdmin(viewer);
  return listGroups(db, realm.id, opts);
}

/** GET /user_groups/{id}/members. */
export async function groupMembersFor(db: Executor, realm: Realm, viewer: User, groupId: number, opts: { directOnly: boolean }): Promise<number[]> {
  requireMemberOrAdmin(viewer);
  const group = await accessGroup(db, realm, groupId);
  return memberIds(db, group.id, opts);
}

/** GET /user_groups/{id}/members/{user_id}: about a user the viewer may see (active, not a bot). */
export async function isGroupMemberFor(
  svc: Hooked,
  db: Executor,
  realm: Realm,
  viewer: User,
  groupId: number,
  userId: number,
  opts: { directOnly: boolean },
): Promise<boolean> {
  requireMemberOrAdmin(viewer);
  const group = await accessGroup(db, realm, groupId);
  const user = await accessUser(svc, db, realm, viewer, userId, { allowBots: false });
  return (await memberIds(db, group.id, opts)).includes(user.id);
}

/** GET /user_groups/{id}/subgroups. */
export async function subgroupsFor(db: Executor, realm: Realm, viewer: User, groupId: number, opts: { directOnly: boolean }): Promise<number[]> {
  requireMemberOrAdmin(viewer);
  const group = await accessGroup(db, realm, groupId);
  return subgroupIds(db, group.id, opts);
}
