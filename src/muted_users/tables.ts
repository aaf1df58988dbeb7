import type { Selectable } from 'kysely';
import type { Timestamp } from '../realm/tables.ts';

/** `user_id` muted `muted_user_id` at `date_muted`. */
export interface MutedUserTable {
  realm_id: number;
  user_id: number;
  muted_user_id: number;
  date_muted: Timestamp;
}

export interface MutedUserTables {
  muted_users: MutedUserTable;
}

export type MutedUser = Selectable<MutedUserTable>;
