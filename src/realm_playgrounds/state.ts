// Register's `realm_playgrounds`: the organization's code playgrounds.

import type { StateSection } from '../events/state.ts';
import type { RealmPlaygroundsEvent } from './actions.ts';
import { listPlaygrounds } from './queries.ts';

export const realmPlaygroundsSection: StateSection<Omit<RealmPlaygroundsEvent, 'type'>> = {
  types: ['realm_playgrounds'],
  async fetch({ svc, realm }) {
    return { realm_playgrounds: await listPlaygrounds(svc.db, realm.id) };
  },
  apply(state, event) {
    if (event.type === 'realm_playgrounds') state.realm_playgrounds = event.realm_playgrounds;
  },
};
