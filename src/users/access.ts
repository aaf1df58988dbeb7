// THE checks by organization role: who may act because of the role they hold
// (the reference's require_realm_admin, require_realm_owner,
// require_member_or_admin). Permissions that a group setting decides are
// user_groups/'s; a channel's, channels/access.ts'.

import type { User } from './tables.ts';
import type { Realm } from '../realm/tables.ts';
import { badRequest, insufficientPermission, mustBeAdmin, mustBeModerator, mustBeOwner } from '../http/errors.ts';
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

/** Granting a role (inviting as one) is for those who hold it or a higher one. */
export function requireMayGrantRole(actor: Pick<User, 'role'>, role: number): void {
  if (role === ROLE.OWNER) requireOwner(actor);
  else if (role === ROLE.ADMINISTRATOR) requireAdmin(actor);
  else if (role === ROLE.MODERATOR) requireModerator(actor);
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

/** Guests hold only the permissions a setting opens to everyone (the reference's allow_everyone_group). */
export function roleAdmits(user: Pick<User, 'role'>, allowEveryone: boolean): boolean {
  return allowEveryone || !isGuest(user);
}

/** POST /users: administrators with `can_create_users`. */
export function requireCanCreateUsers(actor: User): void {
  if (!isAdmin(actor) || !actor.can_create_users) throw badRequest('User not authorized to create users');
}

/** Changing another user's email address: owners with `can_change_user_emails`. */
export function requireCanChangeUserEmails(actor: User): void {
  if (!isOwner(actor) || !actor.can_change_user_emails) throw badRequest('User not authorized to change user emails');
}

/** Guests cannot be given an administrator's role (the owner rules are requireOwnerForOwnerRole's). */
export function requireRoleFits(target: Pick<User, 'role'>, role: number): void {
  if (target.role === ROLE.GUEST && role <= ROLE.ADMINISTRATOR) throw badRequest('Guests cannot be organization administrators');
}

/** Administrators manage every bot; others the bots they own. */
export function administersBot(actor: Pick<User, 'id' | 'role'>, bot: Pick<User, 'bot_owner_id'>): boolean {
  return isAdmin(actor) || bot.bot_owner_id === actor.id;
}

/** Whose bots and invitations a user manages: everyone's (administrators), else only their own. */
export function managesEveryones(user: Pick<User, 'role'>): boolean {
  return isAdmin(user);
}

/** DELETE /users/{id}: administrators deactivate anyone (an owner only if they are owners), others only their own bots. */
export function requireMayDeactivate(actor: User, target: User): void {
  if (!isAdmin(actor) && !(target.is_bot && administersBot(actor, target))) throw insufficientPermission();
  if (isOwner(target) && !isOwner(actor)) throw mustBeOwner();
}

/** Settings only owners may change, among `names` (PATCH /realm). */
export function requireOwnerFor(actor: Pick<User, 'role'>, names: readonly string[], ownerOnly: ReadonlySet<string>): void {
  if (names.some((n) => ownerOnly.has(n))) requireOwner(actor);
}

/** Custom profile fields that users may not edit themselves are administrators' to set. */
export function mayEditLockedFields(actor: Pick<User, 'role'>): boolean {
  return isAdmin(actor);
}

/** A custom emoji that takes a default emoji's name is administrators' to add. */
export function mayOverrideDefaultEmoji(actor: Pick<User, 'role'>): boolean {
  return isAdmin(actor);
}

/** A custom emoji is deactivated by administrators or its author. */
export function mayDeactivateEmoji(actor: Pick<User, 'id' | 'role'>, authorId: number | null): boolean {
  return isAdmin(actor) || authorId === actor.id;
}

/** Invitations: only administrators word a custom welcome message, or invite while their account is new. */
export function invitesAsAdministrator(actor: Pick<User, 'role'>): boolean {
  return isAdmin(actor);
}

/** Channels: only administrators list every active channel, or make a channel a default one; they know of every channel. */
export function administersChannelList(user: Pick<User, 'role'>): boolean {
  return isAdmin(user);
}

/**
 * Guests know only the public channels they are subscribed to: register's all_public_streams
 * is not for them, nor are other public channels' events.
 */
export function mayFollowAllPublicChannels(user: Pick<User, 'role'>): boolean {
  return !isGuest(user);
}

/** Moderators (and above) move messages whatever their age; the organization's time limits bind others. */
export function movesPastTimeLimits(user: Pick<User, 'role'>): boolean {
  return isModerator(user);
}

/** Whether the organization lets a user change their own name, email address or avatar (administrators always may). */
export function mayChangeOwn(
  realm: Realm,
  user: Pick<User, 'role'>,
  disabledBy: 'name_changes_disabled' | 'email_changes_disabled' | 'avatar_changes_disabled',
): boolean {
  return !settingsOf(realm)[disabledBy] || isAdmin(user);
}
