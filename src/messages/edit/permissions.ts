// Who may make an edit: the content rules, the topic rules, the channel rules
// and the whole-topic time limit (the reference's check_update_message).

import type { Channel } from '../../channels/tables.ts';
import type { Message } from '../tables.ts';
import type { Tx } from '../../db/transact.ts';
import { ApiError, badRequest } from '../../http/errors.ts';
import { settingsOf } from '../../realm/queries.ts';
import { canAdminister, hasContentAccess, holdsChannelPermission, holdsRealmPermission, type ChannelViewer } from '../../channels/access.ts';
import { getChannel } from '../../channels/queries.ts';
import { checkCanPost } from '../send/send.ts';
import type { Edit } from './request.ts';
import { readableBy, topicMessages } from './topic-messages.ts';
import { movesPastTimeLimits } from '../../users/access.ts';

/** Grace on every time limit: clients allow editing a little past it, and requests take time (the reference's 20 s). */
const EDIT_LIMIT_BUFFER_SECONDS = 20;

const noEditPermission = () => badRequest("You don't have permission to edit this message");

/** Whether the message is young enough for a limit (null: none). */
function withinLimit(message: Message, now: Date, limit: number | null): boolean {
  const age = (now.getTime() - message.date_sent.getTime()) / 1000;
  return limit === null || age <= limit + EDIT_LIMIT_BUFFER_SECONDS;
}

/** May move messages between topics of a channel (the reference's can_move_messages_within_channel). */
function canMoveWithinChannel(v: ChannelViewer, channel: Channel): boolean {
  return canAdminister(v, channel) || holdsChannelPermission(v, channel, 'can_move_messages_within_channel_group');
}

/** A topic edit: the organization's permission, or the channel's in the channel it leaves or enters. */
function canEditTopic(v: ChannelViewer, from: Channel, to: Channel): boolean {
  return (
    holdsRealmPermission(v, 'can_move_messages_between_topics_group') || canMoveWithinChannel(v, from) || (from.id !== to.id && canMoveWithinChannel(v, to))
  );
}

function canResolveTopics(v: ChannelViewer, from: Channel, to: Channel): boolean {
  return (
    holdsRealmPermission(v, 'can_resolve_topics_group') ||
    holdsChannelPermission(v, from, 'can_resolve_topics_group') ||
    (from.id !== to.id && holdsChannelPermission(v, to, 'can_resolve_topics_group'))
  );
}

function canMoveOutOfChannel(v: ChannelViewer, channel: Channel): boolean {
  return (
    holdsRealmPermission(v, 'can_move_messages_between_channels_group') ||
    canAdminister(v, channel) ||
    holdsChannelPermission(v, channel, 'can_move_messages_out_of_channel_group')
  );
}

/** A content edit: the organization allows editing, the sender asks, within the time limit. */
export function checkContentRules(viewer: ChannelViewer, message: Message, now: Date): void {
  const settings = settingsOf(viewer.realm);
  if (!settings.allow_message_editing) throw badRequest('Your organization has turned off message editing');
  if (message.sender_id !== viewer.user.id) throw noEditPermission();
  if (!withinLimit(message, now, settings.message_content_edit_limit_seconds)) throw badRequest('The time limit for editing this message has passed');
}

/** The channel a move goes to (the message's own when the channel stays): one the mover can read. */
export async function destination(tx: Tx, viewer: ChannelViewer, from: Channel | null, streamId: number | undefined): Promise<Channel | null> {
  if (!from || streamId === undefined) return from;
  const target = await getChannel(tx, viewer.realm.id, streamId);
  if (!target || target.is_archived || !hasContentAccess(viewer, target)) throw badRequest('Invalid channel ID');
  return target;
}

/** A topic change: a resolve needs the resolve permission, any other the move permission within its time limit. */
export function checkTopicRules(viewer: ChannelViewer, edit: Edit): void {
  const { from, to } = edit;
  if (!from || !to || edit.topic === undefined) return;
  if (edit.resolves) {
    if (!canResolveTopics(viewer, from, to)) throw badRequest("You don't have permission to resolve topics in this channel.");
    return;
  }
  if (!canEditTopic(viewer, from, to)) throw noEditPermission();
  if (!movesPastTimeLimits(viewer.user) && !withinLimit(edit.message, edit.now, settingsOf(viewer.realm).move_messages_within_stream_limit_seconds)) {
    throw badRequest("The time limit for editing this message's topic has passed.");
  }
}

/** A channel change: moving out of the one, posting in the other, within the time limit. */
export function checkChannelRules(viewer: ChannelViewer, edit: Edit): void {
  const { from, to } = edit;
  if (!from || !to || edit.streamId === undefined) return;
  if (!canMoveOutOfChannel(viewer, from)) throw badRequest("You don't have permission to move this message");
  checkCanPost(viewer, to);
  if (!movesPastTimeLimits(viewer.user) && !withinLimit(edit.message, edit.now, settingsOf(viewer.realm).move_messages_between_streams_limit_seconds)) {
    throw badRequest("The time limit for editing this message's channel has passed");
  }
}

/** A request to move every message of a topic, refused when some are past the time limit for this user. */
export async function checkWholeTopicMovable(tx: Tx, viewer: ChannelViewer, edit: Edit): Promise<void> {
  const { from, message } = edit;
  if (!from || !edit.moved || edit.propagateMode !== 'change_all' || movesPastTimeLimits(viewer.user) || edit.resolves) return;
  const settings = settingsOf(viewer.realm);
  const limits = [
    edit.topic !== undefined ? settings.move_messages_within_stream_limit_seconds : null,
    edit.streamId !== undefined ? settings.move_messages_between_streams_limit_seconds : null,
  ];
  const applicable = limits.filter((l): l is number => l !== null);
  if (applicable.length === 0) return;
  const deadline = Date.now() - (Math.min(...applicable) + EDIT_LIMIT_BUFFER_SECONDS) * 1000;
  const requested = await readableBy(tx, viewer, from, await topicMessages(tx, from.id, message.topic));
  const allowed = requested.filter((m) => m.date_sent.getTime() > deadline);
  if (allowed.length === requested.length) return;
  throw new ApiError(
    'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
    `You only have permission to move the ${allowed.length}/${requested.length} most recent messages in this topic.`,
    {
      data: {
        first_message_id_allowed_to_move: allowed[0]?.id ?? null,
        total_messages_in_topic: requested.length,
        total_messages_allowed_to_move: allowed.length,
      },
    },
  );
}
