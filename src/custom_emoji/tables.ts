import type { Generated, Selectable } from 'kysely';
import type { Timestamp } from '../realm/tables.ts';

/** A custom emoji. Deactivated ones stay: old messages and reactions still show them. */
export interface RealmEmojiTable {
  id: Generated<number>;
  realm_id: number;
  /** Unique among the organization's active emoji. */
  name: string;
  /** Null when the uploader is unknown (imported data). */
  author_id: number | null;
  /** The image under the organization's emoji folder: `<id>-<random>.<ext>`. */
  file_name: string;
  /** Animated images: the first frame, `still/<file_name>`; null otherwise. */
  still_file_name: string | null;
  deactivated: Generated<boolean>;
  date_created: Timestamp;
}

export interface RealmEmojiTables {
  realm_emoji: RealmEmojiTable;
}

export type RealmEmojiRow = Selectable<RealmEmojiTable>;
