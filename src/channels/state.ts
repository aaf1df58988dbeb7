// Register's channel sections: `subscription` (subscriptions, unsubscribed,
// never_subscribed), `stream` (streams) and `default_streams`, and how each
// channel event updates them.

import { once, type RegisterContext, type StateSection } from '../events/state.ts';
import type { StreamEvent, SubscriptionEvent } from './events.ts';
import { hasMetadataAccess, type ChannelViewer } from './access.ts';
import { registerSystemGroupIds, viewerGroupIds } from '../user_groups/group-setting.ts';
import { isGuest } from '../users/roles.ts';
import { subscriptionData, type ListedChannel, type SubscriptionData } from './listing.ts';
import { notificationDefaults } from './events.ts';
import { compareByName, formatChannels, type ApiChannel } from './format.ts';
import type { Channel } from './tables.ts';
import { defaultChannelIds, listChannels, ownSubscriptions } from './queries.ts';

type Entry = ListedChannel;
const LISTS = ['subscriptions', 'unsubscribed', 'never_subscribed'] as const;

/** Either section's lists: the subscription section's three, the stream section's `streams`. */
type Lists = Partial<SubscriptionData & StreamsState>;
type ListKey = keyof Lists;

interface StreamsState {
  streams: ApiChannel[];
}

export const subscriptionSection: StateSection<SubscriptionData> = {
  types: ['subscription'],
  async fetch(ctx) {
    if (!ctx.user) return { subscriptions: [], unsubscribed: [], never_subscribed: [] };
    return subscriptionData(ctx.svc, ctx.svc.db, await viewerOf(ctx), {
      includeSubscribers: ctx.includeSubscribers,
      includeArchived: ctx.capabilities.archived_channels,
      channels: await channelsOf(ctx),
      subscriptions: await ownSubscriptions(ctx),
      format: () => formattedChannels(ctx),
      notificationDefaults: ctx.capabilities.notification_settings_null ? undefined : notificationDefaults(ctx.user),
    });
  },
  apply(state, event, ctx) {
    if (event.type === 'subscription') applySubscriptionEvent(state, event, ctx);
    if (event.type === 'stream') applyStreamEvent(state, event, LISTS, ctx);
  },
};

export const streamSection: StateSection<StreamsState> = {
  types: ['stream'],
  async fetch(ctx) {
    const channels = await channelsOf(ctx);
    let visible = channels.filter((c) => c.is_web_public);
    if (ctx.user) {
      const viewer = await viewerOf(ctx);
      visible = channels.filter((c) => hasMetadataAccess(viewer, c));
    }
    const formatted = await formattedChannels(ctx);
    return { streams: visible.map((c) => formatted.get(c.id)!).sort(compareByName) };
  },
  apply(state, event, ctx) {
    if (event.type === 'stream') applyStreamEvent(state, event, ['streams'], ctx);
    if (event.type === 'subscription') {
      // The subscriber's own change is not announced to them as a peer change: counts follow here.
      if (event.op === 'add') for (const sub of event.subscriptions) setCount(state.streams, sub.stream_id, sub.subscriber_count);
      if (event.op === 'remove') for (const sub of event.subscriptions) addToCount(state.streams, sub.stream_id, -1);
      if (event.op === 'peer_add' || event.op === 'peer_remove') {
        const delta = event.user_ids.length * (event.op === 'peer_add' ? 1 : -1);
        for (const id of event.stream_ids) addToCount(state.streams, id, delta);
      }
    }
  },
};

export const defaultChannelsSection: StateSection<{ realm_default_streams: number[] }> = {
  types: ['default_streams'],
  async fetch(ctx) {
    // Guests and spectators cannot see every default channel: as the reference, they hear of none.
    if (!ctx.user || isGuest(ctx.user)) return { realm_default_streams: [] };
    return { realm_default_streams: await defaultChannelIds(ctx.svc.db, ctx.realm.id) };
  },
  apply(state, event) {
    if (event.type === 'default_streams') state.realm_default_streams = event.default_streams;
  },
};

// The subscription and stream sections read the same channels: once per register call.
function viewerOf(ctx: RegisterContext): Promise<ChannelViewer> {
  return once(ctx, 'channels:viewer', async () => {
    const [groups, subscriptions] = await Promise.all([viewerGroupIds(ctx), ownSubscriptions(ctx)]);
    return { user: ctx.user!, realm: ctx.realm, groups, subscribed: new Set(subscriptions.filter((s) => s.active).map((s) => s.channel_id)) };
  });
}

/** Every channel of the organization, archived ones too, read once per register call. */
export function registerChannels(ctx: RegisterContext): Promise<Channel[]> {
  return once(ctx, 'channels:all', () => listChannels(ctx.svc.db, ctx.realm.id));
}

/** The organization's channels this client lists (archived ones only with the capability). */
function channelsOf(ctx: RegisterContext): Promise<Channel[]> {
  return once(ctx, 'channels:list', async () => (await registerChannels(ctx)).filter((c) => ctx.capabilities.archived_channels || !c.is_archived));
}

/** Every listed channel formatted; each section picks the ones the caller may see. */
function formattedChannels(ctx: RegisterContext): Promise<Map<number, ApiChannel>> {
  return once(ctx, 'channels:formatted', async () =>
    formatChannels(ctx.svc, ctx.svc.db, ctx.realm, await channelsOf(ctx), { systemGroups: registerSystemGroupIds(ctx), countsCurrent: true }),
  );
}

function find(list: Entry[] | undefined, streamId: number): Entry | undefined {
  return list?.find((e) => e.stream_id === streamId);
}

function setCount(list: Entry[] | undefined, streamId: number, count: number): void {
  const entry = find(list, streamId);
  if (entry) entry.subscriber_count = count;
}

function addToCount(list: Entry[] | undefined, streamId: number, delta: number): void {
  const entry = find(list, streamId);
  if (entry) entry.subscriber_count += delta;
}

function removeFrom(state: Lists, key: ListKey, streamIds: Set<number>): Entry[] {
  const list = state[key] ?? [];
  const removed = list.filter((e) => streamIds.has(e.stream_id));
  state[key] = list.filter((e) => !streamIds.has(e.stream_id));
  return removed;
}

function insertSorted(state: Lists, key: ListKey, entry: Entry): void {
  const list = (state[key] ?? []).filter((e) => e.stream_id !== entry.stream_id);
  list.push(entry);
  list.sort(compareByName);
  state[key] = list;
}

/** Shapes a subscriber list the way this register asked for it. */
function withSubscribers(entry: Entry, subscribers: number[] | undefined, ctx: RegisterContext): Entry {
  const { subscribers: _s, partial_subscribers: _p, ...rest } = entry;
  if (ctx.includeSubscribers === false || subscribers === undefined) return rest;
  return { ...rest, subscribers };
}

function applySubscriptionEvent(state: SubscriptionData, event: SubscriptionEvent, ctx: RegisterContext): void {
  switch (event.op) {
    case 'add':
      for (const sub of event.subscriptions) {
        removeFrom(state, 'unsubscribed', new Set([sub.stream_id]));
        removeFrom(state, 'never_subscribed', new Set([sub.stream_id]));
        insertSorted(state, 'subscriptions', withSubscribers(sub, sub.subscribers, ctx));
        for (const key of LISTS) setCount(state[key], sub.stream_id, sub.subscriber_count);
      }
      break;
    case 'remove':
      for (const { stream_id } of event.subscriptions) {
        for (const entry of removeFrom(state, 'subscriptions', new Set([stream_id]))) {
          entry.subscriber_count -= 1;
          if (entry.subscribers) entry.subscribers = entry.subscribers.filter((id) => id !== ctx.user?.id);
          insertSorted(state, 'unsubscribed', entry);
        }
      }
      break;
    case 'update': {
      const entry = find(state.subscriptions, event.stream_id);
      if (entry) entry[event.property] = event.value;
      break;
    }
    case 'peer_add':
    case 'peer_remove':
      for (const streamId of event.stream_ids) {
        for (const key of LISTS) {
          const entry = find(state[key], streamId);
          if (!entry) continue;
          const ids = event.user_ids;
          const list = entry.subscribers ? 'subscribers' : entry.partial_subscribers ? 'partial_subscribers' : undefined;
          const current = (list && entry[list]) || [];
          const before = new Set(current);
          if (list) {
            entry[list] = event.op === 'peer_add' ? [...new Set([...current, ...ids])].sort((a, b) => a - b) : current.filter((id) => !ids.includes(id));
          }
          const changed = list ? ids.filter((id) => (event.op === 'peer_add' ? !before.has(id) : before.has(id))).length : ids.length;
          entry.subscriber_count += event.op === 'peer_add' ? changed : -changed;
        }
      }
      break;
  }
}

/** Properties a `stream/update` carries, and the companions that come with them. */
function applyUpdate(entry: Entry, event: Extract<StreamEvent, { op: 'update' }>): void {
  entry[event.property] = event.value;
  if (event.property === 'description') entry.rendered_description = event.rendered_description;
  if (event.property === 'invite_only' || event.property === 'is_web_public' || event.property === 'history_public_to_subscribers') {
    entry.history_public_to_subscribers = event.history_public_to_subscribers;
    entry.is_web_public = event.is_web_public;
  }
}

function applyStreamEvent(state: Lists, event: StreamEvent, keys: readonly ListKey[], ctx: RegisterContext): void {
  if (event.op === 'create') {
    for (const channel of event.streams) {
      if (keys.includes('streams')) insertSorted(state, 'streams', channel);
      if (!keys.includes('never_subscribed')) continue;
      const known = LISTS.some((k) => find(state[k], channel.stream_id));
      if (!known) insertSorted(state, 'never_subscribed', withSubscribers(channel, [], ctx));
    }
  } else if (event.op === 'delete') {
    const ids = new Set(event.stream_ids);
    for (const key of keys) removeFrom(state, key, ids);
  } else if (event.op === 'update') {
    for (const key of keys) {
      const entry = find(state[key], event.stream_id);
      if (entry) applyUpdate(entry, event);
      if (event.property === 'name') state[key]?.sort(compareByName);
    }
  }
}
