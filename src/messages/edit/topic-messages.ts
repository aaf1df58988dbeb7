// Reads an edit makes of a topic's messages: the topic, and what of it a user may read.

import { sql } from 'kysely';
import type { Channel } from '../../channels/tables.ts';
import type { Message } from '../tables.ts';
import type { Tx } from '../../db/transact.ts';
import { hasContentAccess, type ChannelViewer } from '../../channels/access.ts';
import { intArray } from '../state-support.ts';

/** Messages of a topic (any case), oldest first, locked for the move. */
export async function topicMessages(tx: Tx, channelId: number, topic: string): Promise<Message[]> {
  return tx
    .selectFrom('messages')
    .selectAll()
    .where('channel_id', '=', channelId)
    .where(sql<string>`lower(topic)`, '=', topic.toLowerCase())
    .orderBy('id')
    .forUpdate()
    .execute();
}

/**
 * The messages of a list a user may read in a channel: all of them where its
 * history is shared with them, else only their own copies.
 */
export async function readableBy(tx: Tx, viewer: ChannelViewer, channel: Channel, messages: Message[]): Promise<Message[]> {
  if (messages.length === 0 || !hasContentAccess(viewer, channel)) return [];
  if (channel.history_public_to_subscribers) return messages;
  const own = await tx
    .selectFrom('user_messages')
    .select('message_id')
    .where('user_id', '=', viewer.user.id)
    .where('message_id', '=', sql<number>`any(${intArray(messages.map((m) => m.id))})`)
    .execute();
  const ids = new Set(own.map((r) => r.message_id));
  return messages.filter((m) => ids.has(m.id));
}
