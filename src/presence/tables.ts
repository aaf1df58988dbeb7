import type { Selectable } from 'kysely';
import type { Timestamp } from '../realm/tables.ts';

/** The latest activity of a user (one row per user), as clients report it. */
export interface UserPresenceTable {
  realm_id: number;
  user_id: number;
  /** Last report with status "active"; null when the user was only ever idle. */
  last_active_time: Timestamp | null;
  /** Last report of any status. */
  last_connected_time: Timestamp | null;
  /** From the organization's presence sequence: clients fetch what changed after an id. */
  last_update_id: number;
}

/** One counter per organization, incremented (and row-locked) by every presence write. */
export interface PresenceSequenceTable {
  realm_id: number;
  last_update_id: number;
}

export interface PresenceTables {
  user_presence: UserPresenceTable;
  presence_sequences: PresenceSequenceTable;
}

export type UserPresence = Selectable<UserPresenceTable>;
