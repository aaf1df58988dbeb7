import type { Router } from '../../http/router.ts';
import { p } from '../../http/params.ts';
import { setEditTypingStatus, setTypingStatus } from './typing.ts';

const op = p.choice(['start', 'stop'] as const);

export function typingRoutes(r: Router): void {
  r.route(
    'POST',
    '/typing',
    {
      op,
      // `channel` is the current name of `stream`; `private` is no longer accepted (level 215).
      type: p.choice(['direct', 'stream', 'channel'] as const).default('direct'),
      to: p.intList().optional(),
      stream_id: p.int().optional(),
      topic: p.str().optional(),
    },
    async (ctx, q) => {
      await setTypingStatus(
        ctx.svc,
        ctx.realm,
        ctx.user,
        q.type === 'direct' ? { type: 'direct', op: q.op, to: q.to } : { type: 'stream', op: q.op, streamId: q.stream_id, topic: q.topic },
      );
      return {};
    },
  );

  // Editing a message: the path since level 361, the digest's form of it, and the body form of levels 351-360.
  for (const path of ['/messages/{message_id}/typing', '/message_edit_typing/{message_id}'] as const) {
    r.route('POST', path, { op }, async (ctx, q) => {
      await setEditTypingStatus(ctx.svc, ctx.realm, ctx.user, q.message_id, q.op);
      return {};
    });
  }
  r.route('POST', '/message_edit_typing', { message_id: p.int(), op }, async (ctx, q) => {
    await setEditTypingStatus(ctx.svc, ctx.realm, ctx.user, q.message_id, q.op);
    return {};
  });
}
