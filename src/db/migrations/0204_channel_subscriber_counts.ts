// Each channel's subscriber count, stored: its active subscriptions of active users
// (the API's `subscriber_count`). Register and GET /streams read it instead of counting
// every subscription of the organization; channels/subscriber-counts.ts keeps it.

import type { Kysely } from 'kysely';
import { runScript } from '../script.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    alter table channels add column subscriber_count integer not null default 0;
    update channels c set subscriber_count = n.count
    from (
      select s.channel_id, count(*)::integer as count from subscriptions s join users u on u.id = s.user_id
      where s.active and u.is_active group by s.channel_id
    ) n
    where n.channel_id = c.id;
    `,
  );
}
