// Notification Bot after a move or a resolve, in the reference's order
// (do_update_message); the wording is move-notices.ts'.

import { sql } from 'kysely';
import type { Hooked } from '../../services.ts';
import type { Channel } from '../../channels/tables.ts';
import type { ActionContext, Tx } from '../../db/transact.ts';
import type { User } from '../../users/tables.ts';
import { subscriberIds } from '../../channels/queries.ts';
import { notificationBot } from '../../users/system-bots.ts';
import { sendNotices, type Notice } from '../../notification_bot/index.ts';
import { VISIBILITY } from '../topics/user-topics.ts';
import { deleteMessages } from '../delete.ts';
import {
  isResolveNotice,
  newThreadNotice,
  oldThreadNotice,
  resolveNotice,
  RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS,
  type MovedMessages,
} from './move-notices.ts';
import { readableBy, topicMessages } from './topic-messages.ts';
import type { EditContext } from './request.ts';

/** Humans following a topic (a resolve notice stays unread for them). */
export async function topicFollowers(tx: Tx, channelId: number, topic: string): Promise<Set<number>> {
  const rows = await tx
    .selectFrom('user_topics')
    .innerJoin('users', 'users.id', 'user_topics.user_id')
    .select('user_topics.user_id')
    .where('user_topics.channel_id', '=', channelId)
    .where(sql<string>`lower(user_topics.topic)`, '=', topic.toLowerCase())
    .where('user_topics.visibility_policy', '=', VISIBILITY.FOLLOWED)
    .where('users.is_bot', '=', false)
    .execute();
  return new Set(rows.map((r) => r.user_id));
}

export interface NoticeRules {
  changedIds: number[];
  /** A resolve or unresolve and nothing else: announced in the topic. */
  resolution: 'resolved' | 'unresolved' | null;
  followers: Set<number>;
  /** The topic change resolves or unresolves (a move besides, maybe). */
  resolves: boolean;
  streamMoved: boolean;
  toOldThread: boolean;
  toNewThread: boolean;
}

/**
 * Notification Bot on a move, in the reference's order (do_update_message): the
 * resolve notice, then the breadcrumbs in the new topic and in the old one.
 */
export async function postMoveNotices(ctx: EditContext, m: MovedMessages, r: NoticeRules): Promise<void> {
  const { tx, viewer } = ctx;
  let resolveNoticeId: number | undefined;
  if (r.resolution && !(await undoResolveNotice(ctx, m.to, m.toTopic))) {
    // Read for everyone but those following the topic (the reference's default
    // resolved_topic_notice_auto_read_policy, "except_followed"), and the user who resolved it.
    const subscribers = (await subscriberIds(tx, [m.to.id])).get(m.to.id)!;
    const readBy = [...[...subscribers].filter((id) => !r.followers.has(id)), m.actor.id];
    [resolveNoticeId] = await sendNotices(ctx, [resolveNotice(m.actor, m.to, m.toTopic, r.resolution, readBy)]);
  }
  const notices: Notice[] = [];
  // Marking a topic resolved is no news to the topic it lands in; moving it to another channel is.
  if (r.toNewThread && (r.streamMoved || !r.resolves)) {
    // Judged by what the mover can see: nothing is told of messages they cannot read.
    const others = (await topicMessages(tx, m.to.id, m.toTopic)).filter((x) => !r.changedIds.includes(x.id) && x.id !== resolveNoticeId);
    notices.push(newThreadNotice(m, (await readableBy(tx, viewer, m.to, others)).length > 0));
  }
  if (r.toOldThread) notices.push(oldThreadNotice(m));
  await sendNotices(ctx, notices);
}

/**
 * Undoing a resolve (or unresolve) soon after: when the topic's last message is
 * the notice of it, younger than the grace period, that notice is deleted and
 * no new one is posted (maybe_delete_previous_resolve_topic_notification).
 */
async function undoResolveNotice(ctx: ActionContext<Hooked, User>, channel: Channel, topic: string): Promise<boolean> {
  const { tx, realm } = ctx;
  const last = await tx
    .selectFrom('messages')
    .selectAll()
    .where('channel_id', '=', channel.id)
    .where(sql<string>`lower(topic)`, '=', topic.toLowerCase())
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!last || !isResolveNotice(last, (await notificationBot(tx, realm.id)).id)) return false;
  if (Date.now() - last.date_sent.getTime() > RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS * 1000) return false;
  await deleteMessages(ctx, [last], channel);
  return true;
}
