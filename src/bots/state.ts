// Register's `realm_bots` (fetch_event_types `realm_bot`): the bots the caller
// administers, kept current by `realm_bot` events; and `realm_embedded_bots`
// (none: embedded bots are not enabled on this server).

import type { StateSection } from '../events/state.ts';
import { administeredBots } from './queries.ts';
import { formatBots, type ApiBot } from './format.ts';

export const realmBotsSection: StateSection<{ realm_bots: ApiBot[] }> = {
  types: ['realm_bot'],
  async fetch(ctx) {
    if (!ctx.user) return { realm_bots: [] };
    return { realm_bots: await formatBots(ctx.svc.db, await administeredBots(ctx.svc.db, ctx.realm.id, ctx.user)) };
  },
  apply(state, event) {
    if (event.type !== 'realm_bot' || !state.realm_bots) return;
    const bots = state.realm_bots;
    const change = event.bot;
    const index = bots.findIndex((b) => b.user_id === change.user_id);
    if (event.op === 'add') {
      if (index < 0) bots.push(structuredClone(change) as ApiBot);
      bots.sort((a, b) => a.user_id - b.user_id);
    } else if (event.op === 'update') {
      if (index >= 0) Object.assign(bots[index], structuredClone(change));
    } else if (event.op === 'delete' || event.op === 'remove') {
      if (index >= 0) bots.splice(index, 1);
    }
  },
};

export const realmEmbeddedBotsSection: StateSection<{ realm_embedded_bots: never[] }> = {
  types: ['realm_embedded_bots'],
  async fetch() {
    return { realm_embedded_bots: [] };
  },
};
