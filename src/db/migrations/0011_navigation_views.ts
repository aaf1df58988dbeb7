// Navigation views: each user's pinned or hidden sidebar views.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table navigation_views (
      id serial primary key,
      realm_id integer not null,
      user_id integer not null,
      fragment text not null,
      is_pinned boolean not null,
      name text,
      unique (user_id, fragment),
      foreign key (realm_id, user_id) references users (realm_id, id)
    );
    create unique index navigation_views_user_name on navigation_views (user_id, name) where name is not null;
    `,
  );
}
