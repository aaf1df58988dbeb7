// What a PATCH /messages/{message_id} asks, and what it asks to change once the
// values that change nothing are set aside (the request's shape, checked in the
// reference's order; the permissions are permissions.ts').

import { createHash } from 'node:crypto';
import type { Services } from '../../services.ts';
import type { User } from '../../users/tables.ts';
import type { Channel } from '../../channels/tables.ts';
import type { ChannelViewer } from '../../channels/access.ts';
import type { ActionContext } from '../../db/transact.ts';
import type { Message } from '../tables.ts';
import { ApiError, badRequest } from '../../http/errors.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../../events/shape.ts';
import { normalizeContent, normalizeTopic, topicParameter } from '../validation.ts';

export const PROPAGATE_MODES = ['change_one', 'change_later', 'change_all'] as const;
export type PropagateMode = (typeof PROPAGATE_MODES)[number];

export interface EditRequest {
  content?: string;
  topic?: string;
  stream_id?: number;
  propagate_mode: PropagateMode;
  /** Notification Bot's breadcrumbs in the topics the messages left and joined (move-notices.ts). */
  send_notification_to_old_thread: boolean;
  send_notification_to_new_thread: boolean;
  prev_content_sha256?: string;
}

/** What the steps of an edit share: the action's context, and the editor as a channel viewer. */
export interface EditContext extends ActionContext<Services, User> {
  readonly viewer: ChannelViewer;
}

export const RESOLVED_TOPIC_PREFIX = '✔ ';

/** The content an edit stores: an empty edit reads as deleted. */
export function editedContent(raw: string): string {
  return normalizeContent(raw.trimEnd() === '' ? '(deleted)' : raw);
}

/** What the request changes: undefined where it asks for what already is. */
export interface RequestedChange {
  content?: string;
  /** The new topic, normalized. */
  topic?: string;
  /** The topic as asked, before normalizing (to tell a resolve). */
  requestedTopic?: string;
  streamId?: number;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The topic and channel as asked (naming the current ones changes nothing), refused when the request cannot apply. */
export function requestedChange(message: Message, from: Channel | null, req: EditRequest): RequestedChange {
  let topic = req.topic === undefined ? undefined : topicParameter(req.topic.trim());
  if (topic === message.topic) topic = undefined;
  const streamId = req.stream_id === message.channel_id ? undefined : req.stream_id;

  if (topic === undefined && req.content === undefined && streamId === undefined) throw badRequest('Nothing to change');
  if (!from) {
    if (streamId !== undefined) throw badRequest('Direct messages cannot be moved to channels.');
    if (topic !== undefined) throw badRequest('Direct messages cannot have topics.');
  }
  if (req.propagate_mode !== 'change_one' && topic === undefined && streamId === undefined) throw badRequest('Invalid propagate_mode without topic edit');
  if (topic === RESOLVED_TOPIC_PREFIX.trim() || topic === `${RESOLVED_TOPIC_PREFIX}${EMPTY_TOPIC_DISPLAY_NAME}`) {
    throw badRequest('General chat cannot be marked as resolved');
  }
  const requestedTopic = topic;
  if (topic !== undefined) {
    topic = normalizeTopic(topic);
    if (topic === message.topic) topic = undefined;
    if (topic === undefined && req.content === undefined && streamId === undefined) throw badRequest('Nothing to change');
  }
  if (streamId !== undefined && req.content !== undefined) throw badRequest('Cannot change message content while changing channel');
  if (req.prev_content_sha256 !== undefined && req.prev_content_sha256.toLowerCase() !== sha256(message.content)) {
    throw new ApiError('EXPECTATION_MISMATCH', "'prev_content_sha256' value does not match the expected value.");
  }
  const content = req.content === undefined ? undefined : editedContent(req.content);
  return { content, topic, requestedTopic, streamId };
}

/** Whether a topic change only marks the topic resolved or unresolved (the reference's rule). */
export function resolution(from: string, requested: string, to: string): 'resolved' | 'unresolved' | null {
  if (to.startsWith(RESOLVED_TOPIC_PREFIX) && !from.startsWith(RESOLVED_TOPIC_PREFIX) && requested.slice(RESOLVED_TOPIC_PREFIX.length) === from) {
    return 'resolved';
  }
  if (from.startsWith(RESOLVED_TOPIC_PREFIX) && !to.startsWith(RESOLVED_TOPIC_PREFIX) && from.replace(/^[✔ ]+/u, '') === to) return 'unresolved';
  return null;
}

/** An edit past its checks: what changes, and where the message (and maybe its topic) goes. */
export interface Edit extends RequestedChange {
  message: Message;
  /** The message's channel (null: a direct message) and the one it ends up in. */
  from: Channel | null;
  to: Channel | null;
  toTopic: string;
  /** The topic or the channel changes. */
  moved: boolean;
  resolves: 'resolved' | 'unresolved' | null;
  now: Date;
  propagateMode: PropagateMode;
}
