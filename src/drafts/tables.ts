import type { Generated, Selectable } from 'kysely';
import type { Json } from '../realm/tables.ts';

/** A message being written, kept on the server so that the user's other clients see it. */
export interface DraftTable {
  id: Generated<number>;
  realm_id: number;
  user_id: number;
  /** '' (unaddressed), 'stream' or 'private'. */
  type: string;
  /** The channel id, or the recipients' user ids (without the author, unless alone). */
  recipients: Json<number[]>;
  topic: string;
  content: string;
  /** When it was last edited, in UNIX seconds: what the API reports and sorts by. */
  last_edit_time: number;
}

export interface DraftTables {
  drafts: DraftTable;
}

export type Draft = Selectable<DraftTable>;
