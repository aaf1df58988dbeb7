// Register's `user_status` section: statuses of the active users the caller may
// see, only those that say something.

import type { StateSection } from '../events/state.ts';
import type { UserStatusEvent } from './actions.ts';
import { statusesVisibleTo } from './queries.ts';
import { viewerAccess } from '../users/queries.ts';
import type { ApiUserStatus } from './format.ts';

/** A `user_status` event changes only the fields it carries; an entry left empty goes. */
function applyStatusEvent(entry: ApiUserStatus, event: UserStatusEvent): void {
  if (event.away === true) entry.away = true;
  else if (event.away === false) delete entry.away;
  if (typeof event.status_text === 'string') {
    if (event.status_text) entry.status_text = event.status_text;
    else delete entry.status_text;
  }
  if (typeof event.emoji_name === 'string') {
    if (event.emoji_name) Object.assign(entry, { emoji_name: event.emoji_name, emoji_code: event.emoji_code, reaction_type: event.reaction_type });
    else {
      delete entry.emoji_name;
      delete entry.emoji_code;
      delete entry.reaction_type;
    }
  }
}

export const userStatusSection: StateSection<{ user_status: Record<string, ApiUserStatus> }> = {
  types: ['user_status'],
  async fetch(ctx) {
    const { svc, realm, user } = ctx;
    return { user_status: user ? await statusesVisibleTo(svc, svc.db, realm, user, viewerAccess(ctx)) : {} };
  },
  apply(state, event, ctx) {
    const statuses = state.user_status;
    const set = (id: number, entry: ApiUserStatus) => {
      if (Object.keys(entry).length > 0) statuses[id] = entry;
      else delete statuses[id];
    };
    if (event.type === 'user_status') {
      const id = event.user_id;
      const entry = { ...statuses[id] };
      applyStatusEvent(entry, event);
      set(id, entry);
    } else if (event.type === 'realm_user') {
      // Deactivated users (and users one stops seeing) have no status to show.
      if (event.op === 'remove' || event.person.is_active === false) delete statuses[event.person.user_id];
    } else if (event.type === 'user_settings' && event.property === 'presence_enabled' && ctx.user && statuses[ctx.user.id]) {
      // `away` mirrors one's own presence_enabled (no user_status event is sent for it, as in the reference).
      const entry = { ...statuses[ctx.user.id] };
      if (event.value === false) entry.away = true;
      else delete entry.away;
      set(ctx.user.id, entry);
    }
  },
};
