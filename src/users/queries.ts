import { sql } from 'kysely';
import { inIds } from '../db/ids.ts';
import type { Hooked } from '../services.ts';
import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from './tables.ts';
import { ROLE } from './roles.ts';
import { badRequest } from '../http/errors.ts';
import { groupMemberIds, systemGroupIds, userGroupIds, viewerGroupIds } from '../user_groups/group-setting.ts';
import { once, type RegisterContext } from '../events/state.ts';
import { isRowId, isStorableText } from '../db/ids.ts';
import { jsonRows, tupleReader } from '../db/json-rows.ts';
import { CARD_COLUMNS, type UserCard } from './format.ts';

/** The timestamp columns of a user row. */
const USER_DATES = ['date_joined', 'last_active_at'] as const;

export async function getUser(db: Executor, realmId: number, userId: number): Promise<User | undefined> {
  if (!isRowId(userId)) return undefined;
  return db.selectFrom('users').selectAll().where('realm_id', '=', realmId).where('id', '=', userId).executeTakeFirst();
}

/** By real or API email, ignoring case. */
export async function getUserByEmail(db: Executor, realmId: number, email: string): Promise<User | undefined> {
  if (!isStorableText(email)) return undefined;
  const lower = email.toLowerCase();
  return db
    .selectFrom('users')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where((eb) => eb.or([eb(eb.fn('lower', ['delivery_email']), '=', lower), eb(eb.fn('lower', ['email']), '=', lower)]))
    .orderBy('id')
    .executeTakeFirst();
}

export async function emailInUse(db: Executor, realmId: number, email: string, exceptUserId?: number): Promise<boolean> {
  const user = await getUserByEmail(db, realmId, email);
  return user !== undefined && user.id !== exceptUserId;
}

/** The organization's users (bots included, system bots not), or those of `ids` (any). */
export async function listUsers(db: Executor, realmId: number, ids?: number[]): Promise<User[]> {
  let q = db.selectFrom('users').selectAll().where('realm_id', '=', realmId);
  if (ids) {
    if (ids.length === 0) return [];
    q = q.where(inIds('id', ids));
  } else {
    q = q.where('is_system_bot', '=', false);
  }
  // Whole organizations: one JSON value on PGlite (db/json-rows.ts).
  return jsonRows(db, q.orderBy('id'), USER_DATES);
}

/**
 * isoDate's text, written by the database: a whole organization's join dates
 * are not parsed into dates only to be printed again. to_char's MS truncates the
 * microseconds, as reading them into a Date does.
 */
const ISO_DATE_JOINED = sql<string>`to_char(date_joined at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')`;

/**
 * Every user of the organization, system bots too, narrowed to what a User object is made of:
 * not the password hash, API key and a dozen more columns, which register's user list would
 * otherwise carry for everyone.
 */
export async function listUserCards(db: Executor, realmId: number): Promise<UserCard[]> {
  const q = db
    .selectFrom('users')
    .select([...CARD_STORED_COLUMNS, ISO_DATE_JOINED.as('date_joined')])
    .where('realm_id', '=', realmId);
  return readCards(db, q.orderBy('id'));
}

const CARD_STORED_COLUMNS = CARD_COLUMNS.filter((c) => c !== 'date_joined');
const readCards = tupleReader<UserCard>([...CARD_STORED_COLUMNS, 'date_joined']);

export async function activeUserIds(db: Executor, realmId: number): Promise<number[]> {
  const rows = await db.selectFrom('users').select('id').where('realm_id', '=', realmId).where('is_active', '=', true).orderBy('id').execute();
  return rows.map((r) => r.id);
}

export async function countActiveOwners(db: Executor, realmId: number): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .where('role', '=', 100)
    .where('is_active', '=', true)
    .where('is_bot', '=', false)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Which users the viewer may see (the organization's `can_access_all_users_group`):
 * 'all', or the set it is limited to: itself, bots, and users it shares a
 * channel or a direct message conversation with (sources registered by those domains).
 */
export type AccessibleUsers = 'all' | Set<number>;

export type UserAccessSource = (db: Executor, realm: Realm, viewer: User) => Promise<Iterable<number>>;

/** The group whose members see everyone, where the organization limits the others (else undefined). */
export async function limitingAccessGroup(db: Executor, realm: Realm): Promise<number | undefined> {
  const groupId = realm.group_settings.can_access_all_users_group;
  if (groupId === undefined || groupId === (await systemGroupIds(db, realm.id))['role:everyone']) return undefined;
  return groupId;
}

export async function accessibleUsers(svc: Hooked, db: Executor, realm: Realm, viewer: User | null, groups?: Set<number>): Promise<AccessibleUsers> {
  if (viewer === null) return 'all';
  const groupId = realm.group_settings.can_access_all_users_group;
  if (groupId === undefined || (groups ?? (await userGroupIds(db, viewer.id))).has(groupId)) return 'all';
  const ids = new Set<number>([viewer.id]);
  const bots = await db.selectFrom('users').select('id').where('realm_id', '=', realm.id).where('is_bot', '=', true).execute();
  for (const b of bots) ids.add(b.id);
  for (const source of svc.hooks.userAccessSources) for (const id of await source(db, realm, viewer)) ids.add(id);
  return ids;
}

/** The register caller's accessibleUsers, once per register call (the user and presence sections filter by it). */
export function viewerAccess(ctx: RegisterContext): Promise<AccessibleUsers> {
  return once(ctx, 'users:access', async () => accessibleUsers(ctx.svc, ctx.svc.db, ctx.realm, ctx.user, ctx.user ? await viewerGroupIds(ctx) : undefined));
}

/**
 * The other side of `accessibleUsers`: who may see `subject` (the audience of
 * events about it). The sources are symmetric, so the same relations answer.
 */
export async function usersWhoCanSee(svc: Hooked, db: Executor, realm: Realm, subject: User): Promise<AccessibleUsers> {
  if (subject.is_bot) return 'all';
  const groupId = await limitingAccessGroup(db, realm);
  if (groupId === undefined) return 'all';
  const ids = new Set<number>([subject.id, ...(await groupMemberIds(db, groupId))]);
  for (const source of svc.hooks.userAccessSources) for (const id of await source(db, realm, subject)) ids.add(id);
  return ids;
}

/** The active users who may see `subject`: the audience of events about it. */
export async function activeUsersWhoCanSee(svc: Hooked, db: Executor, realm: Realm, subject: User): Promise<number[]> {
  const access = await usersWhoCanSee(svc, db, realm, subject);
  return (await activeUserIds(db, realm.id)).filter((id) => canAccess(access, id));
}

export function canAccess(access: AccessibleUsers, userId: number): boolean {
  return access === 'all' || access.has(userId);
}

/** A user of the viewer's organization that the viewer may see, or "No such user". */
export async function accessUser(
  svc: Hooked,
  db: Executor,
  realm: Realm,
  viewer: User | null,
  userId: number,
  opts: { allowDeactivated?: boolean; allowBots?: boolean; allowSystemBots?: boolean } = {},
): Promise<User> {
  const user = await getUser(db, realm.id, userId);
  // System bots can be looked at (GET /users/{id}), never managed, subscribed or grouped.
  if (!user || (user.is_system_bot && !opts.allowSystemBots)) throw badRequest('No such user');
  if (!user.is_active && !opts.allowDeactivated) throw badRequest('User is deactivated');
  if (user.is_bot && opts.allowBots === false) throw badRequest('No such user');
  if (!canAccess(await accessibleUsers(svc, db, realm, viewer), user.id)) throw badRequest('No such user');
  return user;
}

/** `/users/{id}` and `/users/{email}` name the same resource: a user the viewer may see. */
export async function accessUserByKey(
  svc: Hooked,
  db: Executor,
  realm: Realm,
  viewer: User | null,
  idOrEmail: string,
  opts: { allowDeactivated?: boolean; allowSystemBots?: boolean } = {},
): Promise<User> {
  if (/^\d+$/.test(idOrEmail)) return accessUser(svc, db, realm, viewer, Number(idOrEmail), { allowBots: true, ...opts });
  const found = await getUserByEmail(db, realm.id, idOrEmail);
  if (!found) throw badRequest('No such user');
  return accessUser(svc, db, realm, viewer, found.id, { allowBots: true, ...opts });
}

/** The organization's active administrators and owners (who hear of exports and export consent). */
export async function activeAdministratorIds(db: Executor, realmId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('is_active', '=', true)
    .where('role', '<=', ROLE.ADMINISTRATOR)
    .execute();
  return rows.map((r) => r.id);
}
