// Soft deactivation (the reference's long_term_idle): users away for a long
// time get no user_messages rows for plain channel messages; the rows they
// missed are added when they come back (messages/soft-deactivation.ts).
// last_active_message_id: every message up to it that the user should hold, they hold.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    alter table users add column long_term_idle boolean not null default false;
    alter table users add column last_active_message_id integer;
    create index users_long_term_idle on users (realm_id, id) where long_term_idle;
    `,
  );
}
