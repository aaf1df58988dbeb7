import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { listLinkifiers } from './queries.ts';
import { addLinkifier, removeLinkifier, reorderLinkifiers, updateLinkifier } from './actions.ts';

export function linkifierRoutes(r: Router): void {
  r.route('GET', '/realm/linkifiers', {}, async (ctx) => ({ linkifiers: await listLinkifiers(ctx.svc.db, ctx.realm.id) }));

  r.route('PATCH', '/realm/linkifiers', { ordered_linkifier_ids: p.intList() }, async (ctx, q) => {
    await reorderLinkifiers(ctx.svc, ctx.realm, ctx.user, q.ordered_linkifier_ids);
    return {};
  });

  r.route('POST', '/realm/filters', { pattern: p.str(), url_template: p.str() }, async (ctx, q) => {
    return { id: await addLinkifier(ctx.svc, ctx.realm, ctx.user, q) };
  });

  r.route('PATCH', '/realm/filters/{filter_id}', { pattern: p.str(), url_template: p.str() }, async (ctx, q) => {
    await updateLinkifier(ctx.svc, ctx.realm, ctx.user, q.filter_id, q);
    return {};
  });

  r.route('DELETE', '/realm/filters/{filter_id}', {}, async (ctx, q) => {
    await removeLinkifier(ctx.svc, ctx.realm, ctx.user, q.filter_id);
    return {};
  });
}
