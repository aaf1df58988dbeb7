import type { ColumnType, Generated, Selectable } from 'kysely';

export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type Json<T> = ColumnType<T, string | undefined, string>;

export interface RealmTable {
  id: Generated<number>;
  /** The subdomain; '' for the organization at the server's root. */
  string_id: string;
  name: string;
  description: Generated<string>;
  deactivated: Generated<boolean>;
  date_created: Timestamp;
  /** Organization settings that differ from the defaults in realm/settings.ts. */
  settings: Json<Record<string, unknown>>;
  /** Organization permission settings: setting name -> user group id. */
  group_settings: Json<Record<string, number>>;
}

export interface RealmTables {
  realms: RealmTable;
}

export type Realm = Selectable<RealmTable>;
