// Code playgrounds: where an organization's code blocks of a language open.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table realm_playgrounds (
      id serial primary key,
      realm_id integer not null references realms (id),
      name text not null,
      pygments_language text not null,
      url_template text not null,
      unique (realm_id, pygments_language, name)
    );
    `,
  );
}
