// Recipient rows: one per channel, one per direct message conversation (the
// sorted set of its participants, the same for both directions).

import { sql } from 'kysely';
import type { Tx } from '../../db/transact.ts';
import type { Executor } from '../../db/schema.ts';

export function dmKey(userIds: number[]): string {
  return [...new Set(userIds)].sort((a, b) => a - b).join(',');
}

/**
 * A channel's recipient row, as a column of the statement that reads the channel as `c` and locks
 * it for key share (channelViewerAnd's `also`): null before its first message (then channelRecipientId).
 */
export const channelRecipientColumn = sql<number>`(select r.id from recipients r where r.channel_id = c.id)`;

export async function channelRecipientId(tx: Tx, realmId: number, channelId: number): Promise<number> {
  // Every message after a channel's first finds its row: one read. It takes the key-share lock on the
  // channel that the message's foreign key would take later: an idle subscriber's catch-up, which locks
  // the channel for update, ends before the send reads its subscribers or starts after its commit
  // (messages/soft-deactivation.ts). Sends do not wait on each other for it.
  const found = await tx
    .selectFrom('recipients as r')
    .innerJoin('channels as c', 'c.id', 'r.channel_id')
    .select('r.id')
    .where('r.channel_id', '=', channelId)
    .forKeyShare('c')
    .executeTakeFirst();
  if (found) return found.id;
  // Concurrent first messages to a channel race here: the unique key settles it.
  await tx
    .insertInto('recipients')
    .values({ realm_id: realmId, channel_id: channelId, dm_key: null, dm_user_ids: null })
    .onConflict((oc) => oc.column('channel_id').doNothing())
    .execute();
  const row = await tx.selectFrom('recipients').select('id').where('channel_id', '=', channelId).executeTakeFirstOrThrow();
  return row.id;
}

export async function dmRecipientId(tx: Tx, realmId: number, userIds: number[]): Promise<number> {
  const key = dmKey(userIds);
  await tx
    .insertInto('recipients')
    .values({ realm_id: realmId, channel_id: null, dm_key: key, dm_user_ids: key.split(',').map(Number) })
    .onConflict((oc) => oc.columns(['realm_id', 'dm_key']).doNothing())
    .execute();
  const row = await tx.selectFrom('recipients').select('id').where('realm_id', '=', realmId).where('dm_key', '=', key).executeTakeFirstOrThrow();
  return row.id;
}

/** Users who share a direct message conversation with `user`: they may see each other. */
export async function directMessagePartners(db: Executor, realm: { id: number }, user: { id: number }): Promise<number[]> {
  const rows = await db
    .selectFrom('recipients')
    .select('dm_user_ids')
    .where('realm_id', '=', realm.id)
    .where('dm_key', 'is not', null)
    .where(sql<boolean>`${user.id} = any(dm_user_ids)`)
    .execute();
  return [...new Set(rows.flatMap((r) => r.dm_user_ids ?? []))];
}
