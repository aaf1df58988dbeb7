import type { Generated, Selectable } from 'kysely';
import type { Timestamp } from '../realm/tables.ts';

/** A user's status: one row per user who ever set one (empty strings = nothing set). */
export interface UserStatusTable {
  user_id: number;
  realm_id: number;
  status_text: Generated<string>;
  emoji_name: Generated<string>;
  emoji_code: Generated<string>;
  reaction_type: Generated<string>;
  /** The client that set it last (the reference keeps it too; not shown). */
  client: Generated<string>;
  updated_at: Timestamp;
}

export interface UserStatusTables {
  user_statuses: UserStatusTable;
}

export type UserStatusRow = Selectable<UserStatusTable>;
