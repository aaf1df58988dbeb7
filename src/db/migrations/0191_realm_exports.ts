// Data exports made through POST /export/realm (the reference's RealmExport):
// pending until the file is written; then its path, or the time it failed.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table realm_exports (
      id serial primary key,
      realm_id integer not null references realms (id),
      acting_user_id integer not null,
      -- 1: public data, 2: standard
      export_type smallint not null,
      created_at timestamptz not null default now(),
      -- relative to the uploads directory, once written
      path text,
      failed_at timestamptz,
      deleted_at timestamptz,
      unique (realm_id, id),
      foreign key (realm_id, acting_user_id) references users (realm_id, id)
    );
  `,
  );
}
