import type { Generated } from 'kysely';

/** One alert word (or phrase) of a user; unique per user regardless of case. */
export interface AlertWordTable {
  id: Generated<number>;
  realm_id: number;
  user_id: number;
  word: string;
}

export interface AlertWordTables {
  alert_words: AlertWordTable;
}
