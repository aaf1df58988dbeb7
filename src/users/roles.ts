// Organization roles. Lower numbers carry more power.

export const ROLE = {
  OWNER: 100,
  ADMINISTRATOR: 200,
  MODERATOR: 300,
  MEMBER: 400,
  GUEST: 600,
} as const;

export type Role = (typeof ROLE)[keyof typeof ROLE];

export const ROLES: readonly Role[] = Object.values(ROLE);

export function isRole(value: number): value is Role {
  return (ROLES as readonly number[]).includes(value);
}

export const isOwner = (u: { role: number }): boolean => u.role === ROLE.OWNER;
export const isAdmin = (u: { role: number }): boolean => u.role <= ROLE.ADMINISTRATOR;
export const isModerator = (u: { role: number }): boolean => u.role <= ROLE.MODERATOR;
export const isGuest = (u: { role: number }): boolean => u.role === ROLE.GUEST;
