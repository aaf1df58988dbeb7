// Custom emoji: images an organization adds to the emoji set.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table realm_emoji (
      id serial primary key,
      realm_id integer not null references realms (id),
      name text not null,
      author_id integer,
      file_name text not null,
      still_file_name text,
      deactivated boolean not null default false,
      date_created timestamptz not null default now(),
      unique (realm_id, id),
      foreign key (realm_id, author_id) references users (realm_id, id)
    );
    create unique index realm_emoji_active_name on realm_emoji (realm_id, name) where not deactivated;
  `,
  );
}
