// What channels report about their messages: the first message, recent
// activity and weekly traffic (from per-day counts kept as messages are sent).

import { sql, type QueryCreator } from 'kysely';
import type { Database, Executor } from '../../db/schema.ts';
import type { ChannelStats } from '../../channels/format.ts';

const TRAFFIC_DAYS = 28;

/** Rows a channel's count for a day is spread over; a day's count is their sum. */
const SHARDS = 16;

/**
 * Counts a message in its channel's day. The row stays locked until the commit:
 * callers do this late, and consecutive messages add to different shards.
 * `tx`: the transaction, or it `with` a statement of its own that runs as part of this one.
 */
export async function countChannelMessage(tx: QueryCreator<Database>, realmId: number, channelId: number, messageId: number, at: Date): Promise<void> {
  const day = at.toISOString().slice(0, 10);
  await tx
    .insertInto('channel_daily_messages')
    .values({ realm_id: realmId, channel_id: channelId, day, shard: messageId % SHARDS, count: 1 })
    .onConflict((oc) => oc.columns(['channel_id', 'day', 'shard']).doUpdateSet({ count: sql`channel_daily_messages.count + 1` }))
    .execute();
}

export async function channelStats(db: Executor, channelIds: number[]): Promise<Map<number, ChannelStats>> {
  const stats = new Map<number, ChannelStats>();
  if (channelIds.length === 0) return stats;
  const since = new Date(Date.now() - TRAFFIC_DAYS * 86_400_000).toISOString().slice(0, 10);
  const rows = await sql<{ id: number; first_message_id: number | null; last_day: Date | string | null; recent: number | null }>`
    select c.id,
      (select min(m.id) from messages m where m.channel_id = c.id) as first_message_id,
      (select max(d.day) from channel_daily_messages d where d.channel_id = c.id) as last_day,
      (select sum(d.count)::integer from channel_daily_messages d where d.channel_id = c.id and d.day >= ${since}::date) as recent
    from unnest(${sql.val(channelIds)}::integer[]) as c(id)`.execute(db);
  for (const r of rows.rows) {
    stats.set(r.id, {
      first_message_id: r.first_message_id,
      last_message_at: r.last_day === null ? null : Math.floor(new Date(r.last_day).getTime() / 1000) + 86_399,
      recent_messages: r.recent ?? 0,
    });
  }
  return stats;
}
