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
  /** The icon: 'G' generated, 'U' uploaded; logos: 'D' default, 'U' uploaded. Versions bust caches. */
  icon_source: Generated<string>;
  icon_version: Generated<number>;
  logo_source: Generated<string>;
  logo_version: Generated<number>;
  night_logo_source: Generated<string>;
  night_logo_version: Generated<number>;
}

export interface RealmTables {
  realms: RealmTable;
}

export type Realm = Selectable<RealmTable>;
