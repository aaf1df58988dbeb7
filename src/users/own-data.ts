import type { Executor } from '../db/schema.ts';
import type { User } from './tables.ts';

/** The newest message id the user has received; -1 before any message exists. */
export async function maxMessageIdFor(_db: Executor, _user: User): Promise<number> {
  return -1;
}
