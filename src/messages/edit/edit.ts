// PATCH /messages/{message_id} (digest section 2 "Edit / move message", 3.3
// `update_message`): a message's content, and where it and its topic go.
//
// The checks run in the reference's order (check_update_message): access, the
// content rules, the request's shape, the destination, the topic rules, the
// content itself (mentions), the channel rules, then the whole-topic time limit
// (request.ts, permissions.ts, content.ts). Then the messages are written and
// moved (move.ts, topic-policies.ts), `update_message` goes out (event.ts) and
// Notification Bot tells of moves and resolves (notices.ts).

import { sql } from 'kysely';
import type { Services } from '../../services.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import type { EditHistoryEntry } from '../tables.ts';
import { transactAs, type Tx } from '../../db/transact.ts';
import { realmUrl } from '../../realm/queries.ts';
import { channelViewer, type ChannelViewer } from '../../channels/access.ts';
import { checkTopicAllowed } from '../send/send.ts';
import { channelRecipientId } from '../send/recipients.ts';
import { messageToChange } from '../access.ts';
import { requestedChange, resolution, type Edit, type EditContext, type EditRequest } from './request.ts';
import { checkChannelRules, checkContentRules, checkTopicRules, checkWholeTopicMovable, destination } from './permissions.ts';
import { catchUpIdleSubscribers } from '../soft-deactivation.ts';
import { claimContentLinks, contentChange, contentColumns, prerenderEdit, writeMentionFlags, type ContentChange, type Prerendered } from './content.ts';
import { announceFirstMessageIds, beforeMove, messagesToChange, moveRest, moveTopicState, settleReaders, type BeforeMove, type Placement } from './move.ts';
import { emitUpdate } from './event.ts';
import { postMoveNotices } from './notices.ts';

export async function editMessage(svc: Services, realm: Realm, actor: User, messageId: number, req: EditRequest): Promise<{ detached_uploads: unknown[] }> {
  const prerendered = await prerenderEdit(svc, realm, actor, req.content);
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    // Moves of many messages lock many rows: they take turns, before any row lock, so that two never deadlock.
    if (req.propagate_mode !== 'change_one' && (req.topic !== undefined || req.stream_id !== undefined)) {
      await sql`select pg_advisory_xact_lock(${0x4d4f5645}::integer, ${realm.id}::integer)`.execute(tx);
    }
    const editing: EditContext = { ...ctx, viewer: await channelViewer(tx, realm, actor) };
    const { edit, content } = await checkedEdit(editing, messageId, req, prerendered);
    return applyEdit(editing, edit, content, req);
  });
}

/** Every check, in the reference's order; nothing is written until they pass. */
async function checkedEdit(ctx: EditContext, messageId: number, req: EditRequest, prerendered: Prerendered | undefined) {
  const { tx, viewer } = ctx;
  const { message, channel: from } = await messageToChange(tx, viewer, messageId);
  const now = new Date();
  if (req.content !== undefined) checkContentRules(viewer, message, now);
  const requested = requestedChange(message, from, req);
  const to = await destination(tx, viewer, from, requested.streamId);
  const toTopic = requested.topic ?? message.topic;
  const moved = requested.topic !== undefined || requested.streamId !== undefined;
  if (to && moved) checkTopicAllowed(viewer.realm, to, toTopic);
  const resolves = requested.topic !== undefined ? resolution(message.topic, requested.requestedTopic!, requested.topic) : null;
  const edit: Edit = { ...requested, message, from, to, toTopic, moved, resolves, now, propagateMode: req.propagate_mode };
  checkTopicRules(viewer, edit);
  const content = await contentChange(tx, viewer, edit, prerendered);
  checkChannelRules(viewer, edit);
  await checkWholeTopicMovable(tx, viewer, edit);
  return { edit, content };
}

async function applyEdit(ctx: EditContext, edit: Edit, content: ContentChange | undefined, req: EditRequest) {
  const { svc, realm, actor } = ctx;
  const { message, from, to } = edit;
  const w = await writeEdit(ctx, edit, content);
  const streamMoved = edit.streamId !== undefined;
  // Only a resolve (or unresolve) of the topic, nothing else, is announced as one.
  const announcedResolution = edit.topic !== undefined && content === undefined && !streamMoved ? edit.resolves : null;
  const { wholeTopic, followers } = await moveTopicState(ctx, edit, {
    changedIds: w.changedIds,
    targetHadMessages: w.before.targetHadMessages,
    losing: w.losing,
    announcedResolution: announcedResolution !== null,
  });
  await emitUpdate(ctx, {
    message,
    changedIds: w.changedIds,
    timestamp: w.timestamp,
    from,
    to,
    losing: w.losing,
    content: content && { content: content.content, rendered: content.rendered },
    topic: edit.topic,
    streamMoved,
    propagateMode: req.propagate_mode,
  });
  await announceFirstMessageIds(ctx, edit, w.before);
  if (from && to && edit.moved) {
    const moved = {
      actor,
      from,
      fromTopic: message.topic,
      to,
      toTopic: edit.toTopic,
      messageId: message.id,
      count: w.changedIds.length,
      wholeTopic,
      realmUrl: realmUrl(realm, svc.config),
    };
    await postMoveNotices(ctx, moved, {
      changedIds: w.changedIds,
      resolution: announcedResolution,
      followers,
      resolves: edit.resolves !== null,
      streamMoved,
      toOldThread: req.send_notification_to_old_thread,
      toNewThread: req.send_notification_to_new_thread,
    });
  }
  return { detached_uploads: w.detached };
}

/** What the writes of an edit leave for its events and notices. */
interface Written extends Placement {
  before: BeforeMove;
  /** Users who can no longer read the messages. */
  losing: Set<number>;
  /** The files the new content no longer links. */
  detached: unknown[];
}

/** The writes: the edited message, its files, the rest of its topic, mention flags, who still reads them. */
async function writeEdit(ctx: EditContext, edit: Edit, content: ContentChange | undefined): Promise<Written> {
  const { tx, viewer } = ctx;
  const { message, to } = edit;
  const streamMoved = edit.streamId !== undefined;
  const changedIds = await messagesToChange(tx, viewer, edit);
  const timestamp = Math.floor(edit.now.getTime() / 1000);
  const countsAsMove = edit.moved && !(edit.resolves && !streamMoved);
  const before = await beforeMove(tx, edit, changedIds);
  const recipientId = to && streamMoved ? await channelRecipientId(tx, viewer.realm.id, to.id) : message.recipient_id;
  const placement: Placement = { changedIds, timestamp, recipientId, countsAsMove };
  // Idle subscribers' catch-ups read messages where they are: both channels' are caught up before they move.
  if (streamMoved && edit.from && to) await catchUpIdleSubscribers(tx, [edit.from.id, to.id]);
  await writeEditedMessage(tx, viewer, edit, content, placement);
  const detached = content ? await claimContentLinks(ctx, message.id, content) : [];
  await moveRest(tx, viewer, edit, placement);
  if (content) await writeMentionFlags(tx, message.id, content);
  const losing = await settleReaders(ctx, edit, changedIds);
  return { ...placement, before, losing, detached };
}

/** The edited message: its own history entry has everything this edit changed. */
async function writeEditedMessage(tx: Tx, viewer: ChannelViewer, edit: Edit, content: ContentChange | undefined, p: Placement): Promise<void> {
  const { message, from, to } = edit;
  const entry: EditHistoryEntry = { user_id: viewer.user.id, timestamp: p.timestamp };
  if (content) {
    entry.prev_content = message.content;
    entry.prev_rendered_content = message.rendered_content;
  }
  if (from && to && edit.streamId !== undefined) {
    entry.prev_stream = from.id;
    entry.stream = to.id;
  }
  if (edit.topic !== undefined) {
    entry.prev_topic = message.topic;
    entry.topic = edit.topic;
  }
  await tx
    .updateTable('messages')
    .set({
      ...(content ? contentColumns(content, edit.now) : {}),
      topic: edit.toTopic,
      channel_id: to?.id ?? null,
      recipient_id: p.recipientId,
      last_moved_at: p.countsAsMove ? edit.now : message.last_moved_at,
      edit_history: JSON.stringify([...(message.edit_history ?? []), entry]),
    })
    .where('id', '=', message.id)
    .execute();
}
