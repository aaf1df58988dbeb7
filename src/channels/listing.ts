// Reads that list channels and subscriptions for a viewer: GET /streams,
// GET /users/me/subscriptions and register's subscription data.

import type { Hooked } from '../services.ts';
import type { Executor } from '../db/schema.ts';
import type { Channel, Subscription } from './tables.ts';
import { badRequest } from '../http/errors.ts';
import { hasContentAccess, hasMetadataAccess, isSubscribed, type ChannelViewer } from './access.ts';
import { defaultChannelIds, listChannels, subscriberIds, subscriptionsOf } from './queries.ts';
import { compareByName, formatChannels, type ApiChannel } from './format.ts';
import { subscriptionObject } from './events.ts';
import { administersChannelList } from '../users/access.ts';

export interface ChannelFilters {
  include_public: boolean;
  include_web_public: boolean;
  include_subscribed: boolean;
  exclude_archived: boolean;
  include_all: boolean;
  include_default: boolean;
  include_owner_subscribed: boolean;
  include_can_access_content: boolean;
  include_all_active: boolean;
}

/** GET /streams (spec endpoint 19). */
export async function listChannelsFor(svc: Hooked, db: Executor, viewer: ChannelViewer, f: ChannelFilters): Promise<ApiChannel[]> {
  if (f.include_all_active && !administersChannelList(viewer.user)) throw badRequest('User not authorized for this query');
  const all = await listChannels(db, viewer.realm.id);
  const defaults = new Set(await defaultChannelIds(db, viewer.realm.id));
  const includeAll = f.include_all || f.include_all_active;
  // A bot may ask for the channels its owner is subscribed to (as the reference, private ones included).
  const ownerId = f.include_owner_subscribed && viewer.user.is_bot ? viewer.user.bot_owner_id : null;
  const ownerSubscribed = new Set(ownerId === null ? [] : (await subscriptionsOf(db, ownerId)).filter((s) => s.active).map((s) => s.channel_id));
  const chosen = all.filter((c) => {
    if (f.exclude_archived && c.is_archived) return false;
    if (includeAll) return hasMetadataAccess(viewer, c);
    if (f.include_public && !c.invite_only && hasMetadataAccess(viewer, c)) return true;
    if (f.include_web_public && c.is_web_public) return true;
    if (f.include_subscribed && isSubscribed(viewer, c)) return true;
    // Default channels are public, but not to guests.
    if (f.include_default && defaults.has(c.id) && hasMetadataAccess(viewer, c)) return true;
    if (ownerSubscribed.has(c.id)) return true;
    if (f.include_can_access_content && hasContentAccess(viewer, c)) return true;
    return false;
  });
  const formatted = await formatChannels(svc, db, viewer.realm, chosen, { countsCurrent: true });
  return chosen.map((c) => ({ ...formatted.get(c.id)!, ...(f.include_default ? { is_default: defaults.has(c.id) } : {}) })).sort(compareByName);
}

export type SubscriberMode = boolean | 'partial';

/** Bots and users active in the last 14 days: what a partial subscriber list guarantees. */
const PARTIAL_THRESHOLD = 250;
const RECENT_DAYS = 14;

async function subscriberLists(db: Executor, channelIds: number[], mode: SubscriberMode) {
  const lists = new Map<number, SubscriberList>();
  if (mode === false) return lists;
  const full = await subscriberIds(db, channelIds);
  let recent: Set<number> | undefined;
  for (const id of channelIds) {
    const subscribers = full.get(id)!;
    if (mode === 'partial' && subscribers.length >= PARTIAL_THRESHOLD) {
      recent ??= await recentlyActive(db, channelIds);
      lists.set(id, { partial_subscribers: subscribers.filter((u) => recent!.has(u)) });
    } else {
      lists.set(id, { subscribers });
    }
  }
  return lists;
}

async function recentlyActive(db: Executor, channelIds: number[]): Promise<Set<number>> {
  const since = new Date(Date.now() - RECENT_DAYS * 86_400_000);
  const rows = await db
    .selectFrom('users as u')
    .innerJoin('subscriptions as s', 's.user_id', 'u.id')
    .select('u.id')
    .distinct()
    .where('s.channel_id', 'in', channelIds)
    .where((eb) => eb.or([eb('u.is_bot', '=', true), eb('u.last_active_at', '>=', since)]))
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** A channel's subscribers, all or (include_subscribers=partial, large channels) the recently active. */
type SubscriberList = { subscribers: number[]; partial_subscribers?: never } | { partial_subscribers: number[]; subscribers?: never };

/** A channel as register and GET /users/me/subscriptions list it: with the user's settings, and subscribers if asked. */
export type ListedChannel = ApiChannel & { subscribers?: number[]; partial_subscribers?: number[] };

export interface SubscriptionData {
  subscriptions: ListedChannel[];
  unsubscribed: ListedChannel[];
  never_subscribed: ListedChannel[];
}

/**
 * The viewer's channels split as register reports them: subscribed now, once
 * subscribed, and visible but never subscribed. Archived channels only on request.
 */
export async function subscriptionData(
  svc: Hooked,
  db: Executor,
  viewer: ChannelViewer,
  opts: {
    includeSubscribers: SubscriberMode;
    includeArchived: boolean;
    notificationDefaults?: Record<string, boolean>;
    /** The organization's channels, the viewer's subscriptions and the channels' formatting, when the caller has them already (register). */
    channels?: Channel[];
    subscriptions?: Subscription[];
    format?: (channels: Channel[]) => Promise<Map<number, ApiChannel>>;
  },
): Promise<SubscriptionData> {
  const channels = (opts.channels ?? (await listChannels(db, viewer.realm.id))).filter((c) => opts.includeArchived || !c.is_archived);
  const subs = new Map((opts.subscriptions ?? (await subscriptionsOf(db, viewer.user.id))).map((s) => [s.channel_id, s]));
  const subscribed: [Channel, Subscription][] = [];
  const unsubscribed: [Channel, Subscription][] = [];
  const never: Channel[] = [];
  for (const c of channels) {
    const sub = subs.get(c.id);
    if (sub?.active) subscribed.push([c, sub]);
    // Former subscriptions are listed while the channel stays visible.
    else if (!hasMetadataAccess(viewer, c)) continue;
    else if (sub) unsubscribed.push([c, sub]);
    else never.push(c);
  }
  const shown = [...subscribed.map(([c]) => c), ...unsubscribed.map(([c]) => c), ...never];
  const formatted = await (opts.format ?? ((cs: Channel[]) => formatChannels(svc, db, viewer.realm, cs, { countsCurrent: true })))(shown);
  const lists = await subscriberLists(
    db,
    shown.map((c) => c.id),
    opts.includeSubscribers,
  );
  const withSubs = (c: Channel, sub: Subscription) => {
    const obj = subscriptionObject(formatted.get(c.id)!, sub);
    if (opts.notificationDefaults) for (const [k, v] of Object.entries(opts.notificationDefaults)) if (obj[k] === null) obj[k] = v;
    return { ...obj, ...lists.get(c.id) };
  };
  return {
    subscriptions: subscribed.map(([c, s]) => withSubs(c, s)).sort(compareByName),
    unsubscribed: unsubscribed.map(([c, s]) => withSubs(c, s)).sort(compareByName),
    never_subscribed: never.map((c) => ({ ...formatted.get(c.id)!, ...lists.get(c.id) })).sort(compareByName),
  };
}
