import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { z } from 'zod';
import { accessUserByKey } from '../users/queries.ts';
import { updateOwnPresence } from './actions.ts';
import { presenceFor, presenceOfUser } from './queries.ts';

export function presenceRoutes(r: Router): void {
  r.route(
    'POST',
    '/users/me/presence',
    {
      status: p.choice(['active', 'idle']),
      ping_only: p.bool().default(false),
      new_user_input: p.bool().default(false),
      slim_presence: p.bool().default(false),
      last_update_id: p.int().optional(),
      history_limit_days: p.json(z.int().min(0).nullable()).optional(),
    },
    async (ctx, q) => updateOwnPresence(ctx.svc, ctx.realm, ctx.user, q),
  );

  // Legacy format only: for bots and scripts (digest section 2).
  r.route('GET', '/realm/presence', {}, async (ctx) => {
    const { presences, server_timestamp } = await presenceFor(ctx.svc, ctx.svc.db, ctx.realm, ctx.user, { modern: false });
    return { server_timestamp, presences };
  });

  r.route('GET', '/users/{user:str}/presence', { slim_presence: p.bool().default(false) }, async (ctx, q) => {
    const target = await accessUserByKey(ctx.svc, ctx.svc.db, ctx.realm, ctx.user, q.user);
    return { presence: await presenceOfUser(ctx.svc.db, ctx.realm, target, q.slim_presence, q.user) };
  });
}
