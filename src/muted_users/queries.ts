import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../db/schema.ts';

export interface MutedUserEntry {
  id: number;
  timestamp: number;
}

/** The users `userId` muted, with when: register's `muted_users` and its event. */
export async function mutedUsers(db: Executor, userId: number): Promise<MutedUserEntry[]> {
  const rows = await db
    .selectFrom('muted_users')
    .select(['muted_user_id', 'date_muted'])
    .where('user_id', '=', userId)
    .orderBy('date_muted')
    .orderBy('muted_user_id')
    .execute();
  return rows.map((r) => ({ id: r.muted_user_id, timestamp: Math.floor(new Date(r.date_muted).getTime() / 1000) }));
}

export async function hasMuted(db: Executor, userId: number, mutedUserId: number): Promise<boolean> {
  const row = await db.selectFrom('muted_users').select('user_id').where('user_id', '=', userId).where('muted_user_id', '=', mutedUserId).executeTakeFirst();
  return row !== undefined;
}

/** Whether the user `u` of a query muted `senderId`: the same test, as a column or filter of a query of users (one read of the muters). */
export function mutesSender(senderId: number): RawBuilder<boolean> {
  return sql<boolean>`u.id in (select mu.user_id from muted_users mu where mu.muted_user_id = ${senderId})`;
}

/** Which of `userIds` muted `senderId` (`user_id`): their copies of its messages arrive read. A send reads it within a larger statement. */
export function mutersAmong(db: Executor, senderId: number, userIds: readonly number[]) {
  return db.selectFrom('muted_users').select('user_id').where('muted_user_id', '=', senderId).where('user_id', '=', sql<number>`any(${userIds}::int[])`);
}
