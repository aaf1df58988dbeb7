// Register's `drafts`: the user's newest drafts (at most 1000), kept current by `drafts` events.

import type { StateSection } from '../events/state.ts';
import { listDrafts } from './queries.ts';
import { formatDraft, newestFirst, type ApiDraft } from './format.ts';

export const MAX_DRAFTS_IN_REGISTER = 1000;

export const draftsSection: StateSection<{ drafts: ApiDraft[] }> = {
  types: ['drafts'],
  async fetch(ctx) {
    if (!ctx.user) return { drafts: [] };
    return { drafts: (await listDrafts(ctx.svc.db, ctx.user.id, MAX_DRAFTS_IN_REGISTER)).map(formatDraft) };
  },
  apply(state, event) {
    let drafts = state.drafts;
    if (event.type === 'drafts') {
      if (event.op === 'add' || event.op === 'update') {
        const incoming = event.op === 'add' ? event.drafts : [event.draft];
        const ids = new Set(incoming.map((d) => d.id));
        drafts = [...drafts.filter((d) => !ids.has(d.id)), ...incoming];
      } else if (event.op === 'remove') {
        drafts = drafts.filter((d) => d.id !== event.draft_id);
      }
      state.drafts = drafts.sort(newestFirst).slice(0, MAX_DRAFTS_IN_REGISTER);
    } else if (event.type === 'user_settings' && event.property === 'enable_drafts_synchronization' && event.value === false) {
      // The server forgets every draft when synchronization stops.
      state.drafts = [];
    }
  },
};
