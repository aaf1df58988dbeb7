// The Message resource (spec "Message"; digest 1.5): the one definition of the
// message object, used by GET /messages, GET /messages/{id} and message events.
// Formatting works on a batch, with a fixed number of queries per batch.

import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { EditHistoryEntry, Message, ReactionTable } from './tables.ts';
import type { Channel } from '../channels/tables.ts';
import { avatarUrlFor, canSeeDeliveryEmail } from '../users/format.ts';
import { settingsOf } from '../realm/queries.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../events/shape.ts';
import { topicLinker } from '../linkifiers/rendering.ts';
import type { TopicLink } from '../markdown/index.ts';
import { flagNames, HISTORICAL_FLAGS } from './flags/flags.ts';
import { submessagesOf, type ApiSubmessage } from './submessages/submessages.ts';

interface ApiMessageBase extends Record<string, unknown> {
  id: number;
  subject: string;
  sender_id: number;
}

/** A channel message names its channel; a direct message its participants. */
export type ApiMessage = ApiMessageBase &
  ({ type: 'stream'; stream_id: number; display_recipient: string } | { type: 'private'; stream_id?: undefined; display_recipient: { id: number }[] });

export interface FormatOptions {
  /** Who is looking: decides avatars and flags. Null for a spectator. */
  viewer: Pick<User, 'id' | 'role'> | null;
  applyMarkdown: boolean;
  clientSvcavatar: boolean;
  allowEmptyTopicName: boolean;
  /** The viewer's flags per message; a message without an entry is public history. Omit for no `flags` key. */
  flags?: Map<number, number>;
}

/**
 * What the caller already holds for a batch (a message it has just written, in
 * its transaction): each part given spares a read. Reactions and submessages are
 * then the complete lists.
 */
export interface KnownParts {
  senders?: MessageSender[];
  channels?: Pick<Channel, 'id' | 'name'>[];
  reactions?: Pick<ReactionTable, 'message_id' | 'user_id' | 'emoji_name' | 'emoji_code' | 'reaction_type'>[];
  submessages?: Map<number, ApiSubmessage[]>;
  /** Topic -> `topic_links`. */
  linkTopic?: (topic: string) => TopicLink[];
}

/** The columns of a sender that a message object is made of. */
export const SENDER_COLUMNS = [
  'id',
  'realm_id',
  'full_name',
  'email',
  'delivery_email',
  'avatar_source',
  'avatar_version',
  'is_bot',
  'settings',
] as const satisfies readonly (keyof User)[];

export type MessageSender = Pick<User, (typeof SENDER_COLUMNS)[number]>;

/** A message's edit history as the organization lets users see it (most recent first). */
export function visibleEditHistory(realm: Realm, history: EditHistoryEntry[] | null): EditHistoryEntry[] | undefined {
  if (!history || history.length === 0) return undefined;
  const policy = settingsOf(realm).message_edit_history_visibility_policy;
  if (policy === 'none') return undefined;
  const newestFirst = [...history].reverse();
  if (policy === 'all') return newestFirst;
  const moves = newestFirst
    .filter((e) => e.prev_topic !== undefined || e.prev_stream !== undefined)
    .map(({ prev_content: _c, prev_rendered_content: _r, ...rest }) => rest);
  return moves.length > 0 ? moves : undefined;
}

/** The columns of a message that formatting reads (not the search vector, nor the has_* facts). */
export const FORMATTED_COLUMNS = [
  'id',
  'sender_id',
  'recipient_id',
  'channel_id',
  'topic',
  'content',
  'rendered_content',
  'date_sent',
  'client',
  'is_me_message',
  'last_edit_at',
  'last_moved_at',
  'edit_history',
] as const satisfies readonly (keyof Message)[];

export type FormattedMessageRow = Pick<Message, (typeof FORMATTED_COLUMNS)[number]>;

export async function formatMessages(
  db: Executor,
  realm: Realm,
  rows: FormattedMessageRow[],
  opts: FormatOptions,
  known: KnownParts = {},
): Promise<ApiMessage[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((m) => m.id);
  const senderIds = [...new Set(rows.map((m) => m.sender_id))];
  const channelIds = [...new Set(rows.map((m) => m.channel_id).filter((id): id is number => id !== null))];
  const recipientIds = [...new Set(rows.filter((m) => m.channel_id === null).map((m) => m.recipient_id))];
  const [senders, channels, dmRecipients, reactions, linkTopic, submessages] = await Promise.all([
    known.senders ?? db.selectFrom('users').select(SENDER_COLUMNS).where('id', 'in', senderIds).execute(),
    known.channels ?? (channelIds.length > 0 ? db.selectFrom('channels').select(['id', 'name']).where('id', 'in', channelIds).execute() : []),
    recipientIds.length > 0 ? db.selectFrom('recipients').select(['id', 'dm_user_ids']).where('id', 'in', recipientIds).execute() : [],
    known.reactions ??
      db
        .selectFrom('reactions')
        .select(['message_id', 'user_id', 'emoji_name', 'emoji_code', 'reaction_type'])
        .where('message_id', 'in', ids)
        .orderBy('created_at')
        .orderBy('user_id')
        .execute(),
    known.linkTopic ?? topicLinker(db, realm.id),
    known.submessages ?? submessagesOf(db, ids),
  ]);
  const dmUserIds = [...new Set(dmRecipients.flatMap((r) => r.dm_user_ids ?? []))];
  const dmUsers =
    dmUserIds.length > 0 ? await db.selectFrom('users').select(['id', 'email', 'full_name', 'is_mirror_dummy']).where('id', 'in', dmUserIds).execute() : [];
  const senderById = new Map(senders.map((u) => [u.id, u]));
  const channelName = new Map(channels.map((c) => [c.id, c.name]));
  const dmUserById = new Map(dmUsers.map((u) => [u.id, u]));
  const displayDm = new Map(
    dmRecipients.map((r) => [
      r.id,
      (r.dm_user_ids ?? []).map((id) => {
        const u = dmUserById.get(id)!;
        return { email: u.email, full_name: u.full_name, id: u.id, is_mirror_dummy: u.is_mirror_dummy };
      }),
    ]),
  );
  const reactionsOf = new Map<number, Record<string, unknown>[]>();
  for (const r of reactions) {
    const list = reactionsOf.get(r.message_id) ?? [];
    list.push({ emoji_name: r.emoji_name, emoji_code: r.emoji_code, reaction_type: r.reaction_type, user_id: r.user_id });
    reactionsOf.set(r.message_id, list);
  }

  // Once per sender, not per message (a provider avatar is an MD5 of the email).
  const avatars = new Map<number, string | null>();
  const avatarOf = (sender: MessageSender) => {
    if (!avatars.has(sender.id)) avatars.set(sender.id, avatarUrlFor(sender, opts.viewer, opts.clientSvcavatar));
    return avatars.get(sender.id)!;
  };

  return rows.map((m) => {
    const sender = senderById.get(m.sender_id)!;
    const isChannel = m.channel_id !== null;
    const subject = isChannel && m.topic === '' && !opts.allowEmptyTopicName ? EMPTY_TOPIC_DISPLAY_NAME : m.topic;
    const recipient =
      m.channel_id !== null
        ? { display_recipient: channelName.get(m.channel_id)!, type: 'stream' as const, stream_id: m.channel_id }
        : { display_recipient: displayDm.get(m.recipient_id)!, type: 'private' as const };
    const message: ApiMessage = {
      id: m.id,
      sender_id: m.sender_id,
      content: opts.applyMarkdown ? m.rendered_content : m.content,
      recipient_id: m.recipient_id,
      timestamp: Math.floor(m.date_sent.getTime() / 1000),
      client: m.client,
      subject,
      topic_links: isChannel ? linkTopic(m.topic) : [],
      is_me_message: m.is_me_message,
      reactions: reactionsOf.get(m.id) ?? [],
      submessages: submessages.get(m.id) ?? [],
      sender_full_name: sender.full_name,
      sender_email: sender.email,
      sender_realm_str: realm.string_id,
      ...recipient,
      avatar_url: avatarOf(sender),
      content_type: opts.applyMarkdown ? 'text/html' : 'text/x-markdown',
    };
    const history = visibleEditHistory(realm, m.edit_history);
    if (history) message.edit_history = history;
    if (m.last_edit_at) message.last_edit_timestamp = Math.floor(m.last_edit_at.getTime() / 1000);
    if (m.last_moved_at) message.last_moved_timestamp = Math.floor(m.last_moved_at.getTime() / 1000);
    if (opts.flags) {
      const bits = opts.flags.get(m.id);
      message.flags = bits === undefined ? (opts.viewer ? [...HISTORICAL_FLAGS] : ['read']) : flagNames(bits);
    }
    return message;
  });
}

/** Whether client_svcavatar clients may compute the sender's avatar themselves (for message events). */
export function senderAvatarComputable(sender: User, viewer: Pick<User, 'id' | 'role'>): boolean {
  return sender.avatar_source === 'G' && canSeeDeliveryEmail(viewer, sender);
}
