// Legacy push tokens (POST /users/me/apns_device_token, /users/me/android_gcm_reg_id):
// kept even where no push service is configured.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table push_device_tokens (
      id serial primary key,
      realm_id integer not null,
      user_id integer not null,
      kind text not null,
      token text not null,
      ios_app_id text,
      last_updated timestamptz not null default now(),
      unique (user_id, kind, token),
      foreign key (realm_id, user_id) references users (realm_id, id)
    );
    `,
  );
}
