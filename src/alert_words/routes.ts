import { z } from 'zod';
import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { alertWords } from './queries.ts';
import { addAlertWords, removeAlertWords } from './actions.ts';

/** The reference measures each word before stripping it; blank words are dropped. */
const MAX_ALERT_WORD_LENGTH = 100;

export function alertWordRoutes(r: Router): void {
  r.route('GET', '/users/me/alert_words', {}, async (ctx) => {
    return { alert_words: await alertWords(ctx.svc.db, ctx.user.id) };
  });

  r.route('POST', '/users/me/alert_words', { alert_words: p.json(z.array(z.string().max(MAX_ALERT_WORD_LENGTH))) }, async (ctx, q) => {
    const words = q.alert_words.map((w) => w.trim()).filter((w) => w !== '');
    return { alert_words: await addAlertWords(ctx.svc, ctx.realm, ctx.user, words) };
  });

  r.route('DELETE', '/users/me/alert_words', { alert_words: p.json(z.array(z.string())) }, async (ctx, q) => {
    return { alert_words: await removeAlertWords(ctx.svc, ctx.realm, ctx.user, q.alert_words) };
  });
}
