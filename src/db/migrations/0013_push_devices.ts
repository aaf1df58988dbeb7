// E2EE push registrations: one per user and client-chosen push_account_id.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table push_devices (
      id serial primary key,
      realm_id integer not null,
      user_id integer not null,
      push_account_id bigint not null,
      token_kind text not null,
      push_public_key text not null,
      bouncer_public_key text not null,
      encrypted_push_registration text not null,
      status text not null,
      error_code text,
      date_created timestamptz not null default now(),
      unique (user_id, push_account_id),
      foreign key (realm_id, user_id) references users (realm_id, id)
    );
    `,
  );
}
