// The system groups that mirror roles. Each role's users are direct members of
// one group, and each group contains the next stricter one as a subgroup, so
// "role:members" reaches moderators, administrators and owners through subgroups.

import { ROLE, type Role } from '../users/roles.ts';

export const SYSTEM_GROUPS = [
  { name: 'role:internet', description: 'Everyone on the internet', subgroup: 'role:everyone' },
  { name: 'role:everyone', description: 'Everyone including guests', subgroup: 'role:members' },
  { name: 'role:members', description: 'Everyone except guests', subgroup: 'role:fullmembers' },
  {
    name: 'role:fullmembers',
    description: 'Members of this organization, not including new accounts and guests',
    subgroup: 'role:moderators',
  },
  {
    name: 'role:moderators',
    description: 'Moderators of this organization, including administrators',
    subgroup: 'role:administrators',
  },
  {
    name: 'role:administrators',
    description: 'Administrators of this organization, including owners',
    subgroup: 'role:owners',
  },
  { name: 'role:owners', description: 'Owners of this organization', subgroup: null },
  { name: 'role:nobody', description: 'Nobody', subgroup: null },
] as const;

export type SystemGroupName = (typeof SYSTEM_GROUPS)[number]['name'];

/**
 * The system groups a user of this role is a direct member of. Members become
 * full members once their account is older than the waiting period.
 */
export function directSystemGroups(role: Role, isFullMember: boolean): SystemGroupName[] {
  switch (role) {
    case ROLE.OWNER:
      return ['role:owners'];
    case ROLE.ADMINISTRATOR:
      return ['role:administrators'];
    case ROLE.MODERATOR:
      return ['role:moderators'];
    case ROLE.MEMBER:
      return isFullMember ? ['role:members', 'role:fullmembers'] : ['role:members'];
    case ROLE.GUEST:
      return ['role:everyone'];
  }
}

export function isFullMember(dateJoined: Date, waitingPeriodDays: number, now = new Date()): boolean {
  return now.getTime() - dateJoined.getTime() >= waitingPeriodDays * 86_400_000;
}
