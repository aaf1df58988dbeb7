// Topics of a channel and a user's preferences for them: POST /user_topics
// (spec endpoint 4, digest 1.4), the deprecated PATCH
// /users/me/subscriptions/muted_topics (spec endpoint 6, digest 1.6) and
// GET /users/me/{stream_id}/topics (digest section 2).

import { sql } from 'kysely';
import type { Services } from '../../services.ts';
import type { Executor } from '../../db/schema.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import type { Channel } from '../../channels/tables.ts';
import { transactAs, type Tx } from '../../db/transact.ts';
import { badRequest } from '../../http/errors.ts';
import { channelViewer, hasContentAccess, hasMetadataAccess, type ChannelViewer } from '../../channels/access.ts';
import { getChannel, getChannelByName } from '../../channels/queries.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../../events/shape.ts';
import { hasPoliciesIn, setVisibilityPolicy, VISIBILITY, type VisibilityPolicy } from './user-topics.ts';

export type ChannelRef = { id: number } | { name: string };

async function lookUp(db: Executor, realmId: number, ref: ChannelRef): Promise<Channel | undefined> {
  return 'id' in ref ? getChannel(db, realmId, ref.id) : getChannelByName(db, realmId, ref.name);
}

/** A channel whose topics the user may mute, unmute or follow: one they can read (digest 1.4). */
async function channelToSetPolicy(tx: Tx, viewer: ChannelViewer, ref: ChannelRef): Promise<Channel> {
  const channel = await lookUp(tx, viewer.realm.id, ref);
  if (!channel || !hasContentAccess(viewer, channel)) {
    throw badRequest('id' in ref ? 'Invalid channel ID' : `Invalid channel name '${ref.name}'`);
  }
  return channel;
}

/**
 * A channel whose policies the user may remove: one they may know of, or one
 * where they still have policies after losing access (so they can clean up).
 */
async function channelToRemovePolicy(tx: Tx, viewer: ChannelViewer, ref: ChannelRef, error: string): Promise<Channel> {
  const channel = await lookUp(tx, viewer.realm.id, ref);
  if (!channel) throw badRequest(error);
  if (!hasMetadataAccess(viewer, channel) && !(await hasPoliciesIn(tx, viewer.user.id, channel.id))) throw badRequest(error);
  return channel;
}

/** POST /user_topics. The topic is already read as a parameter (`topicParameter`). */
export async function updateUserTopic(
  svc: Services,
  realm: Realm,
  user: User,
  req: { stream_id: number; topic: string; visibility_policy: VisibilityPolicy },
): Promise<void> {
  const { stream_id: channelId, topic, visibility_policy: policy } = req;
  await transactAs(svc, realm, user, async (ctx) => {
    const { tx } = ctx;
    const viewer = await channelViewer(tx, realm, user);
    const channel =
      policy === VISIBILITY.INHERIT
        ? await channelToRemovePolicy(tx, viewer, { id: channelId }, 'Invalid channel ID')
        : await channelToSetPolicy(tx, viewer, { id: channelId });
    await setVisibilityPolicy(ctx, { userId: user.id, channelId: channel.id, topic, policy });
  });
}

/** The deprecated PATCH /users/me/subscriptions/muted_topics: `add` mutes, `remove` clears; both idempotent. */
export async function updateMutedTopic(
  svc: Services,
  realm: Realm,
  user: User,
  req: { channel: ChannelRef; topic: string; op: 'add' | 'remove' },
): Promise<void> {
  const { channel: ref, topic, op } = req;
  await transactAs(svc, realm, user, async (ctx) => {
    const { tx } = ctx;
    const viewer = await channelViewer(tx, realm, user);
    if (op === 'add') {
      const channel = await channelToSetPolicy(tx, viewer, ref);
      await setVisibilityPolicy(ctx, { userId: user.id, channelId: channel.id, topic, policy: VISIBILITY.MUTED });
    } else {
      const channel = await channelToRemovePolicy(tx, viewer, ref, 'Topic is not muted');
      await setVisibilityPolicy(ctx, { userId: user.id, channelId: channel.id, topic, policy: VISIBILITY.INHERIT });
    }
  });
}

export interface TopicSummary {
  name: string;
  max_id: number;
}

/**
 * The topics of a channel with the newest message the user may read in each,
 * newest first (digest section 2). With shared history that is every message
 * of the channel; otherwise only the user's own copies (spec: protected history).
 * Topics differing only in case are one topic, named as its newest message is.
 */
export async function channelTopics(
  db: Executor,
  realm: Realm,
  user: User | null,
  channelId: number,
  opts: { allowEmptyTopicName: boolean },
): Promise<TopicSummary[]> {
  const channel = await getChannel(db, realm.id, channelId);
  let wholeHistory: boolean;
  if (user) {
    const viewer = await channelViewer(db, realm, user);
    if (!channel || !hasMetadataAccess(viewer, channel)) throw badRequest('Invalid channel ID');
    wholeHistory = channel.history_public_to_subscribers && hasContentAccess(viewer, channel);
  } else {
    // Spectators: web-public channels, whose history is always public.
    if (!channel || !channel.is_web_public) throw badRequest('Invalid channel ID');
    wholeHistory = true;
  }
  const latest = wholeHistory
    ? sql`select max(id) as max_id from messages where channel_id = ${channel.id} group by lower(topic)`
    : sql`select max(m.id) as max_id from messages m join user_messages um on um.message_id = m.id and um.user_id = ${user!.id}
          where m.channel_id = ${channel.id} group by lower(m.topic)`;
  const result = await sql<{ topic: string; max_id: number }>`
    select m.topic, t.max_id from (${latest}) t join messages m on m.id = t.max_id and m.realm_id = ${realm.id}
    order by t.max_id desc`.execute(db);
  return result.rows.map((r) => ({
    name: r.topic === '' && !opts.allowEmptyTopicName ? EMPTY_TOPIC_DISPLAY_NAME : r.topic,
    max_id: r.max_id,
  }));
}

/** Whether a channel has messages outside the empty topic (for `topics_policy: empty_topic_only`). */
export async function hasNamedTopics(tx: Tx, channelId: number): Promise<boolean> {
  const row = await tx.selectFrom('messages').select('id').where('channel_id', '=', channelId).where('topic', '<>', '').limit(1).executeTakeFirst();
  return row !== undefined;
}
