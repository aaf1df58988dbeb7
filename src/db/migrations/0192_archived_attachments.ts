// Uploads the retention policy took away with their last message: the row is
// kept here (the bytes stay in storage) until its archive transaction is
// forgotten, so a restore within the grace period gives the file back.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table archived_attachments (
      realm_id integer not null,
      transaction_id integer not null,
      attachment_id integer not null primary key,
      data jsonb not null,
      foreign key (realm_id, transaction_id) references archive_transactions (realm_id, id) on delete cascade
    );
    create index archived_attachments_transaction on archived_attachments (transaction_id);
  `,
  );
}
