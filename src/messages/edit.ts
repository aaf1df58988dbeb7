// PATCH /messages/{message_id} (digest section 2 "Edit / move message", 3.3
// `update_message`): a message's content, and where it and its topic go.
//
// The checks run in the reference's order (check_update_message): access, the
// content rules, the request's shape, the destination, the topic rules, the
// content itself (mentions), the channel rules, then the whole-topic time limit.
// Once the change is written, Notification Bot tells of moves and resolves (move-notices.ts).

import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Hooked, Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Channel } from '../channels/tables.ts';
import type { ServerEvent } from '../events/types.ts';
import type { EditHistoryEntry, Message } from './tables.ts';
import { transact, type Emit, type Tx } from '../db/transact.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import { realmUrl, settingsOf } from '../realm/queries.ts';
import { isAdmin, isModerator } from '../users/roles.ts';
import { userSettings } from '../users/settings.ts';
import {
  canAdminister,
  channelViewer,
  hasContentAccess,
  holdsChannelPermission,
  holdsRealmPermission,
  type ChannelViewer,
} from '../channels/access.ts';
import { getChannel, subscriberIds } from '../channels/queries.ts';
import { emitChannelUpdate } from '../channels/events.ts';
import { groupMemberIds } from '../user_groups/group-setting.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../events/shape.ts';
import { prerender } from '../rendering/index.ts';
import { reclaimAttachments } from '../uploads/claims.ts';
import { queueLinkPreviews } from '../previews/queue.ts';
import type { RenderResult } from '../markdown/index.ts';
import { topicLinker } from '../linkifiers/rendering.ts';
import { checkCanPost, checkTopicAllowed, mentionFlags } from './send.ts';
import { normalizeContent, normalizeTopic, topicParameter } from './validation.ts';
import { channelRecipientId } from './recipients.ts';
import { FLAG_BITS, MENTION_BITS, flagNames } from './flags.ts';
import { usersAlertedBy } from '../alert_words/matching.ts';
import { setVisibilityPolicy, visibilityPolicy, VISIBILITY, type VisibilityPolicy } from './user-topics.ts';
import { copyHolders, firstMessageId, messageAudience } from './changes.ts';
import { intArray } from './state-support.ts';
import { deleteMessages } from './delete.ts';
import { notificationBot } from '../users/system-bots.ts';
import { sendNotices, type Notice } from '../notification_bot/index.ts';
import { isResolveNotice, newThreadNotice, oldThreadNotice, resolveNotice, RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS, type MovedMessages } from './move-notices.ts';
import { messageToChange } from './access.ts';

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

export const RESOLVED_TOPIC_PREFIX = '✔ ';

/** Grace on every time limit: clients allow editing a little past it, and requests take time (the reference's 20 s). */
const EDIT_LIMIT_BUFFER_SECONDS = 20;

/** Mention flags an edit recomputes; the others belong to the user. */

const noEditPermission = () => badRequest("You don't have permission to edit this message");

/** May move messages between topics of a channel (the reference's can_move_messages_within_channel). */
function canMoveWithinChannel(v: ChannelViewer, channel: Channel): boolean {
  return isAdmin(v.user) || canAdminister(v, channel) || holdsChannelPermission(v, channel, 'can_move_messages_within_channel_group');
}

/** A topic edit: the organization's permission, or the channel's in the channel it leaves or enters. */
function canEditTopic(v: ChannelViewer, from: Channel, to: Channel): boolean {
  return holdsRealmPermission(v, 'can_move_messages_between_topics_group') || canMoveWithinChannel(v, from) || (from.id !== to.id && canMoveWithinChannel(v, to));
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
    isAdmin(v.user) ||
    holdsRealmPermission(v, 'can_move_messages_between_channels_group') ||
    canAdminister(v, channel) ||
    holdsChannelPermission(v, channel, 'can_move_messages_out_of_channel_group')
  );
}

/** Whether a topic change only marks the topic resolved or unresolved (the reference's rule). */
function resolution(from: string, requested: string, to: string): 'resolved' | 'unresolved' | null {
  if (to.startsWith(RESOLVED_TOPIC_PREFIX) && !from.startsWith(RESOLVED_TOPIC_PREFIX) && requested.slice(RESOLVED_TOPIC_PREFIX.length) === from) {
    return 'resolved';
  }
  if (from.startsWith(RESOLVED_TOPIC_PREFIX) && !to.startsWith(RESOLVED_TOPIC_PREFIX) && from.replace(/^[✔ ]+/u, '') === to) return 'unresolved';
  return null;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** Messages of a topic (any case), oldest first, locked for the move. */
async function topicMessages(tx: Tx, channelId: number, topic: string): Promise<Message[]> {
  return tx
    .selectFrom('messages')
    .selectAll()
    .where('channel_id', '=', channelId)
    .where(sql<string>`lower(topic)`, '=', topic.toLowerCase())
    .orderBy('id')
    .forUpdate()
    .execute();
}

/**
 * The messages of a list a user may read in a channel: all of them where its
 * history is shared with them, else only their own copies.
 */
async function readableBy(tx: Tx, viewer: ChannelViewer, channel: Channel, messages: Message[]): Promise<Message[]> {
  if (messages.length === 0 || !hasContentAccess(viewer, channel)) return [];
  if (channel.history_public_to_subscribers) return messages;
  const own = await tx
    .selectFrom('user_messages')
    .select('message_id')
    .where('user_id', '=', viewer.user.id)
    .where('message_id', '=', sql<number>`any(${intArray(messages.map((m) => m.id))})`)
    .execute();
  const ids = new Set(own.map((r) => r.message_id));
  return messages.filter((m) => ids.has(m.id));
}

/** Of these users, those who may read the channel's messages (hasContentAccess, for many users at once). */
async function readersOf(tx: Tx, realm: Realm, channel: Channel, userIds: Iterable<number>): Promise<Set<number>> {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return new Set();
  const [users, subs] = await Promise.all([
    tx.selectFrom('users').selectAll().where('realm_id', '=', realm.id).where('id', '=', sql<number>`any(${intArray(ids)})`).execute(),
    tx
      .selectFrom('subscriptions')
      .select('user_id')
      .where('channel_id', '=', channel.id)
      .where('active', '=', true)
      .where('user_id', '=', sql<number>`any(${intArray(ids)})`)
      .execute(),
  ]);
  const subscribed = new Set(subs.map((s) => s.user_id));
  // The only groups hasContentAccess asks about.
  const groupIds = [...new Set([channel.can_subscribe_group_id, channel.can_add_subscribers_group_id])];
  const members = await Promise.all(groupIds.map(async (id) => [id, new Set(await groupMemberIds(tx, id))] as const));
  const readers = new Set<number>();
  for (const user of users) {
    const viewer: ChannelViewer = {
      user,
      realm,
      groups: new Set(members.filter(([, m]) => m.has(user.id)).map(([id]) => id)),
      subscribed: new Set(subscribed.has(user.id) ? [channel.id] : []),
    };
    if (hasContentAccess(viewer, channel)) readers.add(user.id);
  }
  return readers;
}

/** A request to move every message of a topic, refused when some are past the time limit for this user. */
async function checkWholeTopicMovable(tx: Tx, viewer: ChannelViewer, channel: Channel, message: Message, limits: (number | null)[]): Promise<void> {
  const applicable = limits.filter((l): l is number => l !== null);
  if (applicable.length === 0) return;
  const deadline = Date.now() - (Math.min(...applicable) + EDIT_LIMIT_BUFFER_SECONDS) * 1000;
  const requested = await readableBy(tx, viewer, channel, await topicMessages(tx, channel.id, message.topic));
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

/** When a user had policies on both topics, the more visible one wins (the reference's merge). */
function mergedPolicy(a: VisibilityPolicy, b: VisibilityPolicy): VisibilityPolicy {
  const both = new Set([a, b]);
  if (both.has(VISIBILITY.FOLLOWED)) return VISIBILITY.FOLLOWED;
  if (both.has(VISIBILITY.UNMUTED)) return VISIBILITY.UNMUTED;
  if (both.has(VISIBILITY.INHERIT)) return VISIBILITY.INHERIT;
  return VISIBILITY.MUTED;
}

async function topicPolicies(tx: Tx, channelId: number, topic: string): Promise<Map<number, VisibilityPolicy>> {
  const rows = await tx
    .selectFrom('user_topics')
    .select(['user_id', 'visibility_policy'])
    .where('channel_id', '=', channelId)
    .where(sql<string>`lower(topic)`, '=', topic.toLowerCase())
    .execute();
  return new Map(rows.map((r) => [r.user_id, r.visibility_policy as VisibilityPolicy]));
}

interface Move {
  from: Channel;
  to: Channel;
  fromTopic: string;
  toTopic: string;
  movedIds: number[];
  /** Whether the destination topic had messages before the move. */
  targetHadMessages: boolean;
  /** Users who can no longer read the moved messages. */
  losing: Set<number>;
}

/**
 * A whole topic moved (as far as the mover can see): users' preferences for it
 * follow it, merged with those they had for the destination. Otherwise the
 * sender may start following the new topic they now began.
 */
async function carryTopicPolicies(tx: Tx, emit: Emit, viewer: ChannelViewer, move: Move, message: Message, wholeTopic: boolean): Promise<void> {
  const { realm } = viewer;
  const { from, to, fromTopic, toTopic } = move;
  if (wholeTopic) {
    const fromPolicies = await topicPolicies(tx, from.id, fromTopic);
    const toPolicies = await topicPolicies(tx, to.id, toTopic);
    // A change of case only: the same row, renamed.
    const sameRow = from.id === to.id && fromTopic.toLowerCase() === toTopic.toLowerCase();
    for (const userId of new Set([...fromPolicies.keys(), ...toPolicies.keys()])) {
      const before = fromPolicies.get(userId) ?? VISIBILITY.INHERIT;
      if (before !== VISIBILITY.INHERIT) await setVisibilityPolicy(tx, emit, realm.id, userId, from.id, fromTopic, VISIBILITY.INHERIT);
      // Users who lost the messages keep no preference in a channel they cannot read.
      if (move.losing.has(userId)) continue;
      const there = sameRow ? VISIBILITY.INHERIT : (toPolicies.get(userId) ?? VISIBILITY.INHERIT);
      const after = move.targetHadMessages ? mergedPolicy(before, toPolicies.get(userId) ?? VISIBILITY.INHERIT) : before;
      if (after !== there) await setVisibilityPolicy(tx, emit, realm.id, userId, to.id, toTopic, after);
    }
    return;
  }
  const sender = await tx.selectFrom('users').selectAll().where('id', '=', message.sender_id).executeTakeFirstOrThrow();
  if (sender.is_bot || move.losing.has(sender.id)) return;
  const others = (await topicMessages(tx, to.id, toTopic)).filter((m) => !move.movedIds.includes(m.id));
  const [first] = await readableBy(tx, await channelViewer(tx, realm, sender), to, others);
  if (first && first.id < message.id) return;
  const settings = userSettings(sender);
  const ON_INITIATION = 3;
  let policy: VisibilityPolicy | undefined;
  if (settings.automatically_follow_topics_policy === ON_INITIATION) policy = VISIBILITY.FOLLOWED;
  else if (settings.automatically_unmute_topics_in_muted_streams_policy === ON_INITIATION) {
    const sub = await tx.selectFrom('subscriptions').select('is_muted').where('user_id', '=', sender.id).where('channel_id', '=', to.id).where('active', '=', true).executeTakeFirst();
    if (sub?.is_muted) policy = VISIBILITY.UNMUTED;
  }
  if (policy !== undefined && (await visibilityPolicy(tx, sender.id, to.id, toTopic)) !== policy) {
    await setVisibilityPolicy(tx, emit, realm.id, sender.id, to.id, toTopic, policy);
  }
}

/** The content an edit stores: an empty edit reads as deleted. */
function editedContent(raw: string): string {
  return normalizeContent(raw.trimEnd() === '' ? '(deleted)' : raw);
}

export async function editMessage(svc: Services, realm: Realm, actor: User, messageId: number, req: EditRequest): Promise<{ detached_uploads: unknown[] }> {
  // Rendered before the transaction; content that cannot be stored is refused inside, after the checks.
  let prerendered: (() => RenderResult) | undefined;
  if (req.content !== undefined) {
    let content: string | undefined;
    try {
      content = editedContent(req.content);
    } catch {
      content = undefined;
    }
    if (content !== undefined) prerendered = await prerender(svc, { realm, content, author: actor, onFailure: 'error' });
  }
  return transact(svc, async (tx, emit) => {
    // Moves of many messages lock many rows: they take turns, before any row lock, so that two never deadlock.
    if (req.propagate_mode !== 'change_one' && (req.topic !== undefined || req.stream_id !== undefined)) {
      await sql`select pg_advisory_xact_lock(${0x4d4f5645}::integer, ${realm.id}::integer)`.execute(tx);
    }
    const viewer = await channelViewer(tx, realm, actor);
    const { message, channel: from } = await messageToChange(tx, viewer, messageId);
    const settings = settingsOf(realm);
    const now = new Date();
    const age = (now.getTime() - message.date_sent.getTime()) / 1000;
    const withinLimit = (limit: number | null) => limit === null || age <= limit + EDIT_LIMIT_BUFFER_SECONDS;
    const moderator = isModerator(actor);

    if (req.content !== undefined) {
      if (!settings.allow_message_editing) throw badRequest('Your organization has turned off message editing');
      if (message.sender_id !== actor.id) throw noEditPermission();
      if (!withinLimit(settings.message_content_edit_limit_seconds)) throw badRequest('The time limit for editing this message has passed');
    }

    // The topic and channel as asked; naming the current ones changes nothing.
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
    let to = from;
    if (from && streamId !== undefined) {
      const target = await getChannel(tx, realm.id, streamId);
      if (!target || target.is_archived || !hasContentAccess(viewer, target)) throw badRequest('Invalid channel ID');
      to = target;
    }
    const toTopic = topic ?? message.topic;
    const moved = topic !== undefined || streamId !== undefined;
    if (to && moved) checkTopicAllowed(realm, to, toTopic);
    const resolves = topic !== undefined ? resolution(message.topic, requestedTopic!, topic) : null;

    if (from && to && topic !== undefined) {
      if (resolves) {
        if (!canResolveTopics(viewer, from, to)) throw badRequest("You don't have permission to resolve topics in this channel.");
      } else {
        if (!canEditTopic(viewer, from, to)) throw noEditPermission();
        if (!moderator && !withinLimit(settings.move_messages_within_stream_limit_seconds)) {
          throw badRequest("The time limit for editing this message's topic has passed.");
        }
      }
    }

    // Content: rendered and its mentions checked before anything is written.
    let rendered: RenderResult | undefined;
    let mentionBits: Map<number, number> | undefined;
    let holders: Set<number> | undefined;
    if (content !== undefined) {
      rendered = prerendered!();
      holders = await copyHolders(tx, [message.id]);
      mentionBits = await mentionFlags(tx, viewer, from ?? undefined, message.topic, rendered, holders);
      for (const id of await usersAlertedBy(tx, realm.id, content, holders)) mentionBits.set(id, (mentionBits.get(id) ?? 0) | FLAG_BITS.has_alert_word);
    }

    if (from && to && streamId !== undefined) {
      if (!canMoveOutOfChannel(viewer, from)) throw badRequest("You don't have permission to move this message");
      checkCanPost(viewer, to);
      if (!moderator && !withinLimit(settings.move_messages_between_streams_limit_seconds)) {
        throw badRequest("The time limit for editing this message's channel has passed");
      }
    }
    if (from && moved && req.propagate_mode === 'change_all' && !moderator && !resolves) {
      await checkWholeTopicMovable(tx, viewer, from, message, [
        topic !== undefined ? settings.move_messages_within_stream_limit_seconds : null,
        streamId !== undefined ? settings.move_messages_between_streams_limit_seconds : null,
      ]);
    }

    // Which messages move: this one, or the rest of the topic too. Moving to
    // another channel takes only what the mover can read (no way to reach
    // messages one cannot see); a topic change keeps the topic together.
    let changed: Message[] = [message];
    if (from && moved && req.propagate_mode !== 'change_one') {
      let others = (await topicMessages(tx, from.id, message.topic)).filter((m) =>
        req.propagate_mode === 'change_all' ? m.id !== message.id : m.id > message.id,
      );
      if (streamId !== undefined) others = await readableBy(tx, viewer, from, others);
      changed = [message, ...others].sort((a, b) => a.id - b.id);
    }
    const changedIds = changed.map((m) => m.id);
    const timestamp = Math.floor(now.getTime() / 1000);
    const countsAsMove = moved && !(resolves && streamId === undefined);
    const targetHadMessages =
      from && to && moved ? (await topicMessages(tx, to.id, toTopic)).some((m) => !changedIds.includes(m.id)) : false;
    const firstBefore = from && to && streamId !== undefined ? [await firstMessageId(tx, from.id), await firstMessageId(tx, to.id)] : [];

    // The edited message: its own history entry has everything this edit changed.
    const entry: EditHistoryEntry = { user_id: actor.id, timestamp };
    if (content !== undefined) {
      entry.prev_content = message.content;
      entry.prev_rendered_content = message.rendered_content;
    }
    if (from && to && streamId !== undefined) {
      entry.prev_stream = from.id;
      entry.stream = to.id;
    }
    if (topic !== undefined) {
      entry.prev_topic = message.topic;
      entry.topic = topic;
    }
    const recipientId = to && streamId !== undefined ? await channelRecipientId(tx, realm.id, to.id) : message.recipient_id;
    await tx
      .updateTable('messages')
      .set({
        ...(content !== undefined
          ? {
              content,
              rendered_content: rendered!.html,
              is_me_message: rendered!.is_me_message,
              has_link: rendered!.has_link,
              has_image: rendered!.has_image,
              has_attachment: rendered!.has_attachment,
              last_edit_at: now,
            }
          : {}),
        topic: toTopic,
        channel_id: to?.id ?? null,
        recipient_id: recipientId,
        last_moved_at: countsAsMove ? now : message.last_moved_at,
        edit_history: JSON.stringify([...(message.edit_history ?? []), entry]),
      })
      .where('id', '=', message.id)
      .execute();
    // Only the sender edits content: the files linked are the sender's to claim.
    const detached = content !== undefined ? await reclaimAttachments(tx, emit, realm, actor, message.id, rendered!.attachment_path_ids) : [];
    if (content !== undefined) await queueLinkPreviews(tx, realm, message.id, content, rendered!);
    // The rest of the topic: a move entry each, with each message's own previous place.
    const otherIds = changedIds.filter((id) => id !== message.id);
    if (to && otherIds.length > 0) {
      const moveEntry = sql`jsonb_build_object('user_id', ${actor.id}::integer, 'timestamp', ${timestamp}::bigint)
        || ${streamId !== undefined ? sql`jsonb_build_object('prev_stream', channel_id, 'stream', ${to.id}::integer)` : sql`'{}'::jsonb`}
        || ${topic !== undefined ? sql`jsonb_build_object('prev_topic', topic, 'topic', ${toTopic}::text)` : sql`'{}'::jsonb`}`;
      await sql`update messages set
          edit_history = coalesce(edit_history, '[]'::jsonb) || jsonb_build_array(${moveEntry}),
          topic = ${toTopic}, channel_id = ${to.id}, recipient_id = ${recipientId},
          last_moved_at = ${countsAsMove ? sql`${now}::timestamptz` : sql`last_moved_at`}
        where realm_id = ${realm.id} and id = any(${intArray(otherIds)})`.execute(tx);
    }

    // Mentions the new content makes or drops: one update per resulting set of mention flags.
    if (mentionBits && holders) {
      const byBits = new Map<number, number[]>();
      for (const userId of holders) {
        const bits = mentionBits.get(userId) ?? 0;
        byBits.set(bits, [...(byBits.get(bits) ?? []), userId]);
      }
      for (const [bits, userIds] of byBits) {
        await tx
          .updateTable('user_messages')
          .set({ flags: sql<number>`(flags & ${~(MENTION_BITS | FLAG_BITS.has_alert_word)}::integer) | ${bits}::integer` })
          .where('message_id', '=', message.id)
          .where('user_id', '=', sql<number>`any(${intArray(userIds)})`)
          .execute();
      }
    }

    // Who may read the messages where they now are.
    const losing = new Set<number>();
    if (from && to && streamId !== undefined) {
      const had = await messageAudience(tx, changedIds, from);
      const readers = await readersOf(tx, realm, to, had);
      for (const id of had) if (!readers.has(id)) losing.add(id);
      if (losing.size > 0) {
        await tx.deleteFrom('user_messages').where('message_id', '=', sql<number>`any(${intArray(changedIds)})`).where('user_id', '=', sql<number>`any(${intArray([...losing])})`).execute();
        // For them the messages are gone.
        emit(realm.id, { type: 'delete_message', message_ids: changedIds, message_type: 'stream', stream_id: from.id, topic: message.topic }, losing);
      }
      if (!to.history_public_to_subscribers) {
        // Protected history is read through copies: the destination's subscribers get one (as read).
        await sql`insert into user_messages (realm_id, user_id, message_id, flags)
            select ${realm.id}::integer, s.user_id, m.id, ${FLAG_BITS.read}::integer
            from subscriptions s cross join unnest(${intArray(changedIds)}) as m(id)
            where s.channel_id = ${to.id} and s.active
            on conflict (user_id, message_id) do nothing`.execute(tx);
      }
    }

    // Only a resolve (or unresolve) of the topic, nothing else, is announced as one.
    const announcedResolution = topic !== undefined && content === undefined && streamId === undefined ? resolves : null;
    let wholeTopic = false;
    let followers: Set<number> | undefined;
    if (from && to && moved) {
      const remaining = (await topicMessages(tx, from.id, message.topic)).filter((m) => !changedIds.includes(m.id));
      wholeTopic = req.propagate_mode === 'change_all' || (await readableBy(tx, viewer, from, remaining)).length === 0;
      // Who follows the topic, as the reference asks: before the preferences move when the whole topic does.
      if (announcedResolution && wholeTopic) followers = await topicFollowers(tx, from.id, message.topic);
      const move: Move = { from, to, fromTopic: message.topic, toTopic, movedIds: changedIds, targetHadMessages, losing };
      await carryTopicPolicies(tx, emit, viewer, move, message, wholeTopic);
      if (announcedResolution && !wholeTopic) followers = await topicFollowers(tx, to.id, toTopic);
    }

    await emitUpdate(tx, emit, realm, {
      actor,
      message,
      changedIds,
      timestamp,
      from,
      to,
      losing,
      content: content !== undefined ? { content, rendered: rendered! } : undefined,
      topic,
      streamMoved: streamId !== undefined,
      propagateMode: req.propagate_mode,
    });

    if (from && to && streamId !== undefined) {
      const [fromFirst, toFirst] = [await firstMessageId(tx, from.id), await firstMessageId(tx, to.id)];
      if (fromFirst !== firstBefore[0]) await emitChannelUpdate(svc, tx, emit, realm, from, 'first_message_id', fromFirst);
      if (toFirst !== firstBefore[1]) await emitChannelUpdate(svc, tx, emit, realm, to, 'first_message_id', toFirst);
    }

    if (from && to && moved) {
      const what: MovedMessages = {
        actor,
        from,
        fromTopic: message.topic,
        to,
        toTopic,
        messageId: message.id,
        count: changedIds.length,
        wholeTopic,
        realmUrl: realmUrl(realm, svc.config),
      };
      await postMoveNotices(svc, tx, emit, viewer, what, {
        changedIds,
        resolution: announcedResolution,
        followers: followers ?? new Set(),
        resolves: resolves !== null,
        streamMoved: streamId !== undefined,
        toOldThread: req.send_notification_to_old_thread,
        toNewThread: req.send_notification_to_new_thread,
      });
    }
    return { detached_uploads: detached };
  });
}

/** Humans following a topic (a resolve notice stays unread for them). */
async function topicFollowers(tx: Tx, channelId: number, topic: string): Promise<Set<number>> {
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

interface NoticeRules {
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
async function postMoveNotices(svc: Services, tx: Tx, emit: Emit, viewer: ChannelViewer, m: MovedMessages, r: NoticeRules): Promise<void> {
  const { realm } = viewer;
  let resolveNoticeId: number | undefined;
  if (r.resolution && !(await undoResolveNotice(svc, tx, emit, viewer, m.to, m.toTopic))) {
    // Read for everyone but those following the topic (the reference's default
    // resolved_topic_notice_auto_read_policy, "except_followed"), and the user who resolved it.
    const subscribers = (await subscriberIds(tx, [m.to.id])).get(m.to.id)!;
    const readBy = [...[...subscribers].filter((id) => !r.followers.has(id)), m.actor.id];
    [resolveNoticeId] = await sendNotices(svc, tx, emit, realm, [resolveNotice(m.actor, m.to, m.toTopic, r.resolution, readBy)]);
  }
  const notices: Notice[] = [];
  // Marking a topic resolved is no news to the topic it lands in; moving it to another channel is.
  if (r.toNewThread && (r.streamMoved || !r.resolves)) {
    // Judged by what the mover can see: nothing is told of messages they cannot read.
    const others = (await topicMessages(tx, m.to.id, m.toTopic)).filter((x) => !r.changedIds.includes(x.id) && x.id !== resolveNoticeId);
    notices.push(newThreadNotice(m, (await readableBy(tx, viewer, m.to, others)).length > 0));
  }
  if (r.toOldThread) notices.push(oldThreadNotice(m));
  await sendNotices(svc, tx, emit, realm, notices);
}

/**
 * Undoing a resolve (or unresolve) soon after: when the topic's last message is
 * the notice of it, younger than the grace period, that notice is deleted and
 * no new one is posted (maybe_delete_previous_resolve_topic_notification).
 */
async function undoResolveNotice(svc: Hooked, tx: Tx, emit: Emit, viewer: ChannelViewer, channel: Channel, topic: string): Promise<boolean> {
  const last = await tx
    .selectFrom('messages')
    .selectAll()
    .where('channel_id', '=', channel.id)
    .where(sql<string>`lower(topic)`, '=', topic.toLowerCase())
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!last || !isResolveNotice(last, (await notificationBot(tx, viewer.realm.id)).id)) return false;
  if (Date.now() - last.date_sent.getTime() > RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS * 1000) return false;
  await deleteMessages(svc, tx, emit, viewer.realm, [last], channel, viewer.user);
  return true;
}

interface UpdateFacts {
  actor: User;
  message: Message;
  changedIds: number[];
  timestamp: number;
  from: Channel | null;
  to: Channel | null;
  losing: Set<number>;
  content?: { content: string; rendered: RenderResult };
  topic?: string;
  streamMoved: boolean;
  propagateMode: PropagateMode;
}

/**
 * `update_message` (digest 3.3) to everyone who has the messages where they
 * now are: copy holders, each with their flags on the edited message, and the
 * subscribers of channels whose shared history shows them (flags `read`).
 */
async function emitUpdate(tx: Tx, emit: Emit, realm: Realm, f: UpdateFacts): Promise<void> {
  const { message, from, to } = f;
  const event: ServerEvent = {
    type: 'update_message',
    user_id: f.actor.id,
    edit_timestamp: f.timestamp,
    message_id: message.id,
    message_ids: f.changedIds,
    rendering_only: false,
    flags: ['read'],
  };
  if (f.content) {
    Object.assign(event, {
      orig_content: message.content,
      orig_rendered_content: message.rendered_content,
      content: f.content.content,
      rendered_content: f.content.rendered.html,
      is_me_message: f.content.rendered.is_me_message,
    });
  }
  if (from && to) {
    Object.assign(event, { stream_name: from.name, stream_id: from.id });
    if (f.topic !== undefined || f.streamMoved) event.propagate_mode = f.propagateMode;
    if (f.streamMoved) Object.assign(event, { new_stream_id: to.id, orig_subject: message.topic });
    if (f.topic !== undefined) {
      Object.assign(event, { orig_subject: message.topic, subject: f.topic, topic_links: (await topicLinker(tx, realm.id))(f.topic) });
    }
  }

  const copies = await tx
    .selectFrom('user_messages')
    .select(['user_id', 'message_id', 'flags'])
    .where('message_id', '=', sql<number>`any(${intArray(f.changedIds)})`)
    .execute();
  const audience = new Set(copies.map((c) => c.user_id));
  const perUser: Record<number, Record<string, unknown>> = {};
  for (const c of copies) if (c.message_id === message.id) perUser[c.user_id] = { flags: flagNames(c.flags) };
  for (const channel of new Set([from, to])) {
    if (!channel?.history_public_to_subscribers) continue;
    for (const id of (await subscriberIds(tx, [channel.id])).get(channel.id)!) if (!f.losing.has(id)) audience.add(id);
  }
  if (audience.size === 0) return;
  // Followers of all public channels see public channels' messages: their edits too, unless a move made them private.
  const publicChannel = from !== null && to !== null && !from.invite_only && !to.invite_only;
  emit(realm.id, event, audience, { perUser, publicChannel });
}

/** Whether a channel has messages outside the empty topic (for `topics_policy: empty_topic_only`). */
export async function hasNamedTopics(tx: Tx, channelId: number): Promise<boolean> {
  const row = await tx.selectFrom('messages').select('id').where('channel_id', '=', channelId).where('topic', '<>', '').limit(1).executeTakeFirst();
  return row !== undefined;
}

