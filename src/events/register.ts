// POST /register (spec endpoint 21, digest 1.21, 3.1, section 4): a queue first,
// then the initial state, then the events that arrived meanwhile applied to it.

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { badRequest } from '../http/errors.ts';
import { versionFields } from '../version.ts';
import { capabilities as parseCapabilities, type QueueOptions } from './queue.ts';
import { checkRegisterNarrow } from './narrow.ts';
import { applyEvents, fetchState, selected, type RegisterContext } from './state.ts';
import { STATE_SECTIONS } from './sections.ts';
import { mayFollowAllPublicChannels } from '../users/access.ts';

export interface RegisterParams {
  apply_markdown: boolean;
  client_svcavatar: boolean | undefined;
  slim_presence: boolean;
  presence_history_limit_days: number | null | undefined;
  all_public_streams: boolean | undefined;
  include_subscribers: boolean | 'partial';
  client_capabilities: Record<string, unknown> | undefined;
  event_types: string[] | null | undefined;
  fetch_event_types: string[] | null | undefined;
  narrow: [string, string][];
  queue_lifespan_secs: number;
}

const MAX_QUEUE_LIFESPAN_SECS = 7 * 24 * 3600;

/** How a register call reads and updates state, and which sections it asked for. */
export function registerContext(svc: Services, realm: Realm, user: User | null, p: RegisterParams) {
  const fetchTypes = p.fetch_event_types ?? p.event_types ?? null;
  const sections = STATE_SECTIONS.filter((s) => selected(s, fetchTypes ? new Set(fetchTypes) : null));
  const ctx: RegisterContext = {
    svc,
    realm,
    user,
    applyMarkdown: p.apply_markdown,
    clientSvcavatar: p.client_svcavatar ?? user !== null,
    capabilities: parseCapabilities(p.client_capabilities),
    includeSubscribers: p.include_subscribers,
    slimPresence: p.slim_presence,
    presenceHistoryLimitDays: p.presence_history_limit_days ?? null,
    narrow: p.narrow,
    cache: new Map(),
  };
  return { ctx, sections };
}

export async function registerQueue(svc: Services, realm: Realm, user: User | null, clientName: string, p: RegisterParams) {
  if (!user) {
    // Spectators (spec "Authentication" 3): no queue, and nothing that needs an account.
    if (p.client_svcavatar === true) throw badRequest("Invalid 'client_svcavatar' parameter for anonymous request");
    if (p.include_subscribers === true) throw badRequest("Invalid 'include_subscribers' parameter for anonymous request");
  }
  const allPublicStreams = p.all_public_streams ?? false;
  if (allPublicStreams && user && !mayFollowAllPublicChannels(user)) throw badRequest('User not authorized for this query');
  checkRegisterNarrow(p.narrow);

  const { ctx, sections } = registerContext(svc, realm, user, p);
  const { capabilities, clientSvcavatar } = ctx;

  const lifespanSecs = p.queue_lifespan_secs <= 0 ? svc.config.events.queueTimeoutMs / 1000 : Math.min(p.queue_lifespan_secs, MAX_QUEUE_LIFESPAN_SECS);
  const options: QueueOptions | undefined = user
    ? {
        realmId: realm.id,
        userId: user.id,
        eventTypes: p.event_types ?? null,
        narrow: p.narrow,
        allPublicStreams,
        applyMarkdown: p.apply_markdown,
        clientSvcavatar,
        slimPresence: p.slim_presence,
        capabilities,
        clientName,
        lifespanMs: lifespanSecs * 1000,
      }
    : undefined;
  // The queue exists before the state is read: whatever changes from here on reaches it.
  const queue = options ? svc.queues.create(options) : undefined;
  try {
    const state = await fetchState(sections, ctx);
    const arrived = queue ? [...queue.events] : [];
    applyEvents(sections, state, arrived, ctx);
    return {
      queue_id: queue?.id ?? null,
      last_event_id: arrived.length > 0 ? arrived[arrived.length - 1].id : -1,
      ...versionFields(svc.config.compatNames),
      ...state,
    };
  } catch (err) {
    if (queue) svc.queues.delete(queue);
    throw err;
  }
}
