import type { Generated, Selectable } from 'kysely';

/** An organization's linkifier: a pattern and the URL template its matches link to. */
export interface LinkifierTable {
  id: Generated<number>;
  realm_id: number;
  /** RE2 syntax, Python-style named groups `(?P<name>...)`. */
  pattern: string;
  /** RFC 6570 template over the pattern's named groups. */
  url_template: string;
  /** Processing order (ties: by id); new linkifiers go last. */
  position: Generated<number>;
}

export interface LinkifierTables {
  linkifiers: LinkifierTable;
}

export type LinkifierRow = Selectable<LinkifierTable>;
