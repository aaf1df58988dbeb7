// The browser's account routes under /accounts (the reference's paths),
// installed with session authentication: signing in and out, and the
// password-reset link. Pages with these paths belong to the web client.

import { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { fetchApiKey } from './login.ts';
import { clearedCookies, endSession, signIn } from './sessions.ts';
import { requestPasswordReset, resetPassword } from './password-reset.ts';

export const ACCOUNTS_PREFIX = '/accounts';

export function accountRoutes(): Router {
  const r = new Router();
  // The same checks as /fetch_api_key (rate limit on failures, deactivated accounts), then a session.
  r.publicRoute('POST', '/login', 'none', { username: p.str(), password: p.str() }, async (ctx, q) => {
    const user = await fetchApiKey(ctx.svc, ctx.realm, q.username, q.password);
    await signIn(ctx.svc, ctx.request.setCookies, user);
    return { user_id: user.id };
  });

  r.route('POST', '/logout', {}, async (ctx) => {
    if (ctx.session) await endSession(ctx.svc.db, ctx.session.id);
    ctx.request.setCookies(clearedCookies(ctx.svc.config));
    return {};
  });

  r.publicRoute('POST', '/password/reset', 'none', { email: p.str() }, async (ctx, q) => {
    await requestPasswordReset(ctx.svc, ctx.realm, q.email);
    return {};
  });

  r.publicRoute('POST', '/password/reset/{token:str}', 'none', { new_password: p.str() }, async (ctx, q) => {
    await resetPassword(ctx.svc, ctx.realm, q.token, q.new_password);
    return {};
  });
  return r;
}
