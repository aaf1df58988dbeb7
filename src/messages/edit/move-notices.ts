// What Notification Bot says when messages move (the reference's
// zerver/actions/message_edit.py: do_update_message, send_message_moved_breadcrumbs,
// maybe_send_resolve_topic_notifications): breadcrumbs in the topics messages
// left and joined, and "marked this topic as resolved" in a resolved topic.
// edit/notices.ts decides from the move what is due; the texts are here.

import type { User } from '../../users/tables.ts';
import type { Channel } from '../../channels/tables.ts';
import type { Message } from '../tables.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../../events/shape.ts';
import { messagePath, silentMention, topicLink, type Notice } from '../../notification_bot/index.ts';

/** Resolving then unresolving (or back) within this time deletes the first notice instead of posting a second. */
export const RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS = 60;

const link = (channel: Channel, topic: string) => topicLink(channel, topic, EMPTY_TOPIC_DISPLAY_NAME);

/** "@_**X|id** has marked this topic as resolved." in the topic as it now is. */
export function resolveNotice(actor: User, channel: Channel, topic: string, change: 'resolved' | 'unresolved', readBy: number[]): Notice {
  return { to: { channel, topic }, content: `${silentMention(actor)} has marked this topic as ${change}.`, readBy };
}

// The reference marks its resolve notices with a message type; ours are known by their sender and words.
const RESOLVE_NOTICE = /^@_\*\*[^\n]*\|\d+\*\* has marked this topic as (?:un)?resolved\.$/;

/** Whether a message is a resolve or unresolve notice of Notification Bot. */
export function isResolveNotice(message: Pick<Message, 'sender_id' | 'content'>, botId: number): boolean {
  return message.sender_id === botId && RESOLVE_NOTICE.test(message.content);
}

export interface MovedMessages {
  actor: User;
  from: Channel;
  fromTopic: string;
  to: Channel;
  toTopic: string;
  /** The message the request named, and how many moved with it (itself included). */
  messageId: number;
  count: number;
  /** Every message of the topic the mover could see moved. */
  wholeTopic: boolean;
  /** The organization's URL, for the link to a single moved message. */
  realmUrl: string;
}

/** In the topic the messages left (send_notification_to_old_thread). */
export function oldThreadNotice(m: MovedMessages): Notice {
  const where = `${link(m.to, m.toTopic)} by ${silentMention(m.actor)}`;
  let content: string;
  if (m.wholeTopic) content = `This topic was moved to ${where}.`;
  else if (m.count === 1) content = `A message was moved from this topic to ${where}.`;
  else content = `${m.count} messages were moved from this topic to ${where}.`;
  return { to: { channel: m.from, topic: m.fromTopic }, content, readBy: [m.actor.id] };
}

/**
 * In the topic the messages joined (send_notification_to_new_thread). "This
 * topic was moved here" only when the whole topic moved into a topic in which
 * the mover sees nothing else.
 */
export function newThreadNotice(m: MovedMessages, destinationHadVisibleMessages: boolean): Notice {
  const where = `${link(m.from, m.fromTopic)} by ${silentMention(m.actor)}`;
  let content: string;
  if (m.wholeTopic && !destinationHadVisibleMessages) content = `This topic was moved here from ${where}.`;
  else if (m.count === 1) content = `[A message](${m.realmUrl}/${messagePath(m.to, m.toTopic, m.messageId)}) was moved here from ${where}.`;
  else content = `${m.count} messages were moved here from ${where}.`;
  return { to: { channel: m.to, topic: m.toTopic }, content, readBy: [m.actor.id] };
}
