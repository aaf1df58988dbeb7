import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { fetchApiKey } from './login.ts';
import { regenerateApiKey } from './api-key.ts';

export function authRoutes(r: Router): void {
  r.publicRoute('POST', '/fetch_api_key', 'none', { username: p.str(), password: p.str() }, async (ctx, q) => {
    const user = await fetchApiKey(ctx.svc, ctx.realm, q.username, q.password);
    return { api_key: user.api_key, email: user.delivery_email, user_id: user.id };
  });

  r.route('POST', '/users/me/api_key/regenerate', {}, async (ctx) => ({ api_key: await regenerateApiKey(ctx.svc, ctx.user) }));
}
