import type { Executor } from '../db/schema.ts';
import type { User } from './tables.ts';
import { jsonRows } from '../db/json-rows.ts';

export type ProfileData = Record<string, { value: string; rendered_value?: string }>;

/**
 * Above this many users, read the organization's values and keep the users'
 * (no long id lists: register and GET /users ask for everyone).
 */
const ID_LIST_LIMIT = 100;

/** Custom profile field values of each user, keyed by field id. */
export async function profileDataFor(db: Executor, realmId: number, users: Pick<User, 'id'>[]): Promise<Map<number, ProfileData>> {
  const result = new Map<number, ProfileData>();
  if (users.length === 0) return result;
  let q = db.selectFrom('custom_profile_field_values').select(['user_id', 'field_id', 'value', 'rendered_value']).where('realm_id', '=', realmId);
  if (users.length <= ID_LIST_LIMIT)
    q = q.where(
      'user_id',
      'in',
      users.map((u) => u.id),
    );
  const wanted = new Set(users.map((u) => u.id));
  for (const row of await jsonRows(db, q.orderBy('field_id'))) {
    if (!wanted.has(row.user_id)) continue;
    let data = result.get(row.user_id);
    if (!data) result.set(row.user_id, (data = {}));
    // Markdown fields (short and long text) carry their HTML too.
    data[String(row.field_id)] = row.rendered_value === null ? { value: row.value } : { value: row.value, rendered_value: row.rendered_value };
  }
  return result;
}
