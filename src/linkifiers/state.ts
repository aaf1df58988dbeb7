// Register's `realm_linkifiers` (only for clients with the
// `linkifier_url_template` capability; others get an empty list and no events)
// and the legacy `realm_filters`, which is always empty.

import type { StateSection } from '../events/state.ts';
import { listLinkifiers } from './queries.ts';
import type { Linkifier } from '../markdown/index.ts';

export const linkifiersSection: StateSection<{ realm_linkifiers: Linkifier[] }> = {
  types: ['realm_linkifiers'],
  async fetch(ctx) {
    if (!ctx.capabilities.linkifier_url_template) return { realm_linkifiers: [] };
    return { realm_linkifiers: await listLinkifiers(ctx.svc.db, ctx.realm.id) };
  },
  apply(state, event, ctx) {
    if (event.type !== 'realm_linkifiers' || !ctx.capabilities.linkifier_url_template) return;
    state.realm_linkifiers = event.realm_linkifiers;
  },
};

/** Format-string linkifiers are gone; clients that still ask get none. */
export const realmFiltersSection: StateSection<{ realm_filters: never[] }> = {
  types: ['realm_filters'],
  async fetch() {
    return { realm_filters: [] };
  },
};
