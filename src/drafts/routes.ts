import { z } from 'zod';
import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { DRAFT } from './validation.ts';
import { createDrafts, deleteDraft, editDraft, ownDrafts } from './actions.ts';

export function draftRoutes(r: Router): void {
  r.route('GET', '/drafts', {}, async (ctx) => {
    const drafts = await ownDrafts(ctx.svc, ctx.realm, ctx.user);
    return { count: drafts.length, drafts };
  });

  r.route('POST', '/drafts', { drafts: p.json(z.array(DRAFT)) }, async (ctx, q) => ({
    ids: await createDrafts(ctx.svc, ctx.realm, ctx.user, q.drafts),
  }));

  r.route('PATCH', '/drafts/{draft_id}', { draft: p.json(DRAFT) }, async (ctx, q) => {
    await editDraft(ctx.svc, ctx.realm, ctx.user, q.draft_id, q.draft);
    return {};
  });

  r.route('DELETE', '/drafts/{draft_id}', {}, async (ctx, q) => {
    await deleteDraft(ctx.svc, ctx.realm, ctx.user, q.draft_id);
    return {};
  });
}
