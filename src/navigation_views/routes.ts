import { z } from 'zod';
import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { listNavigationViews } from './queries.ts';
import { addNavigationView, removeNavigationView, updateNavigationView } from './actions.ts';
import { formatNavigationView, MAX_FRAGMENT_LENGTH, MAX_VIEW_NAME_LENGTH } from './format.ts';

const fragment = z.string().trim().min(1).max(MAX_FRAGMENT_LENGTH);
const name = p.str(z.string().trim().min(1).max(MAX_VIEW_NAME_LENGTH));

export function navigationViewRoutes(r: Router): void {
  r.route('GET', '/navigation_views', {}, async (ctx) => ({
    navigation_views: (await listNavigationViews(ctx.svc.db, ctx.user.id)).map(formatNavigationView),
  }));

  r.route('POST', '/navigation_views', { fragment: p.str(fragment), is_pinned: p.bool(), name: name.optional() }, async (ctx, q) => {
    await addNavigationView(ctx.svc, ctx.realm, ctx.user, q);
    return {};
  });

  r.route('PATCH', '/navigation_views/{fragment:str}', { is_pinned: p.bool().optional(), name: name.optional() }, async (ctx, q) => {
    await updateNavigationView(ctx.svc, ctx.realm, ctx.user, q.fragment.trim(), { is_pinned: q.is_pinned, name: q.name });
    return {};
  });

  r.route('DELETE', '/navigation_views/{fragment:str}', {}, async (ctx, q) => {
    await removeNavigationView(ctx.svc, ctx.realm, ctx.user, q.fragment.trim());
    return {};
  });
}
