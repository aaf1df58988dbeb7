// The archive: messages removed by the retention policy (and the rows that
// hang off them) kept for a grace period so they can be restored, as the
// reference's ArchiveTransaction / Archived* tables. Rows are kept as JSON of
// the live row, so the archive follows the live tables' columns as they grow.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table archive_transactions (
      id serial primary key,
      realm_id integer not null references realms (id),
      -- 1: the retention policy, 2: by hand
      kind smallint not null,
      created_at timestamptz not null default now(),
      restored boolean not null default false,
      unique (realm_id, id)
    );
    create index archive_transactions_created on archive_transactions (created_at);

    create table archived_messages (
      realm_id integer not null,
      transaction_id integer not null,
      message_id integer not null,
      channel_id integer,
      data jsonb not null,
      primary key (message_id),
      foreign key (realm_id, transaction_id) references archive_transactions (realm_id, id) on delete cascade
    );
    create index archived_messages_transaction on archived_messages (transaction_id);

    -- user_messages and reactions of archived messages: table_name says which.
    create table archived_message_rows (
      realm_id integer not null,
      transaction_id integer not null,
      message_id integer not null,
      table_name text not null,
      data jsonb not null,
      foreign key (realm_id, transaction_id) references archive_transactions (realm_id, id) on delete cascade
    );
    create index archived_message_rows_transaction on archived_message_rows (transaction_id);
  `,
  );
}
