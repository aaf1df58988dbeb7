// Users' visibility policies when messages move: a whole topic's follow it, or
// the sender may start following the topic they now began.

import { sql } from 'kysely';
import type { Channel } from '../../channels/tables.ts';
import type { Message } from '../tables.ts';
import type { ActionContext, Tx } from '../../db/transact.ts';
import { userSettings } from '../../users/settings.ts';
import { channelViewer } from '../../channels/access.ts';
import { activeSubscription } from '../../channels/queries.ts';
import { setVisibilityPolicy, visibilityPolicy, VISIBILITY, type VisibilityPolicy } from '../topics/user-topics.ts';
import { readableBy, topicMessages } from './topic-messages.ts';

export interface Move {
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

/**
 * A whole topic moved (as far as the mover can see): users' preferences for it
 * follow it, merged with those they had for the destination. Otherwise the
 * sender may start following the new topic they now began.
 */
export async function carryTopicPolicies(ctx: ActionContext<unknown>, move: Move, message: Message, wholeTopic: boolean): Promise<void> {
  if (wholeTopic) await carryWholeTopicPolicies(ctx, move);
  else await followBegunTopic(ctx, move, message);
}

async function carryWholeTopicPolicies(ctx: ActionContext<unknown>, move: Move): Promise<void> {
  const { tx } = ctx;
  const { from, to, fromTopic, toTopic } = move;
  const fromPolicies = await topicPolicies(tx, from.id, fromTopic);
  const toPolicies = await topicPolicies(tx, to.id, toTopic);
  // A change of case only: the same row, renamed.
  const sameRow = from.id === to.id && fromTopic.toLowerCase() === toTopic.toLowerCase();
  for (const userId of new Set([...fromPolicies.keys(), ...toPolicies.keys()])) {
    const before = fromPolicies.get(userId) ?? VISIBILITY.INHERIT;
    if (before !== VISIBILITY.INHERIT) await setVisibilityPolicy(ctx, { userId, channelId: from.id, topic: fromTopic, policy: VISIBILITY.INHERIT });
    // Users who lost the messages keep no preference in a channel they cannot read.
    if (move.losing.has(userId)) continue;
    const there = sameRow ? VISIBILITY.INHERIT : (toPolicies.get(userId) ?? VISIBILITY.INHERIT);
    const after = move.targetHadMessages ? mergedPolicy(before, toPolicies.get(userId) ?? VISIBILITY.INHERIT) : before;
    if (after !== there) await setVisibilityPolicy(ctx, { userId, channelId: to.id, topic: toTopic, policy: after });
  }
}

/** The sender's policy for a topic their moved message now begins (automatically follow or unmute "on initiation"). */
async function followBegunTopic(ctx: ActionContext<unknown>, move: Move, message: Message): Promise<void> {
  const { tx, realm } = ctx;
  const { to, toTopic } = move;
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
    const sub = await activeSubscription(tx, sender.id, to.id);
    if (sub?.is_muted) policy = VISIBILITY.UNMUTED;
  }
  if (policy !== undefined && (await visibilityPolicy(tx, sender.id, to.id, toTopic)) !== policy) {
    await setVisibilityPolicy(ctx, { userId: sender.id, channelId: to.id, topic: toTopic, policy });
  }
}
