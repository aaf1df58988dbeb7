// A push token may be as long as the reference allows (4,096 characters), longer
// than a btree index row can hold: uniqueness moves to a digest of the token.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    alter table push_device_tokens drop constraint push_device_tokens_user_id_kind_token_key;
    alter table push_device_tokens add column token_digest text generated always as (md5(token)) stored;
    alter table push_device_tokens add constraint push_device_tokens_user_kind_digest unique (user_id, kind, token_digest);
    `,
  );
}
