import type { Router } from '../../http/router.ts';
import { readReceipts } from './read-receipts.ts';

export function readReceiptRoutes(r: Router): void {
  r.route('GET', '/messages/{message_id}/read_receipts', {}, async (ctx, q) => {
    return { user_ids: await readReceipts(ctx.svc.db, ctx.realm, ctx.user, q.message_id) };
  });
}
