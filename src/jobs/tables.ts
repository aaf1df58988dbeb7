import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Json, Timestamp } from '../realm/tables.ts';

export interface JobTable {
  id: ColumnType<string, never, never>;
  realm_id: number | null;
  kind: string;
  payload: Json<Record<string, unknown>>;
  attempts: Generated<number>;
  run_after: ColumnType<Date, Date | string | undefined, Date | string>;
  locked_until: Timestamp | null;
  last_error: string | null;
  failed_at: Timestamp | null;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface JobTables {
  jobs: JobTable;
}

export type Job = Selectable<JobTable>;
