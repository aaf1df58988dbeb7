import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { addReaction, removeReaction } from './reactions.ts';

export function reactionRoutes(r: Router): void {
  r.route(
    'POST',
    '/messages/{message_id}/reactions',
    { emoji_name: p.str(), emoji_code: p.str().optional(), reaction_type: p.str().optional() },
    async (ctx, q) => {
      await addReaction(ctx.svc, ctx.realm, ctx.user, q.message_id, q);
      return {};
    },
  );

  r.route(
    'DELETE',
    '/messages/{message_id}/reactions',
    { emoji_name: p.str().optional(), emoji_code: p.str().optional(), reaction_type: p.str().default('unicode_emoji') },
    async (ctx, q) => {
      await removeReaction(ctx.svc, ctx.realm, ctx.user, q.message_id, q);
      return {};
    },
  );
}
