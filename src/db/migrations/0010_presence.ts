// Presence: each user's latest active and idle (connected) times, and a
// per-organization sequence so that clients can fetch only what changed.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table user_presence (
      realm_id integer not null,
      user_id integer not null primary key,
      last_active_time timestamptz,
      last_connected_time timestamptz,
      last_update_id bigint not null,
      foreign key (realm_id, user_id) references users (realm_id, id)
    );
    create index user_presence_realm_update on user_presence (realm_id, last_update_id);

    create table presence_sequences (
      realm_id integer primary key references realms (id),
      last_update_id bigint not null
    );
    `,
  );
}
