// Register's `realm_user` section: the organization's users (realm_users,
// realm_non_active_users, cross_realm_bots) and the caller's own facts.

import type { RegisterContext, State, StateSection } from '../events/state.ts';
import type { ServerEvent } from '../events/types.ts';
import type { User } from './tables.ts';
import { accessibleUsers, canAccess, listUsers } from './queries.ts';
import { avatarUrl, formatUser, mediumAvatarUrl, type ApiUser } from './format.ts';
import { isAdmin, isGuest, isModerator, isOwner, ROLE, type Role } from './roles.ts';
import { profileDataFor } from './profile-data.ts';
import { systemGroupIds, userGroupIds } from '../user_groups/group-setting.ts';
import { REALM_PERMISSION_SETTINGS, hasPermission, type RealmPermission } from '../user_groups/permission-settings.ts';
import { roleInSystemGroup, type SystemGroupName } from '../user_groups/system-groups.ts';
import { realmHost, settingsOf } from '../realm/queries.ts';

/** A `realm_users` entry: the User object without `is_active` (the list says it). */
function listEntry(user: ApiUser): Record<string, unknown> {
  const { is_active: _active, ...rest } = user;
  return rest;
}

/** What the spec calls an "Unknown user": the shape of a user, with nothing but the id. */
export function unknownUser(userId: number, realmHost: string): Record<string, unknown> {
  return {
    user_id: userId,
    delivery_email: null,
    email: `user${userId}@${realmHost}`,
    full_name: 'Unknown user',
    date_joined: '1970-01-01T00:00:00+00:00',
    is_owner: false,
    is_admin: false,
    is_guest: false,
    is_bot: false,
    bot_type: null,
    bot_owner_id: null,
    role: ROLE.MEMBER,
    timezone: '',
    avatar_url: '/static/images/unknown-user-avatar.png',
    avatar_version: 0,
    profile_data: {},
  };
}

const STREAM_PERMISSIONS = {
  can_create_public_streams: 'can_create_public_channel_group',
  can_create_private_streams: 'can_create_private_channel_group',
  can_create_web_public_streams: 'can_create_web_public_channel_group',
  can_subscribe_other_users: 'can_add_subscribers_group',
  can_invite_others_to_realm: 'can_invite_users_group',
} as const satisfies Record<string, RealmPermission>;

type OwnPermissions = Record<keyof typeof STREAM_PERMISSIONS | 'can_create_streams', boolean>;

function withDerived(p: Omit<OwnPermissions, 'can_create_streams'>, webPublicAllowed: boolean): OwnPermissions {
  const perms = { ...p, can_create_web_public_streams: p.can_create_web_public_streams && webPublicAllowed };
  return { ...perms, can_create_streams: perms.can_create_public_streams || perms.can_create_private_streams };
}

function roleFacts(role: number) {
  const r = { role };
  return { is_admin: isAdmin(r), is_owner: isOwner(r), is_moderator: isModerator(r), is_guest: isGuest(r) };
}

async function ownFacts(ctx: RegisterContext, user: User): Promise<Record<string, unknown>> {
  const groups = await userGroupIds(ctx.svc.db, user.id);
  const perms = {} as Record<keyof typeof STREAM_PERMISSIONS, boolean>;
  for (const [key, setting] of Object.entries(STREAM_PERMISSIONS) as [keyof typeof STREAM_PERMISSIONS, RealmPermission][]) {
    perms[key] = await hasPermission(ctx.svc.db, user, REALM_PERMISSION_SETTINGS[setting], ctx.realm.group_settings[setting], groups);
  }
  return {
    user_id: user.id,
    email: user.email,
    delivery_email: user.delivery_email,
    full_name: user.full_name,
    avatar_source: user.avatar_source,
    avatar_url: avatarUrl(user),
    avatar_url_medium: mediumAvatarUrl(user),
    ...roleFacts(user.role),
    ...withDerived(perms, settingsOf(ctx.realm).enable_spectator_access),
  };
}

/** After the caller's own role changed: the permissions that follow from system-group settings. */
function recomputeOwnPermissions(state: State, ctx: RegisterContext, role: Role): void {
  const names = ctx.cache.get('systemGroupNames') as Record<number, SystemGroupName> | undefined;
  if (!names) return;
  const perms = {} as Record<keyof typeof STREAM_PERMISSIONS, boolean>;
  for (const [key, setting] of Object.entries(STREAM_PERMISSIONS) as [keyof typeof STREAM_PERMISSIONS, RealmPermission][]) {
    const group = names[ctx.realm.group_settings[setting]];
    const allowed = role !== ROLE.GUEST || REALM_PERMISSION_SETTINGS[setting].allowEveryone;
    perms[key] = group === undefined ? Boolean(state[key]) : allowed && roleInSystemGroup(role, group);
  }
  Object.assign(state, withDerived(perms, settingsOf(ctx.realm).enable_spectator_access));
}

export const usersSection: StateSection = {
  types: ['realm_user'],
  async fetch(ctx) {
    const { svc, realm, user } = ctx;
    const system = await systemGroupIds(svc.db, realm.id);
    ctx.cache.set('systemGroupNames', Object.fromEntries(Object.entries(system).map(([name, id]) => [id, name])));
    // Spectators see no user list: addresses and names are for members.
    if (!user) return { realm_users: [], realm_non_active_users: [], cross_realm_bots: [] };
    const users = await listUsers(svc.db, realm.id);
    const profiles = await profileDataFor(svc.db, realm.id, users);
    const access = await accessibleUsers(svc.db, realm, user);
    const active: Record<string, unknown>[] = [];
    const inactive: Record<string, unknown>[] = [];
    for (const u of users) {
      let entry: Record<string, unknown>;
      if (canAccess(access, u.id)) {
        entry = listEntry(formatUser(u, user, { clientSvcavatar: ctx.clientSvcavatar }));
        if (!u.is_bot) entry.profile_data = profiles.get(u.id) ?? {};
      } else if (ctx.capabilities.user_list_incomplete) {
        continue;
      } else {
        entry = unknownUser(u.id, realmHost(realm, svc.config));
      }
      (u.is_active ? active : inactive).push(entry);
    }
    return { realm_users: active, realm_non_active_users: inactive, cross_realm_bots: [], ...(await ownFacts(ctx, user)) };
  },
  apply(state, event, ctx) {
    if (event.type !== 'realm_user') return;
    applyRealmUserEvent(state, event, ctx);
  },
};

function applyRealmUserEvent(state: State, event: ServerEvent, ctx: RegisterContext): void {
  const person = event.person as Record<string, any>;
  const lists = [state.realm_users as Record<string, any>[], state.realm_non_active_users as Record<string, any>[]];
  const find = () => {
    for (const list of lists) {
      const i = list.findIndex((u) => u.user_id === person.user_id);
      if (i >= 0) return { list, i };
    }
    return undefined;
  };
  const byId = (a: Record<string, any>, b: Record<string, any>) => a.user_id - b.user_id;
  if (event.op === 'add') {
    const found = find();
    if (found) found.list.splice(found.i, 1);
    const { is_active, ...entry } = person;
    (is_active === false ? lists[1] : lists[0]).push(entry);
    (is_active === false ? lists[1] : lists[0]).sort(byId);
    return;
  }
  if (event.op === 'remove') {
    const found = find();
    if (found) found.list.splice(found.i, 1);
    return;
  }
  if (event.op !== 'update') return;
  const found = find();
  if (!found) return;
  const entry = found.list[found.i];
  const { user_id, is_active, new_email, role, custom_profile_field, ...changes } = person;
  // Only the facets a list entry has (the avatar facet also carries avatar_source and a medium URL).
  for (const [k, v] of Object.entries(changes)) if (k in entry) entry[k] = v;
  if (new_email !== undefined) entry.email = new_email;
  if (role !== undefined) Object.assign(entry, { role, is_admin: isAdmin({ role }), is_owner: isOwner({ role }), is_guest: isGuest({ role }) });
  if (custom_profile_field) {
    const data = (entry.profile_data ??= {});
    const { id, ...value } = custom_profile_field;
    if (value.value === null || value.value === undefined) delete data[String(id)];
    else data[String(id)] = value;
  }
  if (is_active !== undefined) {
    found.list.splice(found.i, 1);
    const target = is_active ? lists[0] : lists[1];
    target.push(entry);
    target.sort(byId);
  }
  if (ctx.user && user_id === ctx.user.id && 'user_id' in state) {
    if (changes.full_name !== undefined) state.full_name = changes.full_name;
    if (new_email !== undefined) state.email = new_email;
    if (changes.delivery_email !== undefined) state.delivery_email = changes.delivery_email;
    if (changes.avatar_version !== undefined) {
      // The own avatar is always a URL, even where client_svcavatar left it to the client.
      state.avatar_source = changes.avatar_source;
      state.avatar_url_medium = changes.avatar_url_medium;
      state.avatar_url =
        changes.avatar_url ??
        avatarUrl({ id: user_id, realm_id: ctx.realm.id, delivery_email: state.delivery_email, avatar_source: changes.avatar_source, avatar_version: changes.avatar_version });
    }
    if (role !== undefined) {
      Object.assign(state, roleFacts(role));
      recomputeOwnPermissions(state, ctx, role);
    }
  }
}
