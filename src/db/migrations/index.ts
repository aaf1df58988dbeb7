// Every migration, in the order it runs (Kysely sorts by name). A domain adds its
// schema changes as a new numbered file here; applied files are never edited.
import type { Migration } from 'kysely/migration';
import * as foundation from './0001_foundation.ts';

export const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
};
