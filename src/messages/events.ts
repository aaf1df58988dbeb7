// The events messages cause, built in one place.

import type { Emit, Tx } from '../db/transact.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Message } from './tables.ts';
import { formatMessages, senderAvatarComputable } from './format.ts';
import { flagNames } from './flags/flags.ts';
import type { ApiSubmessage } from './submessages/submessages.ts';
import type { Channel } from '../channels/tables.ts';
import type { TopicLink } from '../markdown/index.ts';

/**
 * `message` (just written) to everyone who received it, each with their flags; a public
 * channel's message also to queues that follow all public channels.
 */
export async function emitNewMessage(
  tx: Tx,
  emit: Emit,
  realm: Realm,
  message: Omit<Message, 'search_tsv'>,
  sender: User,
  recipients: Pick<User, 'id' | 'role'>[],
  flags: Map<number, number>,
  opts: {
    channel: Pick<Channel, 'id' | 'name' | 'invite_only'> | undefined;
    submessages: ApiSubmessage[];
    /** The topic's links, when the send has them (from the linkifiers its rendering read). */
    topicLinks?: TopicLink[];
    localEcho?: { queueId: string; localId: string };
  },
): Promise<void> {
  // The shared copy: rendered content, full avatar URL, the empty topic as is; each queue adapts it.
  // A new message: what the send holds is all there is to it (no reactions yet).
  const [formatted] = await formatMessages(
    tx,
    realm,
    [message],
    { viewer: sender, applyMarkdown: true, clientSvcavatar: false, allowEmptyTopicName: true },
    {
      senders: [sender],
      channels: opts.channel ? [opts.channel] : undefined,
      reactions: [],
      submessages: new Map([[message.id, opts.submessages]]),
      linkTopic: opts.channel === undefined ? () => [] : opts.topicLinks && (() => opts.topicLinks!),
    },
  );
  const perUser: Record<number, Record<string, unknown>> = {};
  for (const user of recipients) perUser[user.id] = { flags: flagNames(flags.get(user.id) ?? 0) };
  emit(
    realm.id,
    { type: 'message', message: formatted },
    recipients.map((u) => u.id),
    {
      perUser,
      publicChannel: opts.channel !== undefined && !opts.channel.invite_only,
      localEcho: opts.localEcho,
      hidden: {
        raw_content: message.content,
        avatar_nullable_for: recipients.filter((u) => senderAvatarComputable(sender, u)).map((u) => u.id),
      },
    },
  );
}
