// Who may do what with a message, in one place: read it (canSee, the
// reference's has_message_access), change or delete it, send a direct message
// under the organization's policies, and change flags of messages without a copy.

import { sql } from 'kysely';
import type { Executor } from '../db/schema.ts';
import type { Tx } from '../db/transact.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Channel } from '../channels/tables.ts';
import type { Message } from './tables.ts';
import type { Searcher } from './fetch/search.ts';
import { badRequest } from '../http/errors.ts';
import { settingsOf } from '../realm/queries.ts';
import { channelViewer, hasContentAccess, holdsChannelPermission, holdsRealmPermission, type ChannelViewer } from '../channels/access.ts';
import { getChannel } from '../channels/queries.ts';
import { systemGroupIds } from '../user_groups/group-setting.ts';
import { REALM_PERMISSION_SETTINGS, hasPermission } from '../user_groups/permission-settings.ts';
import { intArray } from './state-support.ts';

export const invalidMessage = () => badRequest('Invalid message(s)');

/**
 * Whether a searcher may read one message (the reference's has_message_access):
 * a direct message needs a copy; a channel message needs access to the channel
 * now, and, where the channel's history is protected, a copy too.
 */
export async function canSee(db: Executor, s: Searcher, message: Message, hasCopy?: boolean): Promise<boolean> {
  const copy = async () =>
    hasCopy ??
    (s.viewer !== null &&
      (await db
        .selectFrom('user_messages')
        .select('message_id')
        .where('user_id', '=', s.viewer.user.id)
        .where('message_id', '=', message.id)
        .executeTakeFirst()) !== undefined);
  if (message.channel_id === null) return copy();
  const channel = (await getChannel(db, s.realm.id, message.channel_id))!;
  const readable = s.viewer ? hasContentAccess(s.viewer, channel) : channel.is_web_public;
  if (!readable) return false;
  return channel.history_public_to_subscribers || (await copy());
}

/**
 * A message the user may read, locked for the rest of the transaction so that
 * concurrent edits and deletions take turns. Messages of archived channels can
 * be read but not changed (as the reference's `is_modifying_message`).
 */
export async function messageToChange(tx: Tx, viewer: ChannelViewer, messageId: number): Promise<{ message: Message; channel: Channel | null }> {
  const message = await tx
    .selectFrom('messages')
    .selectAll()
    .where('realm_id', '=', viewer.realm.id)
    .where('id', '=', messageId)
    .forUpdate()
    .executeTakeFirst();
  if (!message || !(await canSee(tx, { realm: viewer.realm, viewer }, message))) throw invalidMessage();
  const channel = message.channel_id === null ? null : ((await getChannel(tx, viewer.realm.id, message.channel_id)) ?? null);
  if (channel?.is_archived) throw invalidMessage();
  return { message, channel };
}

const noPermission = () => badRequest("You don't have permission to delete this message");

/** The reference's rules, in its order (validate_can_delete_message). */
export async function checkCanDelete(tx: Tx, viewer: ChannelViewer, message: Message, channel: Channel | null): Promise<void> {
  if (holdsRealmPermission(viewer, 'can_delete_any_message_group')) return;
  if (channel && holdsChannelPermission(viewer, channel, 'can_delete_any_message_group')) return;
  const { user } = viewer;
  if (message.sender_id !== user.id) {
    // A bot's owner may delete what the bot sent.
    const sender = await tx.selectFrom('users').select('bot_owner_id').where('id', '=', message.sender_id).executeTakeFirstOrThrow();
    if (sender.bot_owner_id !== user.id) throw noPermission();
  }
  if (!holdsRealmPermission(viewer, 'can_delete_own_message_group')) {
    if (!channel || !holdsChannelPermission(viewer, channel, 'can_delete_own_message_group')) throw noPermission();
  }
  const limit = settingsOf(viewer.realm).message_content_delete_limit_seconds as number | null;
  if (limit !== null && Date.now() - message.date_sent.getTime() > limit * 1000) {
    throw badRequest('The time limit for deleting this message has passed');
  }
}

/** The organization's direct message policies, for a conversation among `participants`. */
export async function checkDirectMessagePolicy(tx: Tx, viewer: ChannelViewer, participants: User[], recipientId: number): Promise<void> {
  const { realm, user: sender } = viewer;
  const others = participants.filter((u) => u.id !== sender.id);
  if (others.length === 0) return;
  const permission = realm.group_settings.direct_message_permission_group;
  const setting = REALM_PERMISSION_SETTINGS.direct_message_permission_group;
  // Allowed when someone in the conversation is in the group (bots always may receive).
  let allowed = others.every((u) => u.is_bot) || holdsRealmPermission(viewer, 'direct_message_permission_group');
  for (const u of others) if (!allowed && (await hasPermission(tx, u, setting, permission))) allowed = true;
  if (!allowed) {
    if (permission === (await systemGroupIds(tx, realm.id))['role:nobody']) throw badRequest('Direct messages are disabled in this organization.');
    throw badRequest('You do not have permission to send direct messages to this recipient.');
  }
  if (!holdsRealmPermission(viewer, 'direct_message_initiator_group')) {
    const earlier = await tx.selectFrom('messages').select('id').where('recipient_id', '=', recipientId).limit(1).executeTakeFirst();
    if (!earlier) throw badRequest('You do not have permission to initiate direct message conversations.');
  }
}

/** Messages the user has no copy of must exist in the organization and be readable by them. */
export async function checkFlagAccess(tx: Tx, realm: Realm, user: User, ids: number[]): Promise<void> {
  const found = await tx
    .selectFrom('messages')
    .select(['id', 'channel_id'])
    .where('realm_id', '=', realm.id)
    .where('id', '=', sql<number>`any(${intArray(ids)})`)
    .execute();
  if (found.length !== ids.length) throw invalidMessage();
  // Without a copy, access depends on the channel alone: one message per channel is asked about.
  const perChannel = new Map<number | null, number>();
  for (const m of found) if (!perChannel.has(m.channel_id)) perChannel.set(m.channel_id, m.id);
  const searcher: Searcher = { realm, viewer: await channelViewer(tx, realm, user) };
  const samples = await tx
    .selectFrom('messages')
    .selectAll()
    .where('id', 'in', [...perChannel.values()])
    .execute();
  for (const message of samples as Message[]) if (!(await canSee(tx, searcher, message, false))) throw invalidMessage();
}
