import type { Executor } from '../db/schema.ts';
import type { User } from './tables.ts';

/** The newest message id the user has received; -1 before any message exists. */
export async function maxMessageIdFor(db: Executor, user: User): Promise<number> {
  const row = await db
    .selectFrom('user_messages')
    .select('message_id')
    .where('user_id', '=', user.id)
    .orderBy('message_id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.message_id ?? -1;
}
