// What editing and deleting messages share: finding a message the user may
// change, and who hears about a change to it.

import { sql } from 'kysely';
import type { Tx } from '../../db/transact.ts';
import type { Channel } from '../../channels/tables.ts';
import { subscriberIds } from '../../channels/queries.ts';
import { intArray } from '../state-support.ts';

/** Users with a copy of any of the messages. */
export async function copyHolders(tx: Tx, messageIds: number[]): Promise<Set<number>> {
  if (messageIds.length === 0) return new Set();
  const rows = await tx
    .selectFrom('user_messages')
    .select('user_id')
    .distinct()
    .where('message_id', '=', sql<number>`any(${intArray(messageIds)})`)
    .execute();
  return new Set(rows.map((r) => r.user_id));
}

/**
 * Who hears of a change to messages of one conversation: everyone with a copy
 * (a copy is access, see canSee), and where the channel's history is shared,
 * its subscribers, who may have read them as history.
 */
export async function messageAudience(tx: Tx, messageIds: number[], channel: Channel | null): Promise<Set<number>> {
  const users = await copyHolders(tx, messageIds);
  if (channel?.history_public_to_subscribers) for (const id of (await subscriberIds(tx, [channel.id])).get(channel.id)!) users.add(id);
  return users;
}

/** The channel's first message, for `first_message_id`. */
export async function firstMessageId(tx: Tx, channelId: number): Promise<number | null> {
  const row = await tx
    .selectFrom('messages')
    .select((eb) => eb.fn.min<number>('id').as('id'))
    .where('channel_id', '=', channelId)
    .executeTakeFirst();
  return row?.id ?? null;
}
