// The events channel actions emit, built in one place so that every action
// tells clients the same story (digest section 3: stream, subscription).

import type { Hooked } from '../services.ts';
import { inIds } from '../db/ids.ts';
import type { User } from '../users/tables.ts';
import type { Channel, Subscription } from './tables.ts';
import { formatChannels, personalSettings, type ApiChannel } from './format.ts';
import { channelAudience, defaultChannelIds, subscriberIds } from './queries.ts';
import { ROLE } from '../users/roles.ts';
import { userSettings } from '../users/settings.ts';
import type { Hidden, ServerEvent } from '../events/types.ts';
import type { ActionContext } from '../db/transact.ts';

/** A user's notification defaults, which `null` (inherit) subscription settings mean. */
export function notificationDefaults(user: Pick<User, 'settings' | 'timezone'>): Record<string, boolean> {
  const s = userSettings(user);
  return {
    desktop_notifications: s.enable_stream_desktop_notifications as boolean,
    audible_notifications: s.enable_stream_audible_notifications as boolean,
    push_notifications: s.enable_stream_push_notifications as boolean,
    email_notifications: s.enable_stream_email_notifications as boolean,
    wildcard_mentions_notify: s.wildcard_mentions_notify as boolean,
  };
}

/** A subscription object: the channel, the user's settings for it, and its subscribers. */
export function subscriptionObject(channel: ApiChannel, sub: Subscription, subscribers?: number[]): ApiSubscription {
  return { ...channel, ...personalSettings(sub), ...(subscribers ? { subscribers } : {}) };
}

/**
 * `stream/create` to everyone who may now know of the channels. Given `newViewers`,
 * existing channels are shown to just those users, the way a new channel is:
 * created empty, then its subscribers arriving as a peer_add, so that a client's
 * subscriber lists and counts add up either way.
 */
export async function emitChannelsCreated(
  ctx: ActionContext<Hooked>,
  channels: Channel[],
  opts: { newViewers?: number[]; subscribing?: number[] } = {},
): Promise<void> {
  const { svc, tx, emit, realm } = ctx;
  const { newViewers, subscribing = [] } = opts;
  const formatted = await formatChannels(svc, tx, realm, channels);
  const subscribers = newViewers
    ? await subscriberIds(
        tx,
        channels.map((c) => c.id),
      )
    : undefined;
  for (const channel of channels) {
    // Users about to be subscribed to a new private channel learn of it first.
    let audience = [...new Set([...(await channelAudience(tx, realm, channel)), ...subscribing])];
    if (newViewers) audience = audience.filter((id) => newViewers.includes(id));
    if (audience.length === 0) continue;
    const object = formatted.get(channel.id)!;
    const present = subscribers?.get(channel.id) ?? [];
    const hidden: Hidden = channel.is_archived ? { channel_archived: true } : {};
    const shown = { ...object, subscriber_count: object.subscriber_count - present.length };
    emit(realm.id, { type: 'stream', op: 'create', streams: [shown] }, audience, { hidden });
    if (present.length > 0) emit(realm.id, { type: 'subscription', op: 'peer_add', stream_ids: [channel.id], user_ids: present }, audience, { hidden });
  }
}

/** `stream/delete` for users who can no longer know of a channel. */
export function emitChannelsGone(ctx: ActionContext<unknown>, channels: Channel[], users: number[]): void {
  const { emit, realm } = ctx;
  if (users.length === 0 || channels.length === 0) return;
  emit(realm.id, { type: 'stream', op: 'delete', streams: channels.map((c) => ({ stream_id: c.id })), stream_ids: channels.map((c) => c.id) }, users);
}

/**
 * `stream/update`: one property changed. `extra` carries the companions the
 * reference sends (rendered_description, history_public_to_subscribers, is_web_public).
 */
export async function emitChannelUpdate(
  ctx: ActionContext<Hooked>,
  channel: Channel,
  property: string,
  value: unknown,
  extra: StreamUpdateExtras = {},
  audience?: number[],
): Promise<void> {
  const { svc, tx, emit, realm } = ctx;
  const users = audience ?? (await channelAudience(tx, realm, channel));
  const event: ServerEvent = { type: 'stream', op: 'update', stream_id: channel.id, name: channel.name, property, value, ...extra };
  const hidden: Hidden = {};
  // Clients that do not know archived channels learn of an archiving as a deletion, and of nothing after it.
  if (property === 'is_archived') {
    // An unarchived channel reappears empty; its subscribers follow (see emitUnarchived).
    if (value === false) hidden.streams = [{ ...(await formatChannels(svc, tx, realm, [channel])).get(channel.id)!, subscriber_count: 0 }];
  } else if (channel.is_archived) {
    hidden.channel_archived = true;
  }
  emit(realm.id, event, users, { hidden });
}

/** `subscription/add` to each user newly subscribed, with full subscription objects. */
export async function emitSubscriptionsAdded(
  ctx: ActionContext<Hooked>,
  added: { user: User; channel: Channel; sub: Subscription }[],
  extraHidden: Hidden = {},
): Promise<void> {
  const { svc, tx, emit, realm } = ctx;
  if (added.length === 0) return;
  const channels = [...new Map(added.map((a) => [a.channel.id, a.channel])).values()];
  const [formatted, subscribers] = await Promise.all([
    formatChannels(svc, tx, realm, channels),
    subscriberIds(
      tx,
      channels.map((c) => c.id),
    ),
  ]);
  // One event per user, and archived channels apart: not every client knows them.
  const groups = new Map<string, { user: User; archived: boolean; subs: ApiSubscription[] }>();
  for (const a of added) {
    const key = `${a.user.id}:${a.channel.is_archived}`;
    const entry = groups.get(key) ?? { user: a.user, archived: a.channel.is_archived, subs: [] };
    entry.subs.push(subscriptionObject(formatted.get(a.channel.id)!, a.sub, subscribers.get(a.channel.id)));
    groups.set(key, entry);
  }
  for (const { user, archived, subs } of groups.values()) {
    emit(realm.id, { type: 'subscription', op: 'add', subscriptions: subs }, [user.id], {
      hidden: { ...extraHidden, notification_defaults: notificationDefaults(user), ...(archived ? { channel_archived: true } : {}) },
    });
  }
}

/**
 * `subscription/peer_add` or `peer_remove`: others who may know of a channel
 * learn who joined or left it.
 */
export async function emitPeerChanges(
  ctx: ActionContext<unknown>,
  op: 'peer_add' | 'peer_remove',
  changes: { channel: Channel; userIds: number[] }[],
): Promise<void> {
  const { tx, emit, realm } = ctx;
  for (const { channel, userIds } of changes) {
    if (userIds.length === 0) continue;
    const audience = (await channelAudience(tx, realm, channel)).filter((id) => !userIds.includes(id));
    emit(realm.id, { type: 'subscription', op, stream_ids: [channel.id], user_ids: [...userIds].sort((a, b) => a - b) }, audience, {
      hidden: channel.is_archived ? { channel_archived: true } : {},
    });
  }
}

/**
 * Clients that do not know archived channels forgot an archived channel's
 * subscriptions; when it comes back they hear of them again, as new ones.
 */
export async function emitUnarchived(ctx: ActionContext<Hooked>, channel: Channel): Promise<void> {
  const { tx, emit, realm } = ctx;
  const legacyOnly: Hidden = { only_without_capability: 'archived_channels' };
  const subscribers = (await subscriberIds(tx, [channel.id])).get(channel.id)!;
  const audience = await channelAudience(tx, realm, channel);
  // The channel came back empty (stream/create): first its subscribers, then each user's own story.
  if (subscribers.length > 0) {
    emit(realm.id, { type: 'subscription', op: 'peer_add', stream_ids: [channel.id], user_ids: subscribers }, audience, { hidden: legacyOnly });
  }
  await replayFormerSubscriptions(ctx, channel, subscribers, audience, legacyOnly);
  if (subscribers.length === 0) return;
  const rows = await tx
    .selectFrom('subscriptions')
    .innerJoin('users', 'users.id', 'subscriptions.user_id')
    .selectAll('subscriptions')
    .where('subscriptions.channel_id', '=', channel.id)
    .where('subscriptions.active', '=', true)
    .where('users.is_active', '=', true)
    .execute();
  const users = new Map((await tx.selectFrom('users').selectAll().where(inIds('id', subscribers)).execute()).map((u) => [u.id, u]));
  await emitSubscriptionsAdded(
    ctx,
    rows.map((sub) => ({ user: users.get(sub.user_id)!, channel, sub })),
    legacyOnly,
  );
}

/**
 * Former subscribers who can see the channel: "you joined, then you left", so
 * that the channel lands among their unsubscribed channels again.
 */
async function replayFormerSubscriptions(
  ctx: ActionContext<Hooked>,
  channel: Channel,
  subscribers: number[],
  audience: number[],
  hidden: Hidden,
): Promise<void> {
  const { svc, tx, emit, realm } = ctx;
  const former = await tx
    .selectFrom('subscriptions')
    .innerJoin('users', 'users.id', 'subscriptions.user_id')
    .selectAll('subscriptions')
    .where('subscriptions.channel_id', '=', channel.id)
    .where('subscriptions.active', '=', false)
    .where('users.is_active', '=', true)
    .where(inIds('subscriptions.user_id', audience))
    .execute();
  if (former.length === 0) return;
  const object = (await formatChannels(svc, tx, realm, [channel])).get(channel.id)!;
  const users = await tx
    .selectFrom('users')
    .selectAll()
    .where(
      inIds(
        'id',
        former.map((f) => f.user_id),
      ),
    )
    .execute();
  for (const sub of former) {
    const user = users.find((u) => u.id === sub.user_id)!;
    const replayed = { ...object, subscriber_count: subscribers.length + 1 };
    const withUser = [...subscribers, sub.user_id].sort((a, b) => a - b);
    emit(realm.id, { type: 'subscription', op: 'add', subscriptions: [subscriptionObject(replayed, sub, withUser)] }, [sub.user_id], {
      hidden: { ...hidden, notification_defaults: notificationDefaults(user) },
    });
    emit(realm.id, { type: 'subscription', op: 'remove', subscriptions: [{ name: channel.name, stream_id: channel.id }] }, [sub.user_id], { hidden });
  }
}

/** `default_streams` to those who may know them: active users who are not guests (as the reference). */
export async function emitDefaultChannels(ctx: ActionContext<unknown>): Promise<void> {
  const { tx, emit, realm } = ctx;
  const ids = await defaultChannelIds(tx, realm.id);
  const users = await tx
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', realm.id)
    .where('is_active', '=', true)
    .where('role', '!=', ROLE.GUEST)
    .execute();
  emit(
    realm.id,
    { type: 'default_streams', default_streams: ids },
    users.map((u) => u.id),
  );
}

/** The companions the reference sends with some `stream/update` properties. */
export interface StreamUpdateExtras {
  rendered_description?: string;
  history_public_to_subscribers?: boolean;
  is_web_public?: boolean;
}

/** A subscription object as events and register carry it: the channel, the user's settings, maybe subscribers. */
export type ApiSubscription = ApiChannel & { subscribers?: number[] };

export type StreamEvent =
  | { type: 'stream'; op: 'create'; streams: ApiChannel[] }
  | { type: 'stream'; op: 'delete'; streams: { stream_id: number }[]; stream_ids: number[] }
  | ({ type: 'stream'; op: 'update'; stream_id: number; name: string; property: string; value: unknown } & StreamUpdateExtras);

export type SubscriptionEvent =
  | { type: 'subscription'; op: 'add'; subscriptions: ApiSubscription[] }
  | { type: 'subscription'; op: 'remove'; subscriptions: { name: string; stream_id: number }[] }
  | { type: 'subscription'; op: 'update'; stream_id: number; property: string; value: unknown }
  | { type: 'subscription'; op: 'peer_add' | 'peer_remove'; stream_ids: number[]; user_ids: number[] };

export interface DefaultStreamsEvent {
  type: 'default_streams';
  default_streams: number[];
}

export type ChannelEvent = StreamEvent | SubscriptionEvent | DefaultStreamsEvent;
