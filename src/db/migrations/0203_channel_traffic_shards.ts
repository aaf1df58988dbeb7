// A channel's per-day message count spread over a few rows (shards), each send
// adding to one: concurrent sends to a channel no longer wait on one row lock held
// to their commits. Readers sum the shards.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    alter table channel_daily_messages add column shard smallint not null default 0;
    alter table channel_daily_messages drop constraint channel_daily_messages_pkey;
    alter table channel_daily_messages add primary key (channel_id, day, shard);
    `,
  );
}
