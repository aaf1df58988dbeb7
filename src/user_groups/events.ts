// `user_group` events (digest 3.3): every active user of the organization hears
// of every named group. Events about a deactivated group carry
// `hidden.group_deactivated`, so that clients without include_deactivated_groups
// (which do not know the group) skip them (events/shape.ts).
//
// Also the membership events that follow from changes to users: a role change
// moves the user between system groups; a new or reactivated user is (again) a
// member of their groups and of the anonymous setting values that name them. A
// deactivated user belongs to nothing: clients drop them on the realm_user event.

import type { ActionContext } from '../db/transact.ts';
import type { Hidden } from '../events/types.ts';
import type { ApiUserGroup } from './format.ts';
import type { User } from '../users/tables.ts';
import { activeUserIds } from '../users/queries.ts';
import { groupSettingValue, type GroupSettingValue } from './group-setting.ts';
import type { GroupPermission } from './permission-settings.ts';
import type { MembershipChanges } from './system-group-actions.ts';
import { directMembershipsOf, settingColumn, type UserGroupRow } from './queries.ts';

export type UserGroupEvent =
  | { type: 'user_group'; op: 'add'; group: ApiUserGroup }
  | { type: 'user_group'; op: 'update'; group_id: number; data: Partial<ApiUserGroup> }
  | { type: 'user_group'; op: 'add_members' | 'remove_members'; group_id: number; user_ids: number[] }
  | { type: 'user_group'; op: 'add_subgroups' | 'remove_subgroups'; group_id: number; direct_subgroup_ids: number[] }
  /** Made by events/shape.ts for clients that do not know deactivated groups. */
  | { type: 'user_group'; op: 'remove'; group_id: number };

/** A user_group event without its `type` (one per op: Omit alone would merge them). */
type GroupEventBody = UserGroupEvent extends infer E ? (E extends UserGroupEvent ? Omit<E, 'type'> : never) : never;

export type GroupEventSender = (group: Pick<UserGroupRow, 'id' | 'deactivated'>, event: GroupEventBody, hidden?: Hidden) => void;

/** Emits user_group events to the organization's active users (read once, for several events), or to `only`. */
export async function groupEventSender(ctx: ActionContext<unknown>, only?: number[]): Promise<GroupEventSender> {
  const { tx, emit } = ctx;
  const realmId = ctx.realm.id;
  const users = only ?? (await activeUserIds(tx, realmId));
  return (group, event, hidden = {}) => {
    const all: Hidden = group.deactivated ? { ...hidden, group_deactivated: true } : hidden;
    emit(realmId, { type: 'user_group', ...event }, users, Object.keys(all).length > 0 ? { hidden: all } : undefined);
  };
}

/** After a role change: the system groups an active user left and joined. */
export async function announceMembershipChanges(ctx: ActionContext<unknown>, user: Pick<User, 'id' | 'is_active'>, changes: MembershipChanges): Promise<void> {
  // A deactivated user is in no group's member list: nothing visible changes.
  if (!user.is_active || changes.added.length + changes.removed.length === 0) return;
  const send = await groupEventSender(ctx);
  for (const id of changes.removed) send({ id, deactivated: false }, { op: 'remove_members', group_id: id, user_ids: [user.id] });
  for (const id of changes.added) send({ id, deactivated: false }, { op: 'add_members', group_id: id, user_ids: [user.id] });
}

/**
 * After a user is created or reactivated: the groups and group settings they are a direct member of.
 * `leavingFor`: after a deactivation, the same told as departures to those who cannot see the user
 * (the others drop them on the realm_user event they get, as the reference does).
 */
export async function announceMemberships(ctx: ActionContext<unknown>, user: Pick<User, 'id'>, leavingFor?: number[]): Promise<void> {
  if (leavingFor?.length === 0) return;
  const { tx, realm } = ctx;
  const { named, settingHolders } = await directMembershipsOf(tx, realm.id, user.id);
  if (named.length + settingHolders.length === 0) return;
  const send = await groupEventSender(ctx, leavingFor);
  const op = leavingFor ? 'remove_members' : 'add_members';
  for (const group of named) send(group, { op, group_id: group.id, user_ids: [user.id] });
  for (const { group, settings } of settingHolders) {
    const data: Partial<Record<GroupPermission, GroupSettingValue>> = {};
    for (const s of settings) data[s] = await groupSettingValue(tx, group[settingColumn(s)]!);
    send(group, { op: 'update', group_id: group.id, data });
  }
}
