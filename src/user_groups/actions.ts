// Every change to a user group (spec endpoint 3, digest 1.3, 1.24, section 2):
// permission checks, one transaction, user_group events after the commit.

import { sql, type Updateable } from 'kysely';
import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { UserGroupTable } from './tables.ts';
import { type ActionContext, transactAs, type Tx } from '../db/transact.ts';
import { ApiError, badRequest, insufficientPermission } from '../http/errors.ts';
import {
  checkActiveUserIds,
  checkUsableGroup,
  directMemberIds,
  directSubgroupIds,
  dropIfAnonymous,
  expectationMismatch,
  groupSettingValue,
  settingValueEquals,
  storeGroupSettingValue,
  systemGroupIds,
  type GroupSettingChange,
  type GroupSettingValue,
} from './group-setting.ts';
import { GROUP_PERMISSION_SETTINGS, rulesOf, type GroupPermission } from './permission-settings.ts';
import { GROUP_SETTING_NAMES, groupNameTaken, recursiveSubgroupIds, settingColumn, type UserGroupRow } from './queries.ts';
import { accessGroupForUpdate, hasRealmPermission } from './access.ts';
import { requireMemberOrAdmin } from '../users/access.ts';
import { groupUseObjections } from './objections.ts';
import { formatGroups } from './format.ts';
import { groupEventSender, type GroupEventSender } from './events.ts';
import { membershipNotices } from './notices.ts';
import { listUsers } from '../users/queries.ts';
import { sendNotices, type Notice } from '../notification_bot/index.ts';

export const MAX_GROUP_NAME_LENGTH = 100;
const INVALID_NAME_PREFIXES = ['@', 'role:', 'user:', 'stream:', 'channel:'];

function checkGroupName(name: string): string {
  if (name.trim() === '') throw badRequest("User group name can't be empty!");
  if (name.length > MAX_GROUP_NAME_LENGTH) throw badRequest(`User group name cannot exceed ${MAX_GROUP_NAME_LENGTH} characters.`);
  const prefix = INVALID_NAME_PREFIXES.find((p) => name.startsWith(p));
  if (prefix !== undefined) throw badRequest(`User group name cannot start with '${prefix}'.`);
  return name;
}

/**
 * Changes of one kind take turns within an organization until the transaction
 * ends: names (so that two requests cannot both take a free name) and subgroups
 * (so that two edits cannot close a cycle together). Taken first in a
 * transaction, before any row lock, so that waiting for a turn never deadlocks.
 */
async function takeTurns(tx: Tx, realmId: number, kind: 'names' | 'subgroups'): Promise<void> {
  const key = kind === 'names' ? 0x55470001 : 0x55470002;
  await sql`select pg_advisory_xact_lock(${key}::integer, ${realmId}::integer)`.execute(tx);
}

async function checkNameFree(tx: Tx, realmId: number, name: string, exceptId?: number): Promise<void> {
  if (await groupNameTaken(tx, realmId, name, exceptId)) throw badRequest(`User group '${name}' already exists.`);
}

export interface NewGroup {
  name: string;
  description: string;
  members: number[];
  subgroups?: number[];
  settings: Partial<Record<GroupPermission, GroupSettingValue>>;
}

/** POST /user_groups/create: members of `can_create_groups`. */
export async function createGroup(svc: Services, realm: Realm, actor: User, g: NewGroup): Promise<number> {
  requireMemberOrAdmin(actor);
  if (!(await hasRealmPermission(svc.db, realm, actor, 'can_create_groups'))) throw insufficientPermission();
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    await takeTurns(tx, realm.id, 'names');
    const members = await checkActiveUserIds(tx, realm.id, g.members);
    const name = checkGroupName(g.name);
    await checkNameFree(tx, realm.id, name);
    const system = await systemGroupIds(tx, realm.id);
    const columns: Updateable<UserGroupTable> = {};
    for (const setting of GROUP_SETTING_NAMES) {
      const s = GROUP_PERMISSION_SETTINGS[setting];
      const value = g.settings[setting] ?? (s.default === 'creator' ? { direct_members: [actor.id], direct_subgroups: [] } : system[s.default]);
      columns[settingColumn(setting)] = await storeGroupSettingValue(tx, realm.id, value, setting, rulesOf(s));
    }
    const group = await tx
      .insertInto('user_groups')
      .values({ ...columns, realm_id: realm.id, name, description: g.description, creator_id: actor.id, date_created: new Date() })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (members.length > 0) {
      await tx
        .insertInto('user_group_members')
        .values(members.map((user_id) => ({ realm_id: realm.id, group_id: group.id, user_id })))
        .execute();
    }
    // A new group is nobody's subgroup yet: no cycle can form, and no permission beyond creating is needed.
    const subgroups = [...new Set(g.subgroups ?? [])];
    for (const id of subgroups) await checkUsableGroup(tx, realm.id, id);
    if (subgroups.length > 0) {
      await tx
        .insertInto('user_group_subgroups')
        .values(subgroups.map((subgroup_id) => ({ realm_id: realm.id, supergroup_id: group.id, subgroup_id })))
        .execute();
    }
    const [formatted] = await formatGroups(tx, [group]);
    (await groupEventSender(ctx))(group, { op: 'add', group: formatted });
    return group.id;
  });
}

export interface GroupChanges {
  name?: string;
  description?: string;
  /** False reactivates; true does nothing (deactivation has its own endpoint). */
  deactivated?: boolean;
  settings: Partial<Record<GroupPermission, GroupSettingChange>>;
}

async function updateRow(tx: Tx, groupId: number, set: Updateable<UserGroupTable>): Promise<UserGroupRow> {
  return tx.updateTable('user_groups').set(set).where('id', '=', groupId).returningAll().executeTakeFirstOrThrow();
}

/** PATCH /user_groups/{id}: managers of the group; all or nothing (an `old` mismatch undoes the whole request). */
export async function updateGroup(svc: Services, realm: Realm, actor: User, groupId: number, changes: GroupChanges): Promise<void> {
  requireMemberOrAdmin(actor);
  const given = [changes.name, changes.description, changes.deactivated, ...Object.values(changes.settings)];
  if (given.every((v) => v === undefined)) throw badRequest('No new data supplied');
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    if (changes.name !== undefined) await takeTurns(tx, realm.id, 'names');
    let group = await accessGroupForUpdate(tx, realm, actor, groupId, [], { allowDeactivated: true });
    const send = await groupEventSender(ctx);
    if (changes.name !== undefined && changes.name !== group.name) {
      const name = checkGroupName(changes.name);
      await checkNameFree(tx, realm.id, name, group.id);
      group = await updateRow(tx, group.id, { name });
      send(group, { op: 'update', group_id: group.id, data: { name } });
    }
    if (changes.description !== undefined && changes.description !== group.description) {
      group = await updateRow(tx, group.id, { description: changes.description });
      send(group, { op: 'update', group_id: group.id, data: { description: changes.description } });
    }
    if (changes.deactivated === false && group.deactivated) {
      group = await updateRow(tx, group.id, { deactivated: false });
      // Clients that never knew the deactivated group get it whole (events/shape.ts).
      const [formatted] = await formatGroups(tx, [group]);
      send(group, { op: 'update', group_id: group.id, data: { deactivated: false } }, { group: formatted });
    }
    for (const setting of GROUP_SETTING_NAMES) {
      const change = changes.settings[setting];
      if (change === undefined) continue;
      const column = settingColumn(setting);
      const current = group[column]!;
      if (change.old !== undefined && !(await settingValueEquals(tx, realm.id, current, change.old))) throw expectationMismatch();
      if (await settingValueEquals(tx, realm.id, current, change.new)) continue;
      const stored = await storeGroupSettingValue(tx, realm.id, change.new, setting, rulesOf(GROUP_PERMISSION_SETTINGS[setting]));
      group = await updateRow(tx, group.id, { [column]: stored });
      await dropIfAnonymous(tx, current);
      send(group, { op: 'update', group_id: group.id, data: { [setting]: await groupSettingValue(tx, stored) } });
    }
  });
}

export interface MembershipOps {
  add?: number[];
  delete?: number[];
  add_subgroups?: number[];
  delete_subgroups?: number[];
}

/** POST /user_groups/{id}/members: members and subgroups, each part with its own permission, all in one transaction. */
export async function updateMembers(svc: Services, realm: Realm, actor: User, groupId: number, ops: MembershipOps): Promise<void> {
  const nothingToDo = 'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".';
  await changeMembership(svc, realm, actor, groupId, ops, nothingToDo);
}

/** POST /user_groups/{id}/subgroups. */
export async function updateSubgroups(svc: Services, realm: Realm, actor: User, groupId: number, ops: { add?: number[]; delete?: number[] }): Promise<void> {
  const nothingToDo = 'Nothing to do. Specify at least one of "add" or "delete".';
  await changeMembership(svc, realm, actor, groupId, { add_subgroups: ops.add, delete_subgroups: ops.delete }, nothingToDo);
}

async function changeMembership(svc: Services, realm: Realm, actor: User, groupId: number, ops: MembershipOps, nothingToDo: string): Promise<void> {
  requireMemberOrAdmin(actor);
  if (!Object.values(ops).some((list) => list !== undefined && list.length > 0)) throw badRequest(nothingToDo);
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    if (ops.add_subgroups?.length || ops.delete_subgroups?.length) await takeTurns(tx, realm.id, 'subgroups');
    const send = await groupEventSender(ctx);
    const notices: Notice[] = [];
    if (ops.add?.length) notices.push(...(await addMembers(ctx, send, groupId, ops.add)));
    if (ops.delete?.length) notices.push(...(await removeMembers(ctx, send, groupId, ops.delete)));
    if (ops.add_subgroups?.length) await addSubgroups(ctx, send, groupId, ops.add_subgroups);
    if (ops.delete_subgroups?.length) await removeSubgroups(ctx, send, groupId, ops.delete_subgroups);
    await sendNotices(ctx, notices);
  });
}

/**
 * Oneself alone: joining needs can_join_group; anything else can_add_members_group (managers always may).
 * Returns what Notification Bot tells those added.
 */
async function addMembers(ctx: ActionContext<unknown, User>, send: GroupEventSender, groupId: number, ids: number[]): Promise<Notice[]> {
  const { tx, realm, actor } = ctx;
  const self = ids.length === 1 && ids[0] === actor.id;
  const group = await accessGroupForUpdate(tx, realm, actor, groupId, self ? ['can_join_group', 'can_add_members_group'] : ['can_add_members_group'], {
    allowDeactivated: true,
  });
  const users = await checkActiveUserIds(tx, realm.id, ids);
  const existing = (await directMemberIds(tx, [group.id])).get(group.id)!;
  const already = users.find((id) => existing.includes(id));
  if (already !== undefined) throw badRequest(`User ${already} is already a member of this group`);
  await tx
    .insertInto('user_group_members')
    .values(users.map((user_id) => ({ realm_id: realm.id, group_id: group.id, user_id })))
    .execute();
  send(group, { op: 'add_members', group_id: group.id, user_ids: users });
  return membershipNotices(actor, group, await listUsers(tx, realm.id, users), 'added');
}

/** Oneself alone: leaving needs can_leave_group; anything else can_remove_members_group. Returns what those removed are told. */
async function removeMembers(ctx: ActionContext<unknown, User>, send: GroupEventSender, groupId: number, ids: number[]): Promise<Notice[]> {
  const { tx, realm, actor } = ctx;
  const users = await checkActiveUserIds(tx, realm.id, ids);
  const self = ids.length === 1 && ids[0] === actor.id;
  const group = await accessGroupForUpdate(tx, realm, actor, groupId, self ? ['can_leave_group', 'can_remove_members_group'] : ['can_remove_members_group'], {
    allowDeactivated: true,
  });
  const existing = (await directMemberIds(tx, [group.id])).get(group.id)!;
  const missing = users.find((id) => !existing.includes(id));
  if (missing !== undefined) throw badRequest(`There is no member '${missing}' in this user group`);
  await tx.deleteFrom('user_group_members').where('group_id', '=', group.id).where('user_id', 'in', users).execute();
  send(group, { op: 'remove_members', group_id: group.id, user_ids: users });
  return membershipNotices(actor, group, await listUsers(tx, realm.id, users), 'removed');
}

async function addSubgroups(ctx: ActionContext<unknown, User>, send: GroupEventSender, groupId: number, ids: number[]): Promise<void> {
  const { tx, realm, actor } = ctx;
  const group = await accessGroupForUpdate(tx, realm, actor, groupId, ['can_add_members_group'], { allowDeactivated: true });
  const subgroups = [...new Set(ids)];
  for (const id of subgroups) await checkUsableGroup(tx, realm.id, id);
  const existing = (await directSubgroupIds(tx, [group.id])).get(group.id)!;
  const already = subgroups.find((id) => existing.includes(id));
  if (already !== undefined) throw badRequest(`User group ${already} is already a subgroup of this group.`);
  const below = new Set([...subgroups, ...(await recursiveSubgroupIds(tx, subgroups))]);
  if (below.has(group.id)) throw badRequest(`User group ${group.id} is already a subgroup of one of the passed subgroups.`);
  await tx
    .insertInto('user_group_subgroups')
    .values(subgroups.map((subgroup_id) => ({ realm_id: realm.id, supergroup_id: group.id, subgroup_id })))
    .execute();
  send(group, { op: 'add_subgroups', group_id: group.id, direct_subgroup_ids: subgroups });
}

/** Only managers remove subgroups (a subgroup may be deactivated: removing it is still allowed). */
async function removeSubgroups(ctx: ActionContext<unknown, User>, send: GroupEventSender, groupId: number, ids: number[]): Promise<void> {
  const { tx, realm, actor } = ctx;
  const group = await accessGroupForUpdate(tx, realm, actor, groupId, [], { allowDeactivated: true });
  const subgroups = [...new Set(ids)];
  for (const id of subgroups) await checkUsableGroup(tx, realm.id, id, { allowDeactivated: true });
  const existing = (await directSubgroupIds(tx, [group.id])).get(group.id)!;
  const missing = subgroups.find((id) => !existing.includes(id));
  if (missing !== undefined) throw badRequest(`User group ${missing} is not a subgroup of this group.`);
  await tx.deleteFrom('user_group_subgroups').where('supergroup_id', '=', group.id).where('subgroup_id', 'in', subgroups).execute();
  send(group, { op: 'remove_subgroups', group_id: group.id, direct_subgroup_ids: subgroups });
}

/** POST /user_groups/{id}/deactivate: managers of the group, and only while nothing uses it. */
export async function deactivateGroup(svc: Services, realm: Realm, actor: User, groupId: number): Promise<void> {
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const group = await accessGroupForUpdate(tx, realm, actor, groupId, []);
    const objections = await groupUseObjections(svc, tx, realm, group.id);
    if (objections.length > 0) {
      throw new ApiError('CANNOT_DEACTIVATE_GROUP_IN_USE', 'Cannot deactivate user group in use.', { data: { objections } });
    }
    await updateRow(tx, group.id, { deactivated: true });
    // Sent as about an active group: clients without include_deactivated_groups get it as a removal.
    (await groupEventSender(ctx))(group, { op: 'update', group_id: group.id, data: { deactivated: true } });
  });
}
