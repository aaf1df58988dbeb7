import { z } from 'zod';
import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { TEXT_BOUNDS } from '../realm/state.ts';
import { listSnippets } from './queries.ts';
import { formatSnippet } from './format.ts';
import { createSnippet, deleteSnippet, editSnippet } from './actions.ts';

// Stripped, then measured: "title cannot be blank", "title is too long (limit: 60 characters)".
const title = p.str(z.string().trim().min(1).max(60));
const content = p.str(z.string().trim().min(1).max(TEXT_BOUNDS.max_message_length));

export function savedSnippetRoutes(r: Router): void {
  r.route('GET', '/saved_snippets', {}, async (ctx) => {
    return { saved_snippets: (await listSnippets(ctx.svc.db, ctx.realm.id, ctx.user.id)).map(formatSnippet) };
  });

  r.route('POST', '/saved_snippets', { title, content }, async (ctx, q) => {
    return { saved_snippet_id: await createSnippet(ctx.svc, ctx.realm, ctx.user, q.title, q.content) };
  });

  r.route('PATCH', '/saved_snippets/{saved_snippet_id}', { title: title.optional(), content: content.optional() }, async (ctx, q) => {
    await editSnippet(ctx.svc, ctx.realm, ctx.user, q.saved_snippet_id, { title: q.title, content: q.content });
    return {};
  });

  r.route('DELETE', '/saved_snippets/{saved_snippet_id}', {}, async (ctx, q) => {
    await deleteSnippet(ctx.svc, ctx.realm, ctx.user, q.saved_snippet_id);
    return {};
  });
}
