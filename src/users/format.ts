// The User resource as the API returns it (spec "User"), seen by a given viewer:
// the real email and the avatar URL depend on who is asking.

import { createHash } from 'node:crypto';
import type { User } from './tables.ts';
import { EMAIL_ADDRESS_VISIBILITY, emailAddressVisibility } from './settings.ts';
import { isAdmin, isGuest, isModerator, isOwner } from './roles.ts';
import type { Realm } from '../realm/tables.ts';
import type { Config } from '../config.ts';
import { realmHost } from '../realm/queries.ts';

export interface ApiUser {
  user_id: number;
  delivery_email: string | null;
  email: string;
  full_name: string;
  date_joined: string;
  is_active: boolean;
  is_owner: boolean;
  is_admin: boolean;
  is_guest: boolean;
  is_bot: boolean;
  bot_type: number | null;
  bot_owner_id: number | null;
  role: number;
  timezone: string;
  avatar_url: string | null;
  avatar_version: number;
  /** Only on system bots (users/system-bots.ts). */
  is_system_bot?: true;
  profile_data?: Record<string, { value: string; rendered_value?: string }>;
}

/** Who may read a user's real email address (the user's `email_address_visibility`). */
export function canSeeDeliveryEmail(viewer: Pick<User, 'id' | 'role'> | null, target: Pick<User, 'id' | 'is_bot' | 'settings'>): boolean {
  if (target.is_bot) return true;
  if (viewer && viewer.id === target.id) return true;
  switch (emailAddressVisibility(target.settings)) {
    case EMAIL_ADDRESS_VISIBILITY.EVERYONE:
      return true;
    case EMAIL_ADDRESS_VISIBILITY.MEMBERS:
      return viewer !== null && !isGuest(viewer);
    case EMAIL_ADDRESS_VISIBILITY.ADMINS:
      return viewer !== null && isAdmin(viewer);
    case EMAIL_ADDRESS_VISIBILITY.MODERATORS:
      return viewer !== null && isModerator(viewer);
    default:
      return false;
  }
}

const AVATAR_PROVIDER = 'https://secure.gravatar.com/avatar/';

/** The avatar's URL: the provider's identicon for the email, or the uploaded image. */
export function avatarUrl(user: Pick<User, 'id' | 'realm_id' | 'delivery_email' | 'avatar_source' | 'avatar_version'>): string {
  if (user.avatar_source === 'U') {
    return `/user_avatars/${user.realm_id}/${user.id}.png?version=${user.avatar_version}`;
  }
  return `${AVATAR_PROVIDER}${emailHash(user.delivery_email)}?d=identicon&version=${user.avatar_version}`;
}

/** Each address's hash, kept (up to 100,000, then forgotten at once): a register hashes every user's, and the hash depends on the address alone. */
const emailHashes = new Map<string, string>();

function emailHash(email: string): string {
  let hash = emailHashes.get(email);
  if (hash === undefined) {
    if (emailHashes.size >= 100_000) emailHashes.clear();
    hash = createHash('md5').update(email.toLowerCase()).digest('hex');
    emailHashes.set(email, hash);
  }
  return hash;
}

/** The 500-pixel variant, for settings pages. */
export function mediumAvatarUrl(user: Pick<User, 'id' | 'realm_id' | 'delivery_email' | 'avatar_source' | 'avatar_version'>): string {
  const url = avatarUrl(user);
  return user.avatar_source === 'U' ? url.replace('.png?', '-medium.png?') : `${url}&s=500`;
}

/**
 * Null when the client computes provider avatars itself (`client_svcavatar`):
 * only possible when it can see the real email the provider hashes.
 */
export function avatarUrlFor(
  user: Pick<User, 'id' | 'realm_id' | 'delivery_email' | 'avatar_source' | 'avatar_version' | 'is_bot' | 'settings'>,
  viewer: Pick<User, 'id' | 'role'> | null,
  clientSvcavatar: boolean,
): string | null {
  if (clientSvcavatar && user.avatar_source === 'G' && canSeeDeliveryEmail(viewer, user)) return null;
  return avatarUrl(user);
}

/** ISO 8601 with an explicit UTC offset, as the spec asks for `date_joined` (listUserCards' SQL writes the same). */
export function isoDate(d: Date): string {
  return `${d.toISOString().slice(0, -1)}+00:00`;
}

/** The columns formatUser reads. */
export const CARD_COLUMNS = [
  'id',
  'realm_id',
  'email',
  'delivery_email',
  'full_name',
  'date_joined',
  'is_active',
  'role',
  'is_bot',
  'bot_type',
  'bot_owner_id',
  'timezone',
  'avatar_source',
  'avatar_version',
  'is_system_bot',
  // The email address visibility; only what differs from the defaults, so small.
  'settings',
] as const satisfies readonly (keyof User)[];

/**
 * What a User object is made of: a user row, or the narrower one of a
 * whole-organization list, whose join date the database wrote as isoDate's text.
 */
export type UserCard = Omit<Pick<User, (typeof CARD_COLUMNS)[number]>, 'date_joined'> & { date_joined: Date | string };

/**
 * `withoutActive`: the entry of a list that says whether its users are active
 * (register's realm_users), built without the field rather than copied without it.
 */
export function formatUser(user: UserCard, viewer: Pick<User, 'id' | 'role'> | null, opts: { clientSvcavatar: boolean; withoutActive?: boolean }): ApiUser {
  const u = {
    user_id: user.id,
    delivery_email: canSeeDeliveryEmail(viewer, user) ? user.delivery_email : null,
    email: user.email,
    full_name: user.full_name,
    date_joined: typeof user.date_joined === 'string' ? user.date_joined : isoDate(user.date_joined),
  } as ApiUser;
  if (!opts.withoutActive) u.is_active = user.is_active;
  u.is_owner = isOwner(user);
  u.is_admin = isAdmin(user);
  u.is_guest = isGuest(user);
  u.is_bot = user.is_bot;
  u.bot_type = user.bot_type;
  u.bot_owner_id = user.bot_owner_id;
  u.role = user.role;
  u.timezone = user.timezone;
  u.avatar_url = avatarUrlFor(user, viewer, opts.clientSvcavatar);
  u.avatar_version = user.avatar_version;
  if (user.is_system_bot) u.is_system_bot = true;
  return u;
}

/** The API email: the real address when everyone may see it, else `user<id>@<organization host>`. */
export function apiEmailFor(
  user: Pick<User, 'id' | 'is_bot' | 'delivery_email'>,
  visibility: number,
  realm: Pick<Realm, 'string_id'>,
  config: Pick<Config, 'externalUrl'>,
): string {
  if (user.is_bot || visibility === EMAIL_ADDRESS_VISIBILITY.EVERYONE) return user.delivery_email;
  return `user${user.id}@${realmHost(realm, config)}`;
}
