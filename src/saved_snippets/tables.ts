import type { Generated, Selectable } from 'kysely';
import type { Timestamp } from '../realm/tables.ts';

export interface SavedSnippetTable {
  id: Generated<number>;
  realm_id: number;
  user_id: number;
  title: string;
  /** Markdown, inserted by clients into a message being composed. */
  content: string;
  date_created: Timestamp;
}

export interface SavedSnippetTables {
  saved_snippets: SavedSnippetTable;
}

export type SavedSnippet = Selectable<SavedSnippetTable>;
