import type { Executor } from '../db/schema.ts';
import type { Hooked } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { accessibleUsers, canAccess, type AccessibleUsers } from '../users/queries.ts';
import { userSettings } from '../users/settings.ts';
import { formatStatus, type ApiUserStatus } from './format.ts';

/** One user's status; `{}` when they never set one. */
export async function userStatus(db: Executor, user: User): Promise<ApiUserStatus> {
  const row = await db.selectFrom('user_statuses').selectAll().where('user_id', '=', user.id).executeTakeFirst();
  return row ? formatStatus(row, userSettings(user).presence_enabled as boolean) : {};
}

/**
 * Register's `user_status`: the active users the viewer may see who have a
 * status row that says something (text, emoji, or away), keyed by id.
 */
export async function statusesVisibleTo(
  svc: Hooked,
  db: Executor,
  realm: Realm,
  viewer: User,
  /** Whom the viewer may see, when the caller knows it already (register). */
  known?: Promise<AccessibleUsers>,
): Promise<Record<string, ApiUserStatus>> {
  const rows = await db
    .selectFrom('user_statuses as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .selectAll('s')
    .select(['u.settings', 'u.timezone'])
    .where('s.realm_id', '=', realm.id)
    .where('u.is_active', '=', true)
    .orderBy('s.user_id')
    .execute();
  const access = await (known ?? accessibleUsers(svc, db, realm, viewer));
  const out: Record<string, ApiUserStatus> = {};
  for (const row of rows) {
    if (!canAccess(access, row.user_id)) continue;
    const status = formatStatus(row, userSettings(row).presence_enabled as boolean);
    if (Object.keys(status).length > 0) out[String(row.user_id)] = status;
  }
  return out;
}
