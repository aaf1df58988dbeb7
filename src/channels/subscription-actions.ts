// Every change to subscriptions (spec endpoint 19 and the subscription API of
// digest section 2): subscribing (which creates channels that do not exist),
// unsubscribing, subscription properties, and what the users domain asks of
// them. Each action checks permissions, writes in one transaction and emits its
// events after the commit.

import type { Hooked, Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Channel, Subscription } from './tables.ts';
import { type ActionContext, transact, transactAs, type Tx } from '../db/transact.ts';
import { isRowId } from '../db/ids.ts';
import { badRequest, insufficientPermission } from '../http/errors.ts';
import { getUser, getUserByEmail } from '../users/queries.ts';
import { prerenderHtml } from '../rendering/index.ts';
import { canAddSubscribers, canRemoveSubscribers, canSubscribeSelf, channelViewer, hasMetadataAccess, type ChannelViewer } from './access.ts';
import { accessChannelByName, activeSubscription, channelAudience, getChannelByName, subscriberIds } from './queries.ts';
import { watchUserAccess } from '../users/access-changes.ts';
import { pickColor } from './format.ts';
import { HEX_COLOR, checkChannelDescription, checkChannelName } from './validation.ts';
import { MAX_BULK_NEW_SUBSCRIPTION_MESSAGES, channelCreatedNotice, newChannelsAnnouncement, subscribedYouNotice } from './notices.ts';
import { sendNotices, type Notice } from '../notification_bot/index.ts';
import { emitChannelsCreated, emitChannelsGone, emitDefaultChannels, emitPeerChanges, emitSubscriptionsAdded } from './events.ts';
import { insertChannel, type ChannelSettings } from './create.ts';
import { addToSubscriberCounts, lockActiveUsers } from './subscriber-counts.ts';

/**
 * Users who can no longer see channels are told they are gone, and their former
 * subscriptions to them are forgotten: should the channels reappear, they come
 * back as never subscribed, which is what their clients will have recorded.
 */
export async function loseSight(ctx: ActionContext<unknown>, channels: Channel[], users: number[]): Promise<void> {
  if (channels.length === 0 || users.length === 0) return;
  await ctx.tx
    .deleteFrom('subscriptions')
    .where(
      'channel_id',
      'in',
      channels.map((c) => c.id),
    )
    .where('user_id', 'in', users)
    .where('active', '=', false)
    .execute();
  emitChannelsGone(ctx, channels, users);
}

// ---------------------------------------------------------------- subscribing

export interface Pair {
  user: User;
  channel: Channel;
}

/**
 * Subscribes users to channels (no permission checks: callers decided), and
 * emits subscription/add and peer_add. Returns which pairs were new.
 */
export async function addSubscriptions(
  ctx: ActionContext<Hooked>,
  pairs: Pair[],
  /** Colors asked for new subscriptions, by channel id (`subscriptions[].color`). */
  chosenColors?: Map<number, string>,
): Promise<{ added: Pair[]; already: Pair[] }> {
  const { svc, tx, emit, realm } = ctx;
  // Limited users (can_access_all_users_group) meet the channel's subscribers, and they them.
  const access = await watchUserAccess(svc, tx, realm, async () => [
    ...pairs.map((p) => p.user.id),
    ...[...(await subscriberIds(tx, [...new Set(pairs.map((p) => p.channel.id))])).values()].flat(),
  ]);
  // An idle user's catch-up counts on subscriptions unchanged since it: it runs first.
  await svc.hooks.catchUpIdle(
    tx,
    pairs.map((p) => p.user.id),
  );
  await introduceChannels(ctx, pairs);
  const added: { user: User; channel: Channel; sub: Subscription }[] = [];
  const already: Pair[] = [];
  const nextColor = subscriptionColors(tx, chosenColors);
  const active = await lockActiveUsers(
    tx,
    pairs.map((p) => p.user.id),
  );
  for (const { user, channel } of pairs) {
    const sub = await storeSubscription(tx, realm, user, channel, nextColor);
    if (sub) added.push({ user, channel, sub });
    else already.push({ user, channel });
  }
  await addToSubscriberCounts(tx, countedPerChannel(added, active, 1));
  await emitSubscriptionsAdded(ctx, added);
  const byChannel = new Map<number, { channel: Channel; userIds: number[] }>();
  for (const a of added) {
    const entry = byChannel.get(a.channel.id) ?? { channel: a.channel, userIds: [] };
    entry.userIds.push(a.user.id);
    byChannel.set(a.channel.id, entry);
  }
  await emitPeerChanges(ctx, 'peer_add', [...byChannel.values()]);
  await access.announce(emit);
  return { added, already };
}

/** Subscribers gained (`sign` 1) or lost (-1) per channel: the pairs of active users. */
function countedPerChannel(pairs: Pair[], active: Set<number>, sign: 1 | -1): Map<number, number> {
  const deltas = new Map<number, number>();
  for (const { user, channel } of pairs) if (active.has(user.id)) deltas.set(channel.id, (deltas.get(channel.id) ?? 0) + sign);
  return deltas;
}

/** Users who could not see a channel (private, or public to a guest) learn of it before joining. */
async function introduceChannels(ctx: ActionContext<Hooked>, pairs: Pair[]): Promise<void> {
  const { tx, realm } = ctx;
  const byChannelPairs = new Map<number, { channel: Channel; users: number[] }>();
  for (const { user, channel } of pairs) {
    const entry = byChannelPairs.get(channel.id) ?? { channel, users: [] };
    entry.users.push(user.id);
    byChannelPairs.set(channel.id, entry);
  }
  for (const { channel, users } of byChannelPairs.values()) {
    const audience = new Set(await channelAudience(tx, realm, channel));
    const newViewers = users.filter((id) => !audience.has(id));
    if (newViewers.length > 0) await emitChannelsCreated(ctx, [channel], { newViewers, subscribing: newViewers });
  }
}

/** The color of each new subscription: the one asked for, else one the user does not use yet. */
type NextColor = (userId: number, channelId: number) => Promise<string>;

function subscriptionColors(tx: Tx, chosen?: Map<number, string>): NextColor {
  const byUser = new Map<number, string[]>();
  return async (userId, channelId) => {
    let colors = byUser.get(userId);
    if (!colors) {
      colors = (await tx.selectFrom('subscriptions').select('color').where('user_id', '=', userId).execute()).map((r) => r.color);
      byUser.set(userId, colors);
    }
    const color = chosen?.get(channelId) ?? pickColor(colors);
    colors.push(color);
    return color;
  };
}

/** One subscription, new or active again; undefined when it already was active. */
async function storeSubscription(tx: Tx, realm: Realm, user: User, channel: Channel, nextColor: NextColor): Promise<Subscription | undefined> {
  const existing = await tx.selectFrom('subscriptions').selectAll().where('user_id', '=', user.id).where('channel_id', '=', channel.id).executeTakeFirst();
  if (existing?.active) return undefined;
  if (existing) {
    // Not active any more when a concurrent request subscribed them first (and counted it).
    return tx
      .updateTable('subscriptions')
      .set({ active: true })
      .where('user_id', '=', user.id)
      .where('channel_id', '=', channel.id)
      .where('active', '=', false)
      .returningAll()
      .executeTakeFirst();
  }
  return tx
    .insertInto('subscriptions')
    .values({
      realm_id: realm.id,
      user_id: user.id,
      channel_id: channel.id,
      color: await nextColor(user.id, channel.id),
      desktop_notifications: null,
      audible_notifications: null,
      push_notifications: null,
      email_notifications: null,
      wildcard_mentions_notify: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Principals: user ids or emails; unknown or deactivated ones are refused (level 208+). */
export async function resolvePrincipals(tx: Tx, realm: Realm, principals: (number | string)[]): Promise<User[]> {
  const users: User[] = [];
  for (const p of principals) {
    const user = typeof p === 'number' ? await getUser(tx, realm.id, p) : await getUserByEmail(tx, realm.id, p);
    if (!user || !user.is_active || user.is_system_bot) throw badRequest('No such user');
    if (!users.some((u) => u.id === user.id)) users.push(user);
  }
  return users;
}

const keyed = (pairs: Pair[]) => {
  const out: Record<string, string[]> = {};
  for (const { user, channel } of pairs) (out[String(user.id)] ??= []).push(channel.name);
  return out;
};

export interface SubscribeRequest extends ChannelSettings {
  subscriptions: { name: string; description?: string; color?: string }[];
  principals?: (number | string)[];
  authorization_errors_fatal: boolean;
  announce: boolean;
  /** Tell users subscribed by someone else (FL 397; the response says whether it did). */
  send_new_subscription_messages?: boolean;
}

/** POST /users/me/subscriptions: subscribes the caller or `principals`, creating channels that do not exist. */
export async function subscribe(svc: Services, realm: Realm, actor: User, req: SubscribeRequest) {
  const html = await descriptionsHtml(svc, realm, req.subscriptions);
  return transactAs(svc, realm, actor, (ctx) => subscribeWithin(ctx, req, html));
}

/** The descriptions of the channels a request may create, rendered before its transaction. */
function descriptionsHtml(svc: Services, realm: Realm, subscriptions: SubscribeRequest['subscriptions']) {
  return prerenderHtml(
    svc,
    realm,
    subscriptions.map((s) => () => checkChannelDescription(s.description ?? '')),
  );
}

async function subscribeWithin(ctx: ActionContext<Services, User>, req: SubscribeRequest, html: (text: string) => string) {
  const { tx, realm, actor } = ctx;
  const names = req.subscriptions.map((s) => ({
    name: checkChannelName(s.name),
    description: checkChannelDescription(s.description ?? ''),
    color: s.color,
  }));
  const viewer = await channelViewer(tx, realm, actor);
  const targets = req.principals && req.principals.length > 0 ? await resolvePrincipals(tx, realm, req.principals) : [actor];
  const othersIncluded = targets.some((u) => u.id !== actor.id);
  const { channels, created, unauthorized, colors } = await channelsToJoin(html, tx, viewer, names, req, othersIncluded);
  // The creator of a channel may subscribe others to it, whatever the organization's settings.
  await emitChannelsCreated(ctx, created);
  if (created.length > 0 && req.is_default_stream) await emitDefaultChannels(ctx);
  const pairs = targets.flatMap((user) => channels.map((channel) => ({ user, channel })));
  const { added, already } = await addSubscriptions(ctx, pairs, colors);
  const tellSubscribers = await postSubscriptionNotices(ctx, req, { targets, added, created });
  return {
    subscribed: keyed(added),
    already_subscribed: keyed(already),
    ...(req.authorization_errors_fatal ? {} : { unauthorized }),
    ...(req.send_new_subscription_messages ? { new_subscription_messages_sent: tellSubscribers } : {}),
  };
}

/**
 * The channels a subscribe request joins, in the order named: existing ones the
 * actor may join (or add others to), and new ones, created. Those the actor may
 * not reach are refused, or listed as unauthorized when errors are not fatal.
 */
async function channelsToJoin(
  html: (text: string) => string,
  tx: Tx,
  viewer: ChannelViewer,
  names: { name: string; description: string; color?: string }[],
  req: SubscribeRequest,
  othersIncluded: boolean,
) {
  const channels: Channel[] = [];
  const created: Channel[] = [];
  const unauthorized: string[] = [];
  const colors = new Map<number, string>();
  for (const { name, description, color } of names) {
    if (channels.some((c) => c.name.toLowerCase() === name.toLowerCase())) continue;
    const existing = await getChannelByName(tx, viewer.realm.id, name);
    if (!existing) {
      const channel = await insertChannel(html, tx, viewer, name, description, req);
      created.push(channel);
      channels.push(channel);
      if (color !== undefined) colors.set(channel.id, color);
      continue;
    }
    const allowed = othersIncluded ? canAddSubscribers(viewer, existing) : canSubscribeSelf(viewer, existing);
    if (allowed) {
      channels.push(existing);
      if (color !== undefined) colors.set(existing.id, color);
    } else if (!hasMetadataAccess(viewer, existing) || !othersIncluded) {
      if (req.authorization_errors_fatal) throw badRequest(`Unable to access channel (${existing.name}).`);
      unauthorized.push(existing.name);
    } else {
      throw insufficientPermission();
    }
  }
  return { channels, created, unauthorized, colors };
}

/**
 * Notification Bot, as the reference: those subscribed by someone else to
 * existing channels (unless too many), then the announcement, then each new
 * channel's first message. Returns whether the subscribed were told.
 */
async function postSubscriptionNotices(
  ctx: ActionContext<Services, User>,
  req: SubscribeRequest,
  s: { targets: User[]; added: Pair[]; created: Channel[] },
): Promise<boolean | undefined> {
  const { tx, realm, actor } = ctx;
  const notices: Notice[] = [];
  const subscribedUsers = new Set(s.added.map((a) => a.user.id));
  const tellSubscribers = req.send_new_subscription_messages && subscribedUsers.size <= MAX_BULK_NEW_SUBSCRIPTION_MESSAGES;
  if (tellSubscribers) {
    for (const user of s.targets) {
      if (user.id === actor.id || user.is_bot) continue;
      const existing = s.added.filter((a) => a.user.id === user.id && !s.created.includes(a.channel)).map((a) => a.channel);
      if (existing.length > 0) notices.push(subscribedYouNotice(actor, user, existing));
    }
  }
  if (req.announce) notices.push(...(await newChannelsAnnouncement(tx, realm, actor, s.created)));
  for (const channel of s.created) notices.push(channelCreatedNotice(actor, channel));
  await sendNotices(ctx, notices);
  return tellSubscribers;
}

/** The messages domain marks a left channel's messages read (Services.hooks, wiring.ts). */
export type UnsubscribeHook = (ctx: ActionContext<unknown>, userId: number, channelId: number) => Promise<unknown>;

/** DELETE /users/me/subscriptions: `subscriptions` are channel names. */
export async function unsubscribe(svc: Services, realm: Realm, actor: User, names: string[], principals?: (number | string)[]) {
  return transactAs(svc, realm, actor, (ctx) => unsubscribeWithin(ctx, names, principals));
}

/** The legacy PATCH /users/me/subscriptions: `add` then `delete`, all or nothing (as the reference). */
export async function changeSubscriptions(svc: Services, realm: Realm, actor: User, add: SubscribeRequest['subscriptions'], remove: string[]) {
  if (add.length === 0 && remove.length === 0) throw badRequest('Nothing to do. Specify at least one of "add" or "delete".');
  const html = await descriptionsHtml(svc, realm, add);
  return transactAs(svc, realm, actor, async (ctx) => {
    const added =
      add.length > 0
        ? await subscribeWithin(ctx, { subscriptions: add, authorization_errors_fatal: true, announce: false }, html)
        : { subscribed: {}, already_subscribed: {} };
    const removed = remove.length > 0 ? await unsubscribeWithin(ctx, remove) : { removed: [], not_removed: [] };
    return { ...added, ...removed };
  });
}

async function unsubscribeWithin(ctx: ActionContext<Hooked, User>, names: string[], principals?: (number | string)[]) {
  const { tx, realm, actor } = ctx;
  const viewer = await channelViewer(tx, realm, actor);
  const targets = principals && principals.length > 0 ? await resolvePrincipals(tx, realm, principals) : [actor];
  const channels: Channel[] = [];
  for (const name of names) {
    const channel = await accessChannelByName(tx, viewer, name.trim());
    if (!channels.some((c) => c.id === channel.id)) channels.push(channel);
  }
  if (targets.some((u) => u.id !== actor.id)) {
    for (const c of channels) if (!canRemoveSubscribers(viewer, c)) throw insufficientPermission();
  }
  return removeSubscriptions(ctx, targets, channels);
}

async function removeSubscriptions(ctx: ActionContext<Hooked>, users: User[], channels: Channel[]) {
  const { svc, tx, emit, realm } = ctx;
  // Limited users may stop seeing those they met only in these channels.
  const access = await watchUserAccess(svc, tx, realm, async () =>
    [
      ...(
        await subscriberIds(
          tx,
          channels.map((c) => c.id),
        )
      ).values(),
    ].flat(),
  );
  // An idle user's catch-up counts on subscriptions unchanged since it: it runs first.
  await svc.hooks.catchUpIdle(
    tx,
    users.map((u) => u.id),
  );
  const removed: Pair[] = [];
  const notRemoved: Pair[] = [];
  const active = await lockActiveUsers(
    tx,
    users.map((u) => u.id),
  );
  for (const user of users) {
    for (const channel of channels) {
      const r = await tx
        .updateTable('subscriptions')
        .set({ active: false })
        .where('user_id', '=', user.id)
        .where('channel_id', '=', channel.id)
        .where('active', '=', true)
        .executeTakeFirst();
      (r.numUpdatedRows > 0n ? removed : notRemoved).push({ user, channel });
    }
  }
  await addToSubscriberCounts(tx, countedPerChannel(removed, active, -1));
  for (const user of users) {
    const mine = removed.filter((r) => r.user.id === user.id);
    if (mine.length === 0) continue;
    emit(realm.id, { type: 'subscription', op: 'remove', subscriptions: mine.map((r) => ({ name: r.channel.name, stream_id: r.channel.id })) }, [user.id]);
  }
  // Unread messages live only in subscribed channels: leaving marks the channel read (as Zulip does, after
  // telling of the unsubscription),
  // else rejoining would bring old messages back unread.
  for (const r of removed) await svc.hooks.afterUnsubscribe(ctx, r.user.id, r.channel.id);
  await emitPeerChanges(
    ctx,
    'peer_remove',
    channels.map((channel) => ({ channel, userIds: removed.filter((r) => r.channel.id === channel.id).map((r) => r.user.id) })),
  );
  // A user who lost the only way to see a private channel is told it is gone.
  for (const user of users) {
    const lost: Channel[] = [];
    const viewer = await channelViewer(tx, realm, user);
    for (const r of removed) if (r.user.id === user.id && !hasMetadataAccess(viewer, r.channel)) lost.push(r.channel);
    await loseSight(ctx, lost, [user.id]);
  }
  await access.announce(emit);
  return { removed: removed.map((r) => r.channel.name), not_removed: notRemoved.map((r) => r.channel.name) };
}

// ---------------------------------------------------------------- subscription settings

export const SUBSCRIPTION_PROPERTIES = [
  'color',
  'is_muted',
  'in_home_view',
  'pin_to_top',
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'wildcard_mentions_notify',
] as const;

export interface PropertyChange {
  stream_id: number;
  property: string;
  value: unknown;
}

function checkPropertyValue(property: string, value: unknown): string | boolean | null {
  if (property === 'color') {
    if (typeof value !== 'string' || !HEX_COLOR.test(value)) throw badRequest('color is not a valid hex color code');
    return value;
  }
  const nullable = property.endsWith('_notifications') || property === 'wildcard_mentions_notify';
  if (value === null && nullable) return null;
  if (typeof value !== 'boolean') throw badRequest(`${property} is not a boolean`);
  return value;
}

/** POST /users/me/subscriptions/properties (and the legacy single-property PATCH). */
export async function updateSubscriptionProperties(svc: Services, realm: Realm, actor: User, changes: PropertyChange[]) {
  return transact(svc, async (tx, emit) => {
    for (const { stream_id, property, value } of changes) {
      if (!(SUBSCRIPTION_PROPERTIES as readonly string[]).includes(property)) throw badRequest(`Unknown subscription property: ${property}`);
      const checked = checkPropertyValue(property, value);
      if (!isRowId(stream_id)) throw badRequest(`Not subscribed to channel ID ${stream_id}`);
      const sub = await activeSubscription(tx, actor.id, stream_id);
      if (!sub) throw badRequest(`Not subscribed to channel ID ${stream_id}`);
      // in_home_view is the legacy inverse of is_muted: both names are announced.
      const column = property === 'in_home_view' ? 'is_muted' : property;
      const stored = property === 'in_home_view' ? !checked : checked;
      await tx
        .updateTable('subscriptions')
        .set({ [column]: stored } as Record<string, unknown>)
        .where('user_id', '=', actor.id)
        .where('channel_id', '=', stream_id)
        .execute();
      if (column === 'is_muted') {
        emit(realm.id, { type: 'subscription', op: 'update', stream_id, property: 'in_home_view', value: !stored }, [actor.id]);
        emit(realm.id, { type: 'subscription', op: 'update', stream_id, property: 'is_muted', value: stored }, [actor.id]);
      } else {
        emit(realm.id, { type: 'subscription', op: 'update', stream_id, property, value: stored }, [actor.id]);
      }
    }
    return changes;
  });
}

// ---------------------------------------------------------------- hooks for the users domain

/** New users join the organization's default channels (as in the reference). */
export async function subscribeToDefaultChannels(ctx: ActionContext<Hooked>, user: User): Promise<void> {
  const { tx, realm } = ctx;
  const defaults = await tx
    .selectFrom('channels')
    .innerJoin('default_channels', 'default_channels.channel_id', 'channels.id')
    .selectAll('channels')
    .where('channels.realm_id', '=', realm.id)
    .where('channels.is_archived', '=', false)
    .orderBy('channels.id')
    .execute();
  await addSubscriptions(
    ctx,
    defaults.map((channel) => ({ user, channel })),
  );
}

/** A user deactivated or back: others see them leave or rejoin their channels' subscriber lists. */
export async function announceSubscriberActivity(ctx: ActionContext<unknown>, user: User, active: boolean): Promise<void> {
  const rows = await ctx.tx
    .selectFrom('channels')
    .innerJoin('subscriptions', 'subscriptions.channel_id', 'channels.id')
    .selectAll('channels')
    .where('subscriptions.user_id', '=', user.id)
    .where('subscriptions.active', '=', true)
    .execute();
  await emitPeerChanges(
    ctx,
    active ? 'peer_add' : 'peer_remove',
    rows.map((channel) => ({ channel, userIds: [user.id] })),
  );
}
