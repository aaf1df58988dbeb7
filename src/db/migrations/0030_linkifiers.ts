// Linkifiers: per-organization patterns that turn text into links, in order.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table linkifiers (
      id serial primary key,
      realm_id integer not null references realms (id),
      pattern text not null,
      url_template text not null,
      position integer not null default 0,
      unique (realm_id, id),
      unique (realm_id, pattern)
    );
  `,
  );
}
