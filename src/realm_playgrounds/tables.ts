import type { Generated, Selectable } from 'kysely';

/** Where code blocks of one language can be opened ("view in playground"). */
export interface RealmPlaygroundTable {
  id: Generated<number>;
  realm_id: number;
  name: string;
  pygments_language: string;
  /** RFC 6570 template whose one variable is `code`. */
  url_template: string;
}

export interface RealmPlaygroundTables {
  realm_playgrounds: RealmPlaygroundTable;
}

export type RealmPlayground = Selectable<RealmPlaygroundTable>;
