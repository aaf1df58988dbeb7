// Messages sent per channel and day: channel traffic and recent activity
// without counting messages on every read.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    create table channel_daily_messages (
      realm_id integer not null,
      channel_id integer not null,
      day date not null,
      count integer not null,
      primary key (channel_id, day),
      foreign key (realm_id, channel_id) references channels (realm_id, id)
    );
  `,
  );
}
