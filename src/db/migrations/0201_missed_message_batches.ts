// A user's pending missed-message batch as one row: a send joins the batch by
// upserting it (a row lock, however many users a message reaches), where it
// used to take an advisory lock per user, which a mention of 20,000 people
// could not hold in one transaction.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table missed_message_batches (
      user_id integer primary key,
      realm_id integer not null,
      -- when the batch is emailed; its messages' rows carry the same time
      scheduled_at timestamptz not null,
      foreign key (realm_id, user_id) references users (realm_id, id) on delete cascade
    );
    insert into missed_message_batches (user_id, realm_id, scheduled_at)
      select user_id, min(realm_id), min(scheduled_at) from missed_message_emails group by user_id;
    `,
  );
}
