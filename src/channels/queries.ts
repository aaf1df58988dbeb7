import { inIds } from '../db/ids.ts';
import { sql } from 'kysely';
import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import type { Channel, Subscription } from './tables.ts';
import { badRequest, ApiError } from '../http/errors.ts';
import { groupMemberIds } from '../user_groups/group-setting.ts';
import { administersChannelList, mayFollowAllPublicChannels, roleAdmits } from '../users/access.ts';
import { settingsOf } from '../realm/queries.ts';
import { CHANNEL_PERMISSIONS, hasMetadataAccess, type ChannelViewer } from './access.ts';
import { CHANNEL_PERMISSION_SETTINGS, type ChannelPermission } from '../user_groups/permission-settings.ts';
import { isRowId, isStorableText } from '../db/ids.ts';
import { jsonRows } from '../db/json-rows.ts';
import { once, type RegisterContext } from '../events/state.ts';

export async function getChannel(db: Executor, realmId: number, channelId: number): Promise<Channel | undefined> {
  if (!isRowId(channelId)) return undefined;
  return db.selectFrom('channels').selectAll().where('realm_id', '=', realmId).where('id', '=', channelId).executeTakeFirst();
}

/**
 * The channel an organization setting names (`new_stream_announcements_stream_id`,
 * `signup_announcements_stream_id`), while it exists and is not archived; -1 names none.
 */
export async function channelOfSetting(
  db: Executor,
  realm: Realm,
  setting: 'new_stream_announcements_stream_id' | 'signup_announcements_stream_id',
): Promise<Channel | undefined> {
  const id = settingsOf(realm)[setting];
  if (typeof id !== 'number' || id < 0) return undefined;
  const channel = await getChannel(db, realm.id, id);
  return channel && !channel.is_archived ? channel : undefined;
}

export async function getChannelByName(db: Executor, realmId: number, name: string): Promise<Channel | undefined> {
  if (!isStorableText(name)) return undefined;
  return db.selectFrom('channels').selectAll().where('realm_id', '=', realmId).where(sql<string>`lower(name)`, '=', name.toLowerCase()).executeTakeFirst();
}

export async function listChannels(db: Executor, realmId: number, ids?: number[]): Promise<Channel[]> {
  let q = db.selectFrom('channels').selectAll().where('realm_id', '=', realmId);
  if (ids) {
    if (ids.length === 0) return [];
    q = q.where(inIds('id', ids));
  }
  // Whole organizations (register lists every channel): one JSON value on PGlite (db/json-rows.ts).
  return jsonRows(db, q.orderBy('id'), ['date_created']);
}

/** A channel the viewer may know of, or "Invalid channel ID" (no hint that it exists). */
export async function accessChannel(db: Executor, viewer: ChannelViewer, channelId: number): Promise<Channel> {
  const channel = await getChannel(db, viewer.realm.id, channelId);
  if (!channel || !hasMetadataAccess(viewer, channel)) throw badRequest('Invalid channel ID');
  return channel;
}

/** By name, for the endpoints that take names: unknown or invisible is STREAM_DOES_NOT_EXIST. */
export async function accessChannelByName(db: Executor, viewer: ChannelViewer, name: string): Promise<Channel> {
  const channel = await getChannelByName(db, viewer.realm.id, name);
  if (!channel || !hasMetadataAccess(viewer, channel)) throw channelDoesNotExist(name);
  return channel;
}

export function channelDoesNotExist(name: string): ApiError {
  return new ApiError('STREAM_DOES_NOT_EXIST', `Channel '${name}' does not exist`, { data: { stream: name } });
}

/** Active subscribers of each channel, active users only, sorted. */
export async function subscriberIds(db: Executor, channelIds: number[]): Promise<Map<number, number[]>> {
  const result = new Map<number, number[]>(channelIds.map((id) => [id, []]));
  if (channelIds.length === 0) return result;
  const rows = await db
    .selectFrom('subscriptions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.channel_id', 's.user_id'])
    .where('s.channel_id', 'in', channelIds)
    .where('s.active', '=', true)
    .where('u.is_active', '=', true)
    .orderBy('s.user_id')
    .execute();
  for (const r of rows) result.get(r.channel_id)!.push(r.user_id);
  return result;
}

/**
 * How many active subscribers (active users) each channel has: the stored count
 * (channels/subscriber-counts.ts), read now (a channel row read earlier in a
 * transaction that changed subscriptions may hold an older one).
 */
export async function subscriberCounts(db: Executor, channelIds: number[]): Promise<Map<number, number>> {
  const result = new Map<number, number>(channelIds.map((id) => [id, 0]));
  if (channelIds.length === 0) return result;
  const rows = await db.selectFrom('channels').select(['id', 'subscriber_count']).where(inIds('id', channelIds)).execute();
  for (const r of rows) result.set(r.id, r.subscriber_count);
  return result;
}

/** The user's subscription to the channel, if they are subscribed now. */
export async function activeSubscription(db: Executor, userId: number, channelId: number): Promise<Subscription | undefined> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('channel_id', '=', channelId)
    .where('active', '=', true)
    .executeTakeFirst();
}

export async function subscriptionsOf(db: Executor, userId: number): Promise<Subscription[]> {
  return db.selectFrom('subscriptions').selectAll().where('user_id', '=', userId).execute();
}

export async function defaultChannelIds(db: Executor, realmId: number): Promise<number[]> {
  const rows = await db.selectFrom('default_channels').select('channel_id').where('realm_id', '=', realmId).orderBy('channel_id').execute();
  return rows.map((r) => r.channel_id);
}

/**
 * Everyone who may know of a channel (metadata access): the audience of its
 * `stream` events and of its subscribers' comings and goings.
 */
export async function channelAudience(db: Executor, realm: Realm, channel: Channel): Promise<number[]> {
  const users = await db.selectFrom('users').select(['id', 'role']).where('realm_id', '=', realm.id).where('is_active', '=', true).execute();
  const subscribed = new Set((await subscriberIds(db, [channel.id])).get(channel.id));
  if (channel.is_web_public) return users.map((u) => u.id);
  if (!channel.invite_only) return users.filter((u) => mayFollowAllPublicChannels(u) || subscribed.has(u.id)).map((u) => u.id);
  const allowed = new Set(subscribed);
  for (const u of users) if (administersChannelList(u)) allowed.add(u.id);
  // The groups that reach a private channel without a subscription (as channels/access.ts holdsChannelPermission).
  for (const setting of ['can_administer_channel_group', 'can_subscribe_group', 'can_add_subscribers_group'] as const) {
    const holders = new Set(users.filter((u) => roleAdmits(u, CHANNEL_PERMISSION_SETTINGS[setting].allowEveryone)).map((u) => u.id));
    for (const id of await groupMemberIds(db, channel[`${setting}_id`])) if (holders.has(id)) allowed.add(id);
  }
  return users.filter((u) => allowed.has(u.id)).map((u) => u.id);
}

/** Channels whose permission settings use one of these groups, with those settings. */
export async function channelSettingsIn(
  db: Executor,
  realmId: number,
  groupIds: ReadonlySet<number>,
  opts: { includeArchived: boolean },
): Promise<{ channel: Channel; settings: ChannelPermission[] }[]> {
  if (groupIds.size === 0) return [];
  const ids = [...groupIds];
  const channels = await db
    .selectFrom('channels')
    .selectAll()
    .where('realm_id', '=', realmId)
    .$if(!opts.includeArchived, (q) => q.where('is_archived', '=', false))
    .where((eb) => eb.or(CHANNEL_PERMISSIONS.map((p) => eb(`${p}_id`, 'in', ids))))
    .orderBy('id')
    .execute();
  return channels.map((channel) => ({ channel, settings: CHANNEL_PERMISSIONS.filter((p) => groupIds.has(channel[`${p}_id`])) }));
}

/** Live channels whose permission settings use one of these groups (user groups ask before deactivating). */
export async function channelsUsingGroups(db: Executor, realm: Realm, groupIds: ReadonlySet<number>) {
  const uses = await channelSettingsIn(db, realm.id, groupIds, { includeArchived: false });
  return uses.map(({ channel, settings }) => ({ type: 'channel' as const, channel_id: channel.id, settings: settings as string[] }));
}

/** Users who share a channel with `user` (as subscribers): they may see each other. */
export async function channelCompanions(db: Executor, _realm: Realm, user: { id: number }): Promise<number[]> {
  const rows = await db
    .selectFrom('subscriptions as mine')
    .innerJoin('subscriptions as theirs', 'theirs.channel_id', 'mine.channel_id')
    .select('theirs.user_id')
    .distinct()
    .where('mine.user_id', '=', user.id)
    .where('mine.active', '=', true)
    .where('theirs.active', '=', true)
    .execute();
  return rows.map((r) => r.user_id);
}

/** GET /get_stream_id: the id of a channel the viewer may know of, by name. */
export async function channelIdByName(db: Executor, viewer: ChannelViewer, name: string): Promise<number> {
  const channel = await getChannelByName(db, viewer.realm.id, name);
  if (!channel || !hasMetadataAccess(viewer, channel)) throw badRequest(`Invalid channel name '${name}'`);
  return channel.id;
}

/**
 * The register caller's subscriptions (left ones included), read once per register call:
 * the channel, unread and message sections each start from them.
 */
export function ownSubscriptions(ctx: RegisterContext): Promise<Subscription[]> {
  return once(ctx, 'subscriptions:own', () => subscriptionsOf(ctx.svc.db, ctx.user!.id));
}
