import type { Router } from '../../http/router.ts';
import type { Config } from '../../config.ts';
import { p } from '../../http/params.ts';
import { addReaction, removeReaction } from './reactions.ts';

/** The reference's name of our extra emoji's type, accepted on input with compatible names on (docs/DECISIONS.md). */
function reactionTypeIn<T extends string | undefined>(config: Config, type: T): T {
  return (config.compatNames && type === 'zulip_extra_emoji' ? 'svc_extra_emoji' : type) as T;
}

export function reactionRoutes(r: Router): void {
  r.route(
    'POST',
    '/messages/{message_id}/reactions',
    { emoji_name: p.str(), emoji_code: p.str().optional(), reaction_type: p.str().optional() },
    async (ctx, q) => {
      await addReaction(ctx.svc, ctx.realm, ctx.user, q.message_id, { ...q, reaction_type: reactionTypeIn(ctx.svc.config, q.reaction_type) });
      return {};
    },
  );

  r.route(
    'DELETE',
    '/messages/{message_id}/reactions',
    { emoji_name: p.str().optional(), emoji_code: p.str().optional(), reaction_type: p.str().default('unicode_emoji') },
    async (ctx, q) => {
      await removeReaction(ctx.svc, ctx.realm, ctx.user, q.message_id, { ...q, reaction_type: reactionTypeIn(ctx.svc.config, q.reaction_type) });
      return {};
    },
  );
}
