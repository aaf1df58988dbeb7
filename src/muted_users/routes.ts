import type { Router } from '../http/router.ts';
import { muteUser, unmuteUser } from './actions.ts';

export function mutedUserRoutes(r: Router): void {
  r.route('POST', '/users/me/muted_users/{muted_user_id}', {}, async (ctx, q) => {
    await muteUser(ctx.svc, ctx.realm, ctx.user, q.muted_user_id);
    return {};
  });

  r.route('DELETE', '/users/me/muted_users/{muted_user_id}', {}, async (ctx, q) => {
    await unmuteUser(ctx.svc, ctx.realm, ctx.user, q.muted_user_id);
    return {};
  });
}
