// Register's `muted_users` section: the caller's muted users; each event carries the whole list.

import type { StateSection } from '../events/state.ts';
import { mutedUsers, type MutedUserEntry } from './queries.ts';

export const mutedUsersSection: StateSection<{ muted_users: MutedUserEntry[] }> = {
  types: ['muted_users'],
  async fetch({ svc, user }) {
    return { muted_users: user ? await mutedUsers(svc.db, user.id) : [] };
  },
  apply(state, event) {
    if (event.type === 'muted_users') state.muted_users = event.muted_users;
  },
};
