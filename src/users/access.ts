// THE checks by organization role: who may act because of the role they hold
// (the reference's require_realm_admin, require_realm_owner,
// require_member_or_admin). Permissions that a group setting decides are
// user_groups/'s; a channel's, channels/access.ts'.

import type { User } from './tables.ts';
import type { Realm } from '../realm/tables.ts';
import { badRequest, mustBeAdmin, mustBeModerator, mustBeOwner } from '../http/errors.ts';
import { ROLE, isAdmin, isGuest, isModerator, isOwner } from './roles.ts';
import { settingsOf } from '../realm/queries.ts';

/** Administrators (and owners) only. */
export function requireAdmin(user: Pick<User, 'role'>): void {
  if (!isAdmin(user)) throw mustBeAdmin();
}

/** Owners only. */
export function requireOwner(user: Pick<User, 'role'>): void {
  if (!isOwner(user)) throw mustBeOwner();
}

/** Moderators (and those above them) only. */
export function requireModerator(user: Pick<User, 'role'>): void {
  if (!isModerator(user)) throw mustBeModerator();
}

/** Giving or taking the owner role is for owners: `roles` are the roles a change grants or removes. */
export function requireOwnerForOwnerRole(actor: Pick<User, 'role'>, ...roles: number[]): void {
  if (roles.includes(ROLE.OWNER)) requireOwner(actor);
}

/** Anyone but guests. */
export function requireNotGuest(user: Pick<User, 'role'>): void {
  if (isGuest(user)) throw badRequest('Not allowed for guest users');
}

/** Endpoints for human members: guests and bots are refused (Zulip's require_member_or_admin). */
export function requireMemberOrAdmin(user: User): void {
  requireNotGuest(user);
  if (user.bot_type !== null) throw badRequest('This endpoint does not accept bot requests.');
}

/** Whether the organization lets a user change their own name, email address or avatar (administrators always may). */
export function mayChangeOwn(
  realm: Realm,
  user: Pick<User, 'role'>,
  disabledBy: 'name_changes_disabled' | 'email_changes_disabled' | 'avatar_changes_disabled',
): boolean {
  return !settingsOf(realm)[disabledBy] || isAdmin(user);
}
