import { z } from 'zod';
import type { Router } from '../../http/router.ts';
import { p } from '../../http/params.ts';
import { parseNarrow } from '../fetch/narrow.ts';
import { markAllAsRead, markChannelAsRead, markTopicAsRead, updateFlagsForNarrow, updateMessageFlags } from './flag-actions.ts';

export function messageFlagRoutes(r: Router): void {
  // `op` and `flag` are plain strings: the action reports unknown values in the reference's words.
  r.route('POST', '/messages/flags', { messages: p.intList(), op: p.str(), flag: p.str() }, async (ctx, q) => {
    const result = await updateMessageFlags(ctx.svc, ctx.realm, ctx.user, q);
    // `messages` echoes the request (digest 1.27).
    return { messages: q.messages, ignored_because_not_subscribed_channels: result.ignored_because_not_subscribed_channels };
  });

  r.route(
    'POST',
    '/messages/flags/narrow',
    {
      anchor: p.str(),
      include_anchor: p.bool().default(true),
      num_before: p.int(z.int().min(0)),
      num_after: p.int(z.int().min(0)),
      narrow: p.json(z.unknown()).map((value) => parseNarrow(value ?? [])),
      op: p.str(),
      flag: p.str(),
    },
    async (ctx, q) => updateFlagsForNarrow(ctx.svc, ctx.realm, ctx.user, q),
  );

  r.route('POST', '/mark_all_as_read', {}, async (ctx) => markAllAsRead(ctx.svc, ctx.realm, ctx.user));

  r.route('POST', '/mark_stream_as_read', { stream_id: p.int() }, async (ctx, q) => {
    await markChannelAsRead(ctx.svc, ctx.realm, ctx.user, q.stream_id);
    return {};
  });

  r.route('POST', '/mark_topic_as_read', { stream_id: p.int(), topic_name: p.str() }, async (ctx, q) => {
    await markTopicAsRead(ctx.svc, ctx.realm, ctx.user, q.stream_id, q.topic_name);
    return {};
  });
}
