import type { Router } from '../../http/router.ts';
import { p } from '../../http/params.ts';
import { addSubmessage } from './submessages.ts';

export function submessageRoutes(r: Router): void {
  r.route('POST', '/submessage', { message_id: p.int(), msg_type: p.str(), content: p.str() }, async (ctx, q) => {
    await addSubmessage(ctx.svc, ctx.realm, ctx.user, q);
    return {};
  });
}
