// Per-user topic visibility (spec "Topic visibility policy", digest 1.4):
// 0 none, 1 muted, 2 unmuted, 3 followed. Setting one always emits user_topic
// (and the legacy muted_topics list, for clients that still follow it).

import { sql } from 'kysely';
import type { Executor } from '../../db/schema.ts';
import type { ActionContext } from '../../db/transact.ts';
import { once, type RegisterContext } from '../../events/state.ts';

export const VISIBILITY = { INHERIT: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;
export type VisibilityPolicy = (typeof VISIBILITY)[keyof typeof VISIBILITY];

/** A `user_topics` entry of register, and the payload of a `user_topic` event. */
export interface UserTopicEntry {
  stream_id: number;
  topic_name: string;
  last_updated: number;
  visibility_policy: number;
}

/** A legacy `muted_topics` entry: `[channel_name, topic, timestamp]`. */
export type MutedTopicEntry = [string, string, number];

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

export async function visibilityPolicy(db: Executor, userId: number, channelId: number, topic: string): Promise<VisibilityPolicy> {
  const row = await db
    .selectFrom('user_topics')
    .select('visibility_policy')
    .where('user_id', '=', userId)
    .where('channel_id', '=', channelId)
    .where(sql<string>`lower(topic)`, '=', topic.toLowerCase())
    .executeTakeFirst();
  return (row?.visibility_policy ?? VISIBILITY.INHERIT) as VisibilityPolicy;
}

/** Whether the user has any policy stored in a channel (they may always remove it). */
export async function hasPoliciesIn(db: Executor, userId: number, channelId: number): Promise<boolean> {
  const row = await db
    .selectFrom('user_topics')
    .select('channel_id')
    .where('user_id', '=', userId)
    .where('channel_id', '=', channelId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** One order for register and for clients applying events: channel, then topic. */
export function compareUserTopics(a: UserTopicEntry, b: UserTopicEntry): number {
  if (a.stream_id !== b.stream_id) return a.stream_id - b.stream_id;
  const [x, y] = [a.topic_name.toLowerCase(), b.topic_name.toLowerCase()];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Oldest first, then by channel name and topic. */
export function compareMutedTopics(a: MutedTopicEntry, b: MutedTopicEntry): number {
  if (a[2] !== b[2]) return a[2] - b[2];
  const [x, y] = [`${a[0]}\u0000${a[1]}`, `${b[0]}\u0000${b[1]}`];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A stored policy: a row of `user_topics`. */
export type TopicPolicyRow = { channel_id: number; topic: string; last_updated: Date; visibility_policy: number };

/** The register caller's policies, read once per call: user_topics, muted_topics and unread_msgs each start from them. */
export function registerTopicPolicies(ctx: RegisterContext): Promise<TopicPolicyRow[]> {
  return once(ctx, 'topics:policies', () =>
    ctx.svc.db.selectFrom('user_topics').select(['channel_id', 'topic', 'last_updated', 'visibility_policy']).where('user_id', '=', ctx.user!.id).execute(),
  );
}

export function userTopicEntries(rows: TopicPolicyRow[]): UserTopicEntry[] {
  return rows
    .map((r) => ({ stream_id: r.channel_id, topic_name: r.topic, last_updated: seconds(r.last_updated), visibility_policy: r.visibility_policy }))
    .sort(compareUserTopics);
}

/** The legacy list from the policies, with the channels' names (every channel of the organization). */
export function mutedTopicEntries(rows: TopicPolicyRow[], names: ReadonlyMap<number, string>): MutedTopicEntry[] {
  return rows
    .filter((r) => r.visibility_policy === VISIBILITY.MUTED && names.has(r.channel_id))
    .map((r): MutedTopicEntry => [names.get(r.channel_id)!, r.topic, seconds(r.last_updated)])
    .sort(compareMutedTopics);
}

export async function mutedTopics(db: Executor, userId: number): Promise<MutedTopicEntry[]> {
  const rows = await db
    .selectFrom('user_topics as ut')
    .innerJoin('channels as c', 'c.id', 'ut.channel_id')
    .select(['c.name', 'ut.topic', 'ut.last_updated'])
    .where('ut.user_id', '=', userId)
    .where('ut.visibility_policy', '=', VISIBILITY.MUTED)
    .execute();
  return rows.map((r): MutedTopicEntry => [r.name, r.topic, seconds(r.last_updated)]).sort(compareMutedTopics);
}

/** One user's policy for one topic. */
export interface TopicPolicy {
  userId: number;
  channelId: number;
  topic: string;
  policy: VisibilityPolicy;
}

/** Stores a policy (0 removes the row) and tells the user's clients, in the caller's transaction. */
export async function setVisibilityPolicy(ctx: ActionContext<unknown>, p: TopicPolicy): Promise<void> {
  const { tx, emit } = ctx;
  const realmId = ctx.realm.id;
  const { userId, channelId, topic, policy } = p;
  const now = new Date();
  if (policy === VISIBILITY.INHERIT) {
    await tx
      .deleteFrom('user_topics')
      .where('user_id', '=', userId)
      .where('channel_id', '=', channelId)
      .where(sql<string>`lower(topic)`, '=', topic.toLowerCase())
      .execute();
  } else {
    // One statement, so that concurrent copies of a request replace rather than collide.
    await tx
      .insertInto('user_topics')
      .values({ realm_id: realmId, user_id: userId, channel_id: channelId, topic, visibility_policy: policy, last_updated: now })
      .onConflict((oc) =>
        oc.expression(sql`user_id, channel_id, lower(topic)`).doUpdateSet((eb) => ({
          topic: eb.ref('excluded.topic'),
          visibility_policy: eb.ref('excluded.visibility_policy'),
          last_updated: eb.ref('excluded.last_updated'),
        })),
      )
      .execute();
  }
  // The legacy full list first, as Zulip sends it; queues that take user_topic never see it.
  emit(realmId, { type: 'muted_topics', muted_topics: await mutedTopics(tx, userId) }, [userId]);
  const event: UserTopicEntry = { stream_id: channelId, topic_name: topic, last_updated: seconds(now), visibility_policy: policy };
  emit(realmId, { type: 'user_topic', ...event }, [userId]);
}
