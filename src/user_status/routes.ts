import { z } from 'zod';
import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { accessUser, getUser } from '../users/queries.ts';
import { userStatus } from './queries.ts';
import { updateStatus } from './actions.ts';

export function userStatusRoutes(r: Router): void {
  r.route(
    'POST',
    '/users/me/status',
    {
      away: p.bool().optional(),
      // Stripped, then measured (the reference's limit).
      status_text: p.str(z.string().trim().max(60)).optional(),
      emoji_name: p.str().optional(),
      emoji_code: p.str().optional(),
      reaction_type: p.str().optional(),
    },
    async (ctx, q) => {
      await updateStatus(ctx.svc, ctx.realm, ctx.user, q, ctx.request.clientName);
      return {};
    },
  );

  // The caller's own status (the reference answers this only for /users/{id}/status).
  r.route('GET', '/users/me/status', {}, async (ctx) => {
    // The authenticated row may be a few seconds old; `away` reads the settings now.
    return { status: await userStatus(ctx.svc.db, (await getUser(ctx.svc.db, ctx.realm.id, ctx.user.id))!) };
  });

  r.route('GET', '/users/{user_id}/status', {}, async (ctx, q) => {
    const user = await accessUser(ctx.svc, ctx.svc.db, ctx.realm, ctx.user, q.user_id, { allowBots: false });
    return { status: await userStatus(ctx.svc.db, user) };
  });
}
