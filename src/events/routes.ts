import { z } from 'zod';
import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { CAPABILITIES } from './queue.ts';
import { registerQueue } from './register.ts';
import { deleteQueue, getEvents } from './fetch.ts';

/** `true`, `false` or `partial` (bare or JSON-quoted). */
const includeSubscribers = p.boolOr('partial').default(false);

const capabilitiesSchema = z
  .object({
    notification_settings_null: z.boolean(),
    ...Object.fromEntries(CAPABILITIES.filter((c) => c !== 'notification_settings_null').map((c) => [c, z.boolean().optional()])),
  })
  .loose();

const eventTypeList = p.json(z.array(z.string()).nullable()).optional();

export function eventRoutes(r: Router): void {
  r.publicRoute(
    'POST',
    '/register',
    'optional',
    {
      apply_markdown: p.bool().default(false),
      client_svcavatar: p.bool().optional(),
      slim_presence: p.bool().default(false),
      presence_history_limit_days: p.json(z.int().nullable()).optional(),
      all_public_streams: p.bool().optional(),
      include_subscribers: includeSubscribers,
      client_capabilities: p.json(capabilitiesSchema).optional(),
      event_types: eventTypeList,
      fetch_event_types: eventTypeList,
      narrow: p.json(z.array(z.tuple([z.string(), z.string()]))).default([]),
      queue_lifespan_secs: p.int().default(0),
    },
    async (ctx, q) => {
      // 'optional' routes reach here with a realm: the router refused anonymous callers elsewhere.
      return registerQueue(ctx.svc, ctx.realm!, ctx.user, ctx.request.clientName, q);
    },
  );

  r.route(
    'GET',
    '/events',
    { queue_id: p.str(), last_event_id: p.int(), dont_block: p.bool().default(false) },
    (ctx, q) => getEvents(ctx.svc, ctx.user, q, ctx.request),
    { rateLimit: false },
  );

  r.route('DELETE', '/events', { queue_id: p.str() }, async (ctx, q) => {
    await deleteQueue(ctx.svc, ctx.user, q.queue_id);
    return {};
  });
}
