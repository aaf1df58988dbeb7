// THE checks by organization role: who may act because of the role they hold
// (the reference's require_realm_admin, require_realm_owner). Permissions that a
// group setting decides are user_groups/'s; a channel's, channels/access.ts'.

import type { User } from './tables.ts';
import { mustBeAdmin, mustBeOwner } from '../http/errors.ts';
import { isAdmin, isOwner } from './roles.ts';

/** Administrators (and owners) only. */
export function requireAdmin(user: Pick<User, 'role'>): void {
  if (!isAdmin(user)) throw mustBeAdmin();
}

/** Owners only. */
export function requireOwner(user: Pick<User, 'role'>): void {
  if (!isOwner(user)) throw mustBeOwner();
}
