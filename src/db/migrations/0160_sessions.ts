// Browser sessions (the web client signs in with a password and gets a cookie)
// and password-reset tokens. Only hashes of the secrets are stored: a copy of
// the database opens no account.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table sessions (
      id serial primary key,
      -- sha-256 of the cookie's value
      token_hash text not null unique,
      realm_id integer not null,
      user_id integer not null,
      -- the value of the csrftoken cookie, which X-CSRFToken must repeat
      csrf_token text not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      foreign key (realm_id, user_id) references users (realm_id, id) on delete cascade
    );
    create index sessions_user on sessions (realm_id, user_id);
    create index sessions_expires on sessions (expires_at);

    create table password_reset_tokens (
      id serial primary key,
      -- sha-256 of the secret in the emailed link
      token_hash text not null unique,
      realm_id integer not null,
      user_id integer not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz,
      foreign key (realm_id, user_id) references users (realm_id, id) on delete cascade
    );
    create index password_reset_tokens_user on password_reset_tokens (realm_id, user_id);
    `,
  );
}
