import { z } from 'zod';
import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { badRequest } from '../http/errors.ts';
import { addPlayground, removePlayground } from './actions.ts';

/** The reference's MAX_PYGMENTS_LANGUAGE_LENGTH. */
const MAX_PYGMENTS_LANGUAGE_LENGTH = 40;

// Any language name code blocks can carry, not only those Pygments knows.
const pygmentsLanguage = p.str(z.string().max(MAX_PYGMENTS_LANGUAGE_LENGTH)).map((value) => {
  if (!/^[ a-zA-Z0-9_+\-./#]*$/.test(value)) throw badRequest('Invalid characters in pygments language');
  return value.trim();
});

export function realmPlaygroundRoutes(r: Router): void {
  r.route('POST', '/realm/playgrounds', { name: p.str(), url_template: p.str(), pygments_language: pygmentsLanguage }, async (ctx, q) => ({
    id: await addPlayground(ctx.svc, ctx.realm, ctx.user, {
      name: q.name.trim(),
      pygments_language: q.pygments_language,
      url_template: q.url_template.trim(),
    }),
  }));

  r.route('DELETE', '/realm/playgrounds/{playground_id}', {}, async (ctx, q) => {
    await removePlayground(ctx.svc, ctx.realm, ctx.user, q.playground_id);
    return {};
  });
}
