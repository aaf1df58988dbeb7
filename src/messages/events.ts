// The events messages cause, built in one place.

import type { ActionContext } from '../db/transact.ts';
import type { User } from '../users/tables.ts';
import type { Message } from './tables.ts';
import { formatMessages, senderAvatarComputable } from './format.ts';
import { flagNames } from './flags/flags.ts';
import type { ApiSubmessage } from './submessages/submessages.ts';
import type { Channel } from '../channels/tables.ts';
import type { TopicLink } from '../markdown/index.ts';
import type { ApiMessage } from './format.ts';
import type { FlagName } from './flags/flags.ts';
import type { MutedTopicEntry, UserTopicEntry } from './topics/user-topics.ts';
import type { PropagateMode } from './edit/request.ts';

// The events of messages (digest 3.3), as actions emit them; events/shape.ts adapts
// each to a queue (flags per user, the legacy forms).

export interface MessageEvent {
  type: 'message';
  message: ApiMessage;
  /** Per user: added by events/shape.ts from the notice's perUser. */
  flags?: string[];
  local_message_id?: string;
}

/** An edit, a move, or (rendering_only) a rendering that got its previews. */
export interface UpdateMessageEvent {
  type: 'update_message';
  user_id: number | null;
  edit_timestamp: number;
  message_id: number;
  message_ids: number[];
  rendering_only: boolean;
  flags?: string[];
  orig_content?: string;
  orig_rendered_content?: string;
  content?: string;
  rendered_content?: string;
  is_me_message?: boolean;
  stream_name?: string;
  stream_id?: number;
  new_stream_id?: number;
  propagate_mode?: PropagateMode;
  orig_subject?: string;
  subject?: string;
  topic_links?: TopicLink[];
}

/** One event with every id; events/shape.ts splits it (message_id) for clients without bulk_message_deletion. */
export type DeleteMessageEvent = { type: 'delete_message'; message_ids?: number[]; message_id?: number } & (
  | { message_type: 'stream'; stream_id: number; topic: string }
  | { message_type: 'private' }
);

export interface UpdateMessageFlagsEvent {
  type: 'update_message_flags';
  op: 'add' | 'remove';
  /** The deprecated name of `op`, which the reference still sends. */
  operation: 'add' | 'remove';
  flag: FlagName;
  messages: number[];
  all: boolean;
  /** Marking unread: what clients need to put the messages back into their unread counts. */
  message_details?: Record<string, MessageDetail>;
}

/** Where a message marked unread is, and whether it is listed among the mentions. */
export type MessageDetail = ({ type: 'stream'; stream_id: number; topic: string; unmuted_stream_msg: boolean } | { type: 'private'; user_ids: number[] }) & {
  mentioned?: true;
};

export interface ReactionEvent {
  type: 'reaction';
  op: 'add' | 'remove';
  message_id: number;
  user_id: number;
  user: { user_id: number; email: string; full_name: string };
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

export interface SubmessageEvent {
  type: 'submessage';
  msg_type: string;
  message_id: number;
  submessage_id: number;
  sender_id: number;
  content: string;
}

type UserRef = { user_id: number; email: string };

export type TypingEvent =
  | { type: 'typing'; op: 'start' | 'stop'; message_type: 'stream'; sender: UserRef; stream_id: number; topic: string }
  | { type: 'typing'; op: 'start' | 'stop'; message_type: 'direct'; sender: UserRef; recipients: UserRef[] };

export interface TypingEditMessageEvent {
  type: 'typing_edit_message';
  op: 'start' | 'stop';
  sender_id: number;
  message_id: number;
  recipient: { type: 'channel'; channel_id: number; topic: string } | { type: 'direct'; user_ids: number[] };
}

export type UserTopicEvent = { type: 'user_topic' } & UserTopicEntry;

export interface MutedTopicsEvent {
  type: 'muted_topics';
  muted_topics: MutedTopicEntry[];
}

export type MessagesEvent =
  | MessageEvent
  | UpdateMessageEvent
  | DeleteMessageEvent
  | UpdateMessageFlagsEvent
  | ReactionEvent
  | SubmessageEvent
  | TypingEvent
  | TypingEditMessageEvent
  | UserTopicEvent
  | MutedTopicsEvent;

/** A message just written: who receives it, with which flags, and what its event needs besides. */
export interface NewMessage {
  message: Omit<Message, 'search_tsv'>;
  sender: User;
  recipients: Pick<User, 'id' | 'role'>[];
  flags: Map<number, number>;
  channel: Pick<Channel, 'id' | 'name' | 'invite_only'> | undefined;
  submessages: ApiSubmessage[];
  /** The topic's links, when the send has them (from the linkifiers its rendering read). */
  topicLinks?: TopicLink[];
  localEcho?: { queueId: string; localId: string };
}

/**
 * `message` (just written) to everyone who received it, each with their flags; a public
 * channel's message also to queues that follow all public channels.
 */
export async function emitNewMessage(ctx: ActionContext<unknown>, m: NewMessage): Promise<void> {
  const { tx, emit, realm } = ctx;
  const { message, sender, recipients, flags } = m;
  // The shared copy: rendered content, full avatar URL, the empty topic as is; each queue adapts it.
  // A new message: what the send holds is all there is to it (no reactions yet).
  const [formatted] = await formatMessages(
    tx,
    realm,
    [message],
    { viewer: sender, applyMarkdown: true, clientSvcavatar: false, allowEmptyTopicName: true },
    {
      senders: [sender],
      channels: m.channel ? [m.channel] : undefined,
      reactions: [],
      submessages: new Map([[message.id, m.submessages]]),
      linkTopic: m.channel === undefined ? () => [] : m.topicLinks && (() => m.topicLinks!),
    },
  );
  const perUser: Record<number, { flags: string[] }> = {};
  for (const user of recipients) perUser[user.id] = { flags: flagNames(flags.get(user.id) ?? 0) };
  emit(
    realm.id,
    { type: 'message', message: formatted },
    recipients.map((u) => u.id),
    {
      perUser,
      publicChannel: m.channel !== undefined && !m.channel.invite_only,
      localEcho: m.localEcho,
      hidden: {
        raw_content: message.content,
        avatar_nullable_for: recipients.filter((u) => senderAvatarComputable(sender, u)).map((u) => u.id),
      },
    },
  );
}
