import type { Generated, Selectable } from 'kysely';

/** The reference's export types. */
export const EXPORT_TYPE = { PUBLIC: 1, STANDARD: 2 } as const;

export interface RealmExportTable {
  id: Generated<number>;
  realm_id: number;
  acting_user_id: number;
  export_type: number;
  created_at: Generated<Date>;
  path: string | null;
  failed_at: Date | null;
  deleted_at: Date | null;
}

export interface RealmExportTables {
  realm_exports: RealmExportTable;
}

export type RealmExport = Selectable<RealmExportTable>;
