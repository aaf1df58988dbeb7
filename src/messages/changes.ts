// What editing and deleting messages share: finding a message the user may
// change, and who hears about a change to it.

import { sql } from 'kysely';
import type { Tx } from '../db/transact.ts';
import type { Channel } from '../channels/tables.ts';
import type { Message } from './tables.ts';
import { badRequest } from '../http/errors.ts';
import { getChannel, subscriberIds } from '../channels/queries.ts';
import type { ChannelViewer } from '../channels/access.ts';
import { canSee } from './search.ts';
import { intArray } from './state-support.ts';

export const invalidMessage = () => badRequest('Invalid message(s)');

/**
 * A message the user may read, locked for the rest of the transaction so that
 * concurrent edits and deletions take turns. Messages of archived channels can
 * be read but not changed (as the reference's `is_modifying_message`).
 */
export async function messageToChange(tx: Tx, viewer: ChannelViewer, messageId: number): Promise<{ message: Message; channel: Channel | null }> {
  const message = await tx.selectFrom('messages').selectAll().where('realm_id', '=', viewer.realm.id).where('id', '=', messageId).forUpdate().executeTakeFirst();
  if (!message || !(await canSee(tx, { realm: viewer.realm, viewer }, message))) throw invalidMessage();
  const channel = message.channel_id === null ? null : ((await getChannel(tx, viewer.realm.id, message.channel_id)) ?? null);
  if (channel?.is_archived) throw invalidMessage();
  return { message, channel };
}

/** Users with a copy of any of the messages. */
export async function copyHolders(tx: Tx, messageIds: number[]): Promise<Set<number>> {
  if (messageIds.length === 0) return new Set();
  const rows = await tx.selectFrom('user_messages').select('user_id').distinct().where('message_id', '=', sql<number>`any(${intArray(messageIds)})`).execute();
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
  const row = await tx.selectFrom('messages').select((eb) => eb.fn.min<number>('id').as('id')).where('channel_id', '=', channelId).executeTakeFirst();
  return row?.id ?? null;
}
