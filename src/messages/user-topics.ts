// Per-user topic visibility (spec "Topic visibility policy", digest 1.4):
// 0 none, 1 muted, 2 unmuted, 3 followed. Setting one always emits user_topic.

import { sql } from 'kysely';
import type { Executor } from '../db/schema.ts';
import type { Emit, Tx } from '../db/transact.ts';

export const VISIBILITY = { INHERIT: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;
export type VisibilityPolicy = (typeof VISIBILITY)[keyof typeof VISIBILITY];

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

/** Stores a policy (0 removes the row) and tells the user's clients. */
export async function setVisibilityPolicy(
  tx: Tx,
  emit: Emit,
  realmId: number,
  userId: number,
  channelId: number,
  topic: string,
  policy: VisibilityPolicy,
): Promise<void> {
  const now = new Date();
  await tx
    .deleteFrom('user_topics')
    .where('user_id', '=', userId)
    .where('channel_id', '=', channelId)
    .where(sql<string>`lower(topic)`, '=', topic.toLowerCase())
    .execute();
  if (policy !== VISIBILITY.INHERIT) {
    await tx
      .insertInto('user_topics')
      .values({ realm_id: realmId, user_id: userId, channel_id: channelId, topic, visibility_policy: policy, last_updated: now })
      .execute();
  }
  emit(
    realmId,
    { type: 'user_topic', stream_id: channelId, topic_name: topic, last_updated: Math.floor(now.getTime() / 1000), visibility_policy: policy },
    [userId],
  );
}
