import type { Router } from '../../http/router.ts';
import { p, unsupportedCombination } from '../../http/params.ts';
import { badRequest } from '../../http/errors.ts';
import { TEXT_BOUNDS } from '../../realm/state.ts';
import { topicParameter } from '../validation.ts';
import { VISIBILITY, type VisibilityPolicy } from './user-topics.ts';
import { channelTopics, updateMutedTopic, updateUserTopic, type ChannelRef } from './topics.ts';
import { deleteTopic } from './delete-topic.ts';

/** A topic named in a request: at most `max_topic_length` characters, "general chat" read as empty. */
const topicName = p.str().map((raw, name) => {
  if ([...raw].length > TEXT_BOUNDS.max_topic_length) throw badRequest(`${name} is too long (limit: ${TEXT_BOUNDS.max_topic_length} characters)`);
  return topicParameter(raw.trim());
});

const POLICIES: readonly number[] = Object.values(VISIBILITY);

const visibilityPolicy = p.int().map((value, name) => {
  if (!POLICIES.includes(value)) throw badRequest(`Invalid ${name}: Value error, Not in the list of possible values`);
  return value as VisibilityPolicy;
});

export function topicRoutes(r: Router): void {
  r.route('POST', '/user_topics', { stream_id: p.int(), topic: topicName, visibility_policy: visibilityPolicy }, async (ctx, q) => {
    await updateUserTopic(ctx.svc, ctx.realm, ctx.user, q);
    return {};
  });

  r.route(
    'PATCH',
    '/users/me/subscriptions/muted_topics',
    { stream_id: p.int().optional(), stream: p.str().optional(), topic: topicName, op: p.choice(['add', 'remove'] as const) },
    async (ctx, q) => {
      // Exactly one way of naming the channel (digest 1.6).
      if (q.stream_id === undefined && q.stream === undefined) throw badRequest("Missing 'stream_id' argument");
      if (q.stream_id !== undefined && q.stream !== undefined) throw unsupportedCombination(['stream_id', 'stream']);
      const channel: ChannelRef = q.stream_id !== undefined ? { id: q.stream_id } : { name: q.stream! };
      await updateMutedTopic(ctx.svc, ctx.realm, ctx.user, { channel, topic: q.topic, op: q.op });
      return {};
    },
  );

  r.publicRoute('GET', '/users/me/{stream_id}/topics', 'optional', { allow_empty_topic_name: p.bool().default(false) }, async (ctx, q) => ({
    topics: await channelTopics(ctx.svc.db, ctx.realm!, ctx.user, q.stream_id, { allowEmptyTopicName: q.allow_empty_topic_name }),
  }));

  r.route('POST', '/streams/{stream_id}/delete_topic', { topic_name: topicName }, async (ctx, q) =>
    deleteTopic(ctx.svc, ctx.realm, ctx.user, q.stream_id, q.topic_name),
  );
}
