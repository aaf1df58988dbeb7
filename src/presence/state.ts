// Register's `presence` section: `presences`, `presence_last_update_id` and
// `server_timestamp`. Presence is kept current by polling; events only bring
// users who come online (digest 3.3), and the entries of users who leave.

import type { RegisterContext, StateSection } from '../events/state.ts';
import type { PresenceEvent } from './actions.ts';
import type { Person } from '../users/events.ts';
import { visiblePresenceRows } from './queries.ts';
import { viewerAccess } from '../users/queries.ts';
import { legacyPresence, presenceDict, type Presences } from './format.ts';

/** Clients that take simplified presence events get the modern format (keyed by user id). */
const isModern = (ctx: RegisterContext) => ctx.slimPresence || ctx.capabilities.simplified_presence_events;

interface Cache {
  /** The API email of each user with an entry (legacy entries are keyed by it). */
  emails: Map<number, string>;
  /** Entries of deactivated users, back if they are reactivated. */
  hidden: Map<number, Presences[string]>;
}

function cacheOf(ctx: RegisterContext): Cache {
  let cache = ctx.cache.get('presence') as Cache | undefined;
  if (!cache) ctx.cache.set('presence', (cache = { emails: new Map(), hidden: new Map() }));
  return cache;
}

interface PresenceState {
  presences: Presences;
  server_timestamp: number;
  /** Not for spectators. */
  presence_last_update_id?: number;
}

export const presenceSection: StateSection<PresenceState> = {
  types: ['presence'],
  async fetch(ctx) {
    // Spectators see nobody's presence.
    if (!ctx.user) return { presences: {}, server_timestamp: Date.now() / 1000 };
    const modern = isModern(ctx);
    const { rows, serverTimestamp, lastUpdateId } = await visiblePresenceRows(ctx.svc, ctx.svc.db, ctx.realm, ctx.user, {
      modern,
      historyDays: ctx.presenceHistoryLimitDays,
      access: await viewerAccess(ctx),
    });
    const { emails } = cacheOf(ctx);
    for (const row of rows) emails.set(row.user_id, row.email);
    return { presences: presenceDict(rows, modern), server_timestamp: serverTimestamp, presence_last_update_id: lastUpdateId };
  },
  apply(state, event, ctx) {
    if (event.type === 'presence') applyPresence(state, event, ctx);
    else if (event.type === 'realm_user' && event.op === 'update') applyUserChange(state, event.person, ctx);
    // A user the viewer no longer may see: their presence goes too.
    else if (event.type === 'realm_user' && event.op === 'remove') forgetUser(state, event.person.user_id, ctx);
    // Presence turned off for the organization: nobody's is shown (turned back on, clients poll).
    else if (event.type === 'realm' && event.op === 'update' && event.property === 'presence_disabled' && event.value === true) state.presences = {};
  },
};

function applyPresence(state: PresenceState, event: PresenceEvent, ctx: RegisterContext): void {
  const { presences } = state;
  if ('presences' in event) {
    // Simplified events: modern entries keyed by user id, as the state is.
    Object.assign(presences, event.presences);
    return;
  }
  const { website } = event.presence;
  if (isModern(ctx)) {
    // Slim clients with legacy events: the event tells only the newest of the two times.
    const key = String(event.user_id);
    const entry = presences[key];
    // Slim clients' entries are all of the modern form.
    const previous = entry && 'active_timestamp' in entry ? entry : undefined;
    presences[key] =
      website.status === 'active'
        ? { active_timestamp: website.timestamp, idle_timestamp: Math.max(website.timestamp, previous?.idle_timestamp ?? 0) }
        : { active_timestamp: previous?.active_timestamp ?? website.timestamp, idle_timestamp: website.timestamp };
    return;
  }
  cacheOf(ctx).emails.set(event.user_id, event.email);
  presences[event.email] = legacyPresence(website);
}

function applyUserChange(state: PresenceState, person: Person, ctx: RegisterContext): void {
  const { presences } = state;
  const userId = person.user_id;
  const cache = cacheOf(ctx);
  const key = isModern(ctx) ? String(userId) : cache.emails.get(userId);
  if (typeof person.new_email === 'string' && !isModern(ctx)) {
    if (key !== undefined && key in presences) {
      presences[person.new_email] = presences[key];
      delete presences[key];
    }
    cache.emails.set(userId, person.new_email);
    return;
  }
  if (person.is_active === false && key !== undefined && key in presences) {
    cache.hidden.set(userId, presences[key]);
    delete presences[key];
  } else if (person.is_active === true && key !== undefined && cache.hidden.has(userId)) {
    presences[key] = cache.hidden.get(userId)!;
    cache.hidden.delete(userId);
  }
}

function forgetUser(state: PresenceState, userId: number, ctx: RegisterContext): void {
  const key = isModern(ctx) ? String(userId) : cacheOf(ctx).emails.get(userId);
  if (key !== undefined) delete state.presences[key];
}
