// Register's `realm_user_groups` section: the organization's named groups
// (deactivated ones only for clients with include_deactivated_groups), kept up to
// date by user_group events and by user deactivations (a deactivated user is a
// member of nothing; the realm_user event says so).

import type { StateSection } from '../events/state.ts';
import type { UserGroupEvent } from './events.ts';
import type { GroupSettingValue } from './group-setting.ts';
import { listGroups, type ApiUserGroup } from './format.ts';
import { GROUP_SETTING_NAMES } from './queries.ts';

interface GroupsState {
  realm_user_groups: ApiUserGroup[];
}

export const userGroupsSection: StateSection<GroupsState> = {
  types: ['realm_user_groups'],
  async fetch(ctx) {
    // Spectators see no groups: member lists are for members.
    if (!ctx.user) return { realm_user_groups: [] };
    const includeDeactivated = ctx.capabilities.include_deactivated_groups;
    return { realm_user_groups: await listGroups(ctx.svc.db, ctx.realm.id, { includeDeactivated }) };
  },
  apply(state, event) {
    if (event.type === 'user_group') applyGroupEvent(state, event);
    if (event.type === 'realm_user' && event.op === 'update' && event.person.is_active === false) forgetUser(state, event.person.user_id);
  },
};

const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;
const sorted = (ids: Iterable<number>) => [...new Set(ids)].sort((a, b) => a - b);

function applyGroupEvent(state: GroupsState, event: UserGroupEvent): void {
  const groups = state.realm_user_groups;
  const groupId = event.op === 'add' ? event.group.id : event.group_id;
  const group = groups.find((g) => g.id === groupId);
  // Copies: the event objects may still be queued for the client.
  switch (event.op) {
    case 'add':
      state.realm_user_groups = [...groups.filter((g) => g.id !== groupId), structuredClone(event.group)].sort(byId);
      return;
    case 'remove':
      state.realm_user_groups = groups.filter((g) => g.id !== groupId);
      return;
  }
  if (!group) return;
  switch (event.op) {
    case 'update':
      Object.assign(group, structuredClone(event.data));
      break;
    case 'add_members':
      group.members = sorted([...group.members, ...event.user_ids]);
      break;
    case 'remove_members':
      group.members = group.members.filter((id) => !event.user_ids.includes(id));
      break;
    case 'add_subgroups':
      group.direct_subgroup_ids = sorted([...group.direct_subgroup_ids, ...event.direct_subgroup_ids]);
      break;
    case 'remove_subgroups':
      group.direct_subgroup_ids = group.direct_subgroup_ids.filter((id) => !event.direct_subgroup_ids.includes(id));
      break;
  }
}

/** A deactivated user leaves every member list and every setting value that names them. */
function forgetUser(state: GroupsState, userId: number): void {
  for (const group of state.realm_user_groups) {
    group.members = group.members.filter((id) => id !== userId);
    for (const setting of GROUP_SETTING_NAMES) {
      const value: GroupSettingValue = group[setting];
      if (typeof value === 'object') group[setting] = { ...value, direct_members: value.direct_members.filter((id) => id !== userId) };
    }
  }
}
