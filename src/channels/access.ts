// Who may see and do what with a channel (spec "Channel", "Authentication" 6).
// Everything is decided from the user's role, their groups, and whether they are
// subscribed; callers compute those once (`channelViewer`) and ask per channel.
//
// - metadata access: may know the channel exists (name, description, subscribers);
// - content access: may read its messages (and subscribe themselves to it);
// - administer: may change its settings (organization administrators always may).

import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Channel } from './tables.ts';
import type { ViewerCache } from './viewer-cache.ts';
import { isAdmin, isGuest } from '../users/roles.ts';
import { userGroupIdsQuery } from '../user_groups/group-setting.ts';
import { CHANNEL_PERMISSION_SETTINGS, REALM_PERMISSION_SETTINGS, type ChannelPermission, type RealmPermission } from '../user_groups/permission-settings.ts';
import { roleAdmits } from '../users/access.ts';

/** Every channel permission setting (`can_*_group`), in the reference's order. */
export const CHANNEL_PERMISSIONS = Object.keys(CHANNEL_PERMISSION_SETTINGS) as ChannelPermission[];

export interface ChannelViewer {
  user: User;
  realm: Realm;
  /** Every group the user is in (recursive). */
  groups: Set<number>;
  /** Channels the user is subscribed to now. */
  subscribed: Set<number>;
}

/** The select list of a viewer's groups and subscriptions, as `groups` and `subscribed`. */
function viewerColumns(userId: number) {
  return sql`array(${userGroupIdsQuery(userId)}) as groups,
    array(select channel_id from subscriptions where user_id = ${userId} and active) as subscribed`;
}

export async function channelViewer(db: Executor, realm: Realm, user: User): Promise<ChannelViewer> {
  // One round trip: nearly every action asks this first.
  const { rows } = await sql<{ groups: number[]; subscribed: number[] }>`select ${viewerColumns(user.id)}`.execute(db);
  return { user, realm, groups: new Set(rows[0].groups), subscribed: new Set(rows[0].subscribed) };
}

/**
 * channelViewer, and in the same round trip the channel a reference names: the
 * channel with id `ref.id` if there is one, else the one named `ref.name` (any case;
 * null names none). `also` (a send's): the channel locked for key share, and one more
 * value read of it, a column of a statement that names the channel `c` (null without a channel).
 */
export async function channelViewerAnd<A = never>(
  db: Executor,
  realm: Realm,
  user: User,
  ref: { id: number | null; name: string | null },
  also?: RawBuilder<A>,
): Promise<{ viewer: ChannelViewer; channel: Channel | undefined; also: A | null }> {
  const { rows } = await sql<{ groups: number[]; subscribed: number[]; also: A | null } & (Channel | { id: null })>`
    select v.groups, v.subscribed, ${also ?? sql`null`} as also, c.* from (select ${viewerColumns(user.id)}) v
    left join lateral (
      select * from channels where realm_id = ${realm.id} and (id = ${ref.id}::integer or lower(name) = ${ref.name?.toLowerCase() ?? null}::text)
      order by id = ${ref.id}::integer desc nulls last limit 1 ${also ? sql`for key share` : sql``}) c on true`.execute(db);
  const { groups, subscribed, also: value, ...channel } = rows[0];
  const viewer = { user, realm, groups: new Set(groups), subscribed: new Set(subscribed) };
  return { viewer, channel: channel.id === null ? undefined : (channel as Channel), also: value };
}

/**
 * channelViewerAnd (or channelViewer, with no reference) through a cache kept between
 * requests: no round trip when the viewer's sets and the channel are kept.
 */
export async function cachedChannelViewer(
  db: Executor,
  cache: ViewerCache,
  realm: Realm,
  user: User,
  ref?: { id: number | null; name: string | null },
): Promise<{ viewer: ChannelViewer; channel: Channel | undefined }> {
  const key = ref && `${realm.id}:${ref.id}:${ref.name?.toLowerCase()}`;
  const kept = cache.get(user.id, key);
  if (kept) return { viewer: { user, realm, ...kept.sets }, channel: kept.channel };
  const stamp = cache.stamp;
  const read = ref ? await channelViewerAnd(db, realm, user, ref) : { viewer: await channelViewer(db, realm, user), channel: undefined };
  const { groups, subscribed } = read.viewer;
  cache.set(stamp, realm.id, user.id, { groups, subscribed }, key === undefined ? undefined : { key, channel: read.channel });
  return read;
}

/** The user holds a channel permission (guests only where the setting admits everyone). */
export function holdsChannelPermission(v: ChannelViewer, channel: Channel, setting: ChannelPermission): boolean {
  if (!roleAdmits(v.user, CHANNEL_PERMISSION_SETTINGS[setting].allowEveryone)) return false;
  return v.groups.has(channel[`${setting}_id`]);
}

export function holdsRealmPermission(v: ChannelViewer, setting: RealmPermission): boolean {
  if (!roleAdmits(v.user, REALM_PERMISSION_SETTINGS[setting].allowEveryone)) return false;
  return v.groups.has(v.realm.group_settings[setting]);
}

export function isSubscribed(v: ChannelViewer, channel: Pick<Channel, 'id'>): boolean {
  return v.subscribed.has(channel.id);
}

export function canAdminister(v: ChannelViewer, channel: Channel): boolean {
  return isAdmin(v.user) || holdsChannelPermission(v, channel, 'can_administer_channel_group');
}

export function hasContentAccess(v: ChannelViewer, channel: Channel): boolean {
  if (channel.is_web_public || isSubscribed(v, channel)) return true;
  if (isGuest(v.user)) return false;
  if (!channel.invite_only) return true;
  // Since level 349 these groups reach a private channel without being subscribed.
  return holdsChannelPermission(v, channel, 'can_subscribe_group') || holdsChannelPermission(v, channel, 'can_add_subscribers_group');
}

export function hasMetadataAccess(v: ChannelViewer, channel: Channel): boolean {
  return hasContentAccess(v, channel) || canAdminister(v, channel);
}

/** May subscribe other users (digest 1.2; spec Channel `can_add_subscribers_group`). */
export function canAddSubscribers(v: ChannelViewer, channel: Channel): boolean {
  if (isAdmin(v.user)) return true;
  if (holdsChannelPermission(v, channel, 'can_add_subscribers_group')) return true;
  if (!hasContentAccess(v, channel)) return false;
  return canAdminister(v, channel) || holdsRealmPermission(v, 'can_add_subscribers_group');
}

/** May subscribe themselves. */
export function canSubscribeSelf(v: ChannelViewer, channel: Channel): boolean {
  return hasContentAccess(v, channel) || canAddSubscribers(v, channel);
}

/** May unsubscribe other users (administrators always may). */
export function canRemoveSubscribers(v: ChannelViewer, channel: Channel): boolean {
  if (isAdmin(v.user)) return true;
  if (!hasMetadataAccess(v, channel)) return false;
  return holdsChannelPermission(v, channel, 'can_remove_subscribers_group');
}
