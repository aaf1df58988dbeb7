// Saved snippets: a user's reusable pieces of message text.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table saved_snippets (
      id serial primary key,
      realm_id integer not null references realms (id),
      user_id integer not null,
      title text not null,
      content text not null,
      date_created timestamptz not null default now(),
      foreign key (realm_id, user_id) references users (realm_id, id)
    );
    create index saved_snippets_user on saved_snippets (user_id);
  `,
  );
}
