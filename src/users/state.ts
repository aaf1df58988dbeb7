// Register's `realm_user` section: the organization's users (realm_users,
// realm_non_active_users, cross_realm_bots) and the caller's own facts.

import type { RegisterContext, StateSection } from '../events/state.ts';
import type { ServerEvent } from '../events/types.ts';
import type { User } from './tables.ts';
import { canAccess, viewerAccess } from './queries.ts';
import { avatarUrl, formatUser, mediumAvatarUrl, type ApiUser } from './format.ts';
import { isAdmin, isGuest, isModerator, isOwner, ROLE } from './roles.ts';
import { RawJson, rawArray } from '../http/raw-json.ts';
import type { KeptUserList, SerializedLists } from './list-cache.ts';
import { groupSettingValues, type GroupSettingValue } from '../user_groups/group-setting.ts';
import { REALM_PERMISSION_SETTINGS, type RealmPermission } from '../user_groups/permission-settings.ts';
import { realmHost, settingsOf } from '../realm/queries.ts';
import { realmEventChanges } from '../realm/state.ts';
import type { Person, RealmUserEvent } from './events.ts';
import { roleAdmits } from './access.ts';

/** A `realm_users` entry: the User object without `is_active` (the list says it), or an "Unknown user". */
type UserEntry = Person & { profile_data?: ApiUser['profile_data'] };

/** What the spec calls an "Unknown user": the shape of a user, with nothing but the id. */
export function unknownUser(userId: number, realmHost: string): Person {
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

/**
 * What the caller's own permission facts follow from, read at fetch and kept
 * current by the events apply sees (role, group memberships and subgroups, the
 * organization's settings): apply cannot ask the database.
 */
interface PermissionBasis {
  userId: number;
  role: number;
  /** Named groups the user is a direct member of. */
  direct: Set<number>;
  /** Each named group's direct subgroups. */
  subgroups: Map<number, number[]>;
  values: Partial<Record<RealmPermission, GroupSettingValue>>;
  webPublicAllowed: boolean;
}

const BASIS = 'realm_user:permissionBasis';

async function permissionBasis(ctx: RegisterContext, user: User): Promise<PermissionBasis> {
  const { db } = ctx.svc;
  const settings = Object.values(STREAM_PERMISSIONS);
  const [direct, edges, values] = await Promise.all([
    db
      .selectFrom('user_group_members as m')
      .innerJoin('user_groups as g', 'g.id', 'm.group_id')
      .select('m.group_id')
      .where('m.user_id', '=', user.id)
      .where('g.name', 'is not', null)
      .execute(),
    db.selectFrom('user_group_subgroups').select(['supergroup_id', 'subgroup_id']).where('realm_id', '=', ctx.realm.id).execute(),
    groupSettingValues(
      db,
      settings.map((s) => ctx.realm.group_settings[s]),
    ),
  ]);
  const subgroups = new Map<number, number[]>();
  for (const e of edges) subgroups.set(e.supergroup_id, [...(subgroups.get(e.supergroup_id) ?? []), e.subgroup_id]);
  return {
    userId: user.id,
    role: user.role,
    direct: new Set(direct.map((d) => d.group_id)),
    subgroups,
    values: Object.fromEntries(settings.map((s) => [s, values.get(ctx.realm.group_settings[s])])),
    webPublicAllowed: settingsOf(ctx.realm).enable_spectator_access,
  };
}

/** Membership through subgroups, as userGroupIds answers it in the database. */
function inGroup(b: PermissionBasis, groupId: number, seen = new Set<number>()): boolean {
  if (b.direct.has(groupId)) return true;
  if (seen.has(groupId)) return false;
  seen.add(groupId);
  return (b.subgroups.get(groupId) ?? []).some((g) => inGroup(b, g, seen));
}

/** hasPermission, on the basis. */
function holds(b: PermissionBasis, setting: RealmPermission): boolean {
  if (!roleAdmits(b, REALM_PERMISSION_SETTINGS[setting].allowEveryone)) return false;
  const value = b.values[setting];
  if (value === undefined) return false;
  if (typeof value === 'number') return inGroup(b, value);
  return value.direct_members.includes(b.userId) || value.direct_subgroups.some((g) => inGroup(b, g));
}

function ownPermissions(b: PermissionBasis): OwnPermissions {
  const perms = {} as Record<keyof typeof STREAM_PERMISSIONS, boolean>;
  for (const [key, setting] of Object.entries(STREAM_PERMISSIONS) as [keyof typeof STREAM_PERMISSIONS, RealmPermission][]) perms[key] = holds(b, setting);
  return withDerived(perms, b.webPublicAllowed);
}

/** The caller's own facts, at the top level of the state (a spectator has none). */
interface OwnFacts extends OwnPermissions, ReturnType<typeof roleFacts> {
  user_id: number;
  email: string;
  /** One's own address is always visible to oneself. */
  delivery_email: string;
  full_name: string;
  avatar_source: string;
  avatar_url: string;
  avatar_url_medium: string;
}

interface UserLists {
  realm_users: UserEntry[] | RawJson;
  realm_non_active_users: UserEntry[] | RawJson;
  cross_realm_bots: ApiUser[];
}

type UsersState = UserLists | (UserLists & OwnFacts);

async function ownFacts(ctx: RegisterContext, user: User): Promise<OwnFacts> {
  const basis = await permissionBasis(ctx, user);
  ctx.cache.set(BASIS, basis);
  return {
    user_id: user.id,
    email: user.email,
    delivery_email: user.delivery_email,
    full_name: user.full_name,
    avatar_source: user.avatar_source,
    avatar_url: avatarUrl(user),
    avatar_url_medium: mediumAvatarUrl(user),
    ...roleFacts(user.role),
    ...ownPermissions(basis),
  };
}

/**
 * Brings the basis up to date with an event about the caller's role, groups or
 * the organization's settings; true if it may have changed the permissions.
 */
function updateBasis(b: PermissionBasis, event: ServerEvent): boolean {
  if (event.type === 'realm') {
    const changed = realmEventChanges(event);
    let touched = false;
    for (const setting of Object.values(STREAM_PERMISSIONS)) {
      if (setting in changed) [b.values[setting], touched] = [changed[setting] as GroupSettingValue, true];
    }
    if ('enable_spectator_access' in changed) [b.webPublicAllowed, touched] = [changed.enable_spectator_access === true, true];
    return touched;
  }
  if (event.type === 'user_group') {
    if (event.op === 'add') {
      const { group } = event;
      if (group.members.includes(b.userId)) b.direct.add(group.id);
      b.subgroups.set(group.id, [...group.direct_subgroup_ids]);
      return true;
    }
    if (event.op === 'update' || event.op === 'remove') return false;
    const ids = 'user_ids' in event ? event.user_ids : event.direct_subgroup_ids;
    const groupId = event.group_id;
    switch (event.op) {
      case 'add_members':
        if (ids.includes(b.userId)) b.direct.add(groupId);
        return ids.includes(b.userId);
      case 'remove_members':
        if (ids.includes(b.userId)) b.direct.delete(groupId);
        return ids.includes(b.userId);
      case 'add_subgroups':
        b.subgroups.set(groupId, [...new Set([...(b.subgroups.get(groupId) ?? []), ...ids])]);
        return true;
      case 'remove_subgroups':
        b.subgroups.set(
          groupId,
          (b.subgroups.get(groupId) ?? []).filter((id) => !ids.includes(id)),
        );
        return true;
    }
    return false;
  }
  if (event.type === 'realm_user' && event.op === 'update' && event.person.user_id === b.userId && event.person.role !== undefined) {
    b.role = event.person.role;
    return true;
  }
  return false;
}

/** cross_realm_bots in the order of their names (as the database sorted them when they were read apart). */
const byFullName = (a: { full_name: string }, b: { full_name: string }) => (a.full_name < b.full_name ? -1 : a.full_name > b.full_name ? 1 : 0);

export const usersSection: StateSection<UsersState> = {
  types: ['realm_user'],
  async fetch(ctx) {
    const { svc, realm, user } = ctx;
    // Spectators see no user list: addresses and names are for members.
    if (!user) return { realm_users: [], realm_non_active_users: [], cross_realm_bots: [] };
    // Independent reads, started together: on PostgreSQL each takes a connection of its own.
    const [list, access, ownFields] = await Promise.all([svc.userLists.get(svc.db, realm.id), viewerAccess(ctx), ownFacts(ctx, user)]);
    const lists = list.serializedFor(user.role, ctx.clientSvcavatar);
    // One's own entry differs from everyone else's view of it (the real email).
    const own = JSON.stringify(list.entry(list.card(user.id) ?? user, user, ctx.clientSvcavatar));
    const [realmUsers, nonActiveUsers] =
      access === 'all'
        ? [lists.active.replacing(user.id, own), lists.inactive.replacing(user.id, own)]
        : limitedLists(list, lists, access, user.id, own, ctx.capabilities.user_list_incomplete ? undefined : realmHost(realm, svc.config));
    // As the reference: system bots never own anything a client should manage.
    const crossRealmBots = list.cards
      .filter((u) => u.is_system_bot)
      .sort(byFullName)
      .map((bot) => ({ ...formatUser(bot, user, { clientSvcavatar: false }), bot_owner_id: null }));
    return { realm_users: realmUsers, realm_non_active_users: nonActiveUsers, cross_realm_bots: crossRealmBots, ...ownFields };
  },
  apply(state, event, ctx) {
    if (event.type === 'realm_user') applyRealmUserEvent(state, event, ctx);
    // Permissions follow the caller's role and groups and the organization's settings.
    const basis = ctx.cache.get(BASIS) as PermissionBasis | undefined;
    if (basis && 'user_id' in state && updateBasis(basis, event)) Object.assign(state, ownPermissions(basis));
  },
};

/**
 * The lists of a viewer who sees only some users: the others are left out, or shown as
 * "Unknown user" (active, so that nothing about them shows) when `unknownHost` is given.
 */
function limitedLists(
  list: KeptUserList,
  lists: SerializedLists,
  access: Set<number>,
  viewerId: number,
  own: string,
  unknownHost: string | undefined,
): [RawJson, RawJson] {
  const active: Buffer[] = [];
  const inactive: Buffer[] = [];
  for (const u of list.cards) {
    if (u.is_system_bot) continue;
    if (canAccess(access, u.id)) {
      const kept = u.is_active ? lists.active : lists.inactive;
      (u.is_active ? active : inactive).push(u.id === viewerId ? Buffer.from(own) : kept.entry(u.id)!);
    } else if (unknownHost !== undefined) {
      active.push(Buffer.from(JSON.stringify(unknownUser(u.id, unknownHost))));
    }
  }
  return [rawArray(active), rawArray(inactive)];
}

/** The lists as arrays, to change them: fetch leaves them serialized. */
function listsOf(state: UsersState): [UserEntry[], UserEntry[]] {
  const parsed = (list: UserEntry[] | RawJson) => (list instanceof RawJson ? (list.parse() as UserEntry[]) : list);
  state.realm_users = parsed(state.realm_users);
  state.realm_non_active_users = parsed(state.realm_non_active_users);
  return [state.realm_users, state.realm_non_active_users];
}

function applyRealmUserEvent(state: UsersState, event: RealmUserEvent, ctx: RegisterContext): void {
  const person: Person = event.person;
  const lists = listsOf(state);
  const find = () => {
    for (const list of lists) {
      const i = list.findIndex((u) => u.user_id === person.user_id);
      if (i >= 0) return { list, i };
    }
    return undefined;
  };
  const byId = (a: UserEntry, b: UserEntry) => a.user_id - b.user_id;
  if (event.op === 'add') {
    const found = find();
    if (found) found.list.splice(found.i, 1);
    const { is_active, ...entry } = person;
    (is_active === false ? lists[1] : lists[0]).push(entry);
    (is_active === false ? lists[1] : lists[0]).sort(byId);
    return;
  }
  if (event.op === 'remove') {
    // The viewer lost sight of the user: clients that accept an incomplete list drop them,
    // others keep an "Unknown user" in their place, as a fresh register lists them.
    const found = find();
    if (!found) return;
    found.list.splice(found.i, 1);
    if (!ctx.capabilities.user_list_incomplete) {
      lists[0].push(unknownUser(person.user_id, realmHost(ctx.realm, ctx.svc.config)));
      lists[0].sort(byId);
    }
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
    const { id, value, ...rest } = custom_profile_field;
    if (value === null || value === undefined) delete data[String(id)];
    else data[String(id)] = { value, ...rest };
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
    if (typeof changes.delivery_email === 'string') state.delivery_email = changes.delivery_email;
    const { avatar_version, avatar_source, avatar_url_medium } = changes;
    // The avatar facet (users/actions.ts avatarFacet) carries all three.
    if (avatar_version !== undefined && avatar_source !== undefined && avatar_url_medium !== undefined) {
      // The own avatar is always a URL, even where client_svcavatar left it to the client.
      state.avatar_source = avatar_source;
      state.avatar_url_medium = avatar_url_medium;
      state.avatar_url =
        changes.avatar_url ?? avatarUrl({ id: user_id, realm_id: ctx.realm.id, delivery_email: state.delivery_email, avatar_source, avatar_version });
    }
    if (role !== undefined) Object.assign(state, roleFacts(role));
  }
}
