// A move of messages to another topic or channel: which messages go, the rest of
// the topic written after the edited message, who can no longer read them, the
// topic's preferences, and the channels' first message ids.

import { sql } from 'kysely';
import type { Hooked } from '../../services.ts';
import type { Realm } from '../../realm/tables.ts';
import type { Channel } from '../../channels/tables.ts';
import type { Message } from '../tables.ts';
import type { ActionContext, Tx } from '../../db/transact.ts';
import type { ChannelViewer } from '../../channels/access.ts';
import { hasContentAccess } from '../../channels/access.ts';
import { emitChannelUpdate } from '../../channels/events.ts';
import { groupMemberIds } from '../../user_groups/group-setting.ts';
import { FLAG_BITS } from '../flags/flags.ts';
import { firstMessageId, messageAudience } from '../history/changes.ts';
import { intArray } from '../state-support.ts';
import type { Edit, EditContext } from './request.ts';
import { readableBy, topicMessages } from './topic-messages.ts';
import { carryTopicPolicies } from './topic-policies.ts';
import { topicFollowers } from './notices.ts';

/** How the changed messages are written, the edited one and the rest of its topic alike. */
export interface Placement {
  changedIds: number[];
  timestamp: number;
  recipientId: number;
  /** A resolve alone does not count as a move (last_moved_at). */
  countsAsMove: boolean;
}

/**
 * Which messages change: this one, or the rest of the topic too. Moving to
 * another channel takes only what the mover can read (no way to reach
 * messages one cannot see); a topic change keeps the topic together.
 */
export async function messagesToChange(tx: Tx, viewer: ChannelViewer, edit: Edit): Promise<number[]> {
  const { from, message } = edit;
  let changed: Message[] = [message];
  if (from && edit.moved && edit.propagateMode !== 'change_one') {
    let others = (await topicMessages(tx, from.id, message.topic)).filter((m) =>
      edit.propagateMode === 'change_all' ? m.id !== message.id : m.id > message.id,
    );
    if (edit.streamId !== undefined) others = await readableBy(tx, viewer, from, others);
    changed = [message, ...others].sort((a, b) => a.id - b.id);
  }
  return changed.map((m) => m.id);
}

/** What a move changes that is read before it: whether the destination topic had messages, the channels' first message ids. */
export interface BeforeMove {
  targetHadMessages: boolean;
  firstIds: (number | null)[];
}

export async function beforeMove(tx: Tx, edit: Edit, changedIds: number[]): Promise<BeforeMove> {
  const { from, to } = edit;
  const targetHadMessages = from && to && edit.moved ? (await topicMessages(tx, to.id, edit.toTopic)).some((m) => !changedIds.includes(m.id)) : false;
  const firstIds = from && to && edit.streamId !== undefined ? [await firstMessageId(tx, from.id), await firstMessageId(tx, to.id)] : [];
  return { targetHadMessages, firstIds };
}

/** The rest of the topic: a move entry each, with each message's own previous place. */
export async function moveRest(tx: Tx, viewer: ChannelViewer, edit: Edit, p: Placement): Promise<void> {
  const { to, message } = edit;
  const otherIds = p.changedIds.filter((id) => id !== message.id);
  if (!to || otherIds.length === 0) return;
  const moveEntry = sql`jsonb_build_object('user_id', ${viewer.user.id}::integer, 'timestamp', ${p.timestamp}::bigint)
    || ${edit.streamId !== undefined ? sql`jsonb_build_object('prev_stream', channel_id, 'stream', ${to.id}::integer)` : sql`'{}'::jsonb`}
    || ${edit.topic !== undefined ? sql`jsonb_build_object('prev_topic', topic, 'topic', ${edit.toTopic}::text)` : sql`'{}'::jsonb`}`;
  await sql`update messages set
      edit_history = coalesce(edit_history, '[]'::jsonb) || jsonb_build_array(${moveEntry}),
      topic = ${edit.toTopic}, channel_id = ${to.id}, recipient_id = ${p.recipientId},
      last_moved_at = ${p.countsAsMove ? sql`${edit.now}::timestamptz` : sql`last_moved_at`}
    where realm_id = ${viewer.realm.id} and id = any(${intArray(otherIds)})`.execute(tx);
}

/** Of these users, those who may read the channel's messages (hasContentAccess, for many users at once). */
async function readersOf(tx: Tx, realm: Realm, channel: Channel, userIds: Iterable<number>): Promise<Set<number>> {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return new Set();
  const [users, subs] = await Promise.all([
    tx
      .selectFrom('users')
      .selectAll()
      .where('realm_id', '=', realm.id)
      .where('id', '=', sql<number>`any(${intArray(ids)})`)
      .execute(),
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

/**
 * Who may read the messages where they now are, after a channel change: those
 * who cannot lose their copies (and are told the messages are gone); a channel
 * with protected history gives its subscribers copies. Returns those who lost them.
 */
export async function settleReaders(ctx: ActionContext<unknown>, edit: Edit, changedIds: number[]): Promise<Set<number>> {
  const { tx, emit, realm } = ctx;
  const { from, to, message } = edit;
  const losing = new Set<number>();
  if (!from || !to || edit.streamId === undefined) return losing;
  const had = await messageAudience(tx, changedIds, from);
  const readers = await readersOf(tx, realm, to, had);
  for (const id of had) if (!readers.has(id)) losing.add(id);
  if (losing.size > 0) {
    await tx
      .deleteFrom('user_messages')
      .where('message_id', '=', sql<number>`any(${intArray(changedIds)})`)
      .where('user_id', '=', sql<number>`any(${intArray([...losing])})`)
      .execute();
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
  return losing;
}

/** What a move did to its topic: whether all of it moved, and who followed it (for a resolve notice). */
export interface TopicMove {
  wholeTopic: boolean;
  followers: Set<number>;
}

/**
 * The topic's preferences after a move. Followers are read as the reference
 * does: before the preferences move when the whole topic does, after otherwise.
 */
export async function moveTopicState(
  ctx: EditContext,
  edit: Edit,
  moved: { changedIds: number[]; targetHadMessages: boolean; losing: Set<number>; announcedResolution: boolean },
): Promise<TopicMove> {
  const { tx, viewer } = ctx;
  const { from, to, message } = edit;
  let followers = new Set<number>();
  if (!from || !to || !edit.moved) return { wholeTopic: false, followers };
  const remaining = (await topicMessages(tx, from.id, message.topic)).filter((m) => !moved.changedIds.includes(m.id));
  const wholeTopic = edit.propagateMode === 'change_all' || (await readableBy(tx, viewer, from, remaining)).length === 0;
  if (moved.announcedResolution && wholeTopic) followers = await topicFollowers(tx, from.id, message.topic);
  const move = {
    from,
    to,
    fromTopic: message.topic,
    toTopic: edit.toTopic,
    movedIds: moved.changedIds,
    targetHadMessages: moved.targetHadMessages,
    losing: moved.losing,
  };
  await carryTopicPolicies(ctx, move, message, wholeTopic);
  if (moved.announcedResolution && !wholeTopic) followers = await topicFollowers(tx, to.id, edit.toTopic);
  return { wholeTopic, followers };
}

/** The channels' first message ids, announced where a channel change moved them. */
export async function announceFirstMessageIds(ctx: ActionContext<Hooked>, edit: Edit, before: BeforeMove): Promise<void> {
  const { tx } = ctx;
  const { from, to } = edit;
  if (!from || !to || edit.streamId === undefined) return;
  const [fromFirst, toFirst] = [await firstMessageId(tx, from.id), await firstMessageId(tx, to.id)];
  if (fromFirst !== before.firstIds[0]) await emitChannelUpdate(ctx, from, 'first_message_id', fromFirst);
  if (toFirst !== before.firstIds[1]) await emitChannelUpdate(ctx, to, 'first_message_id', toFirst);
}
