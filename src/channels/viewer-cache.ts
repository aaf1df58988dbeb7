// What GET /messages reads before its window, kept between requests: a user's groups
// and subscriptions (a ChannelViewer's sets) and the channel a narrow names. Without
// it each fetch costs a round trip more than its window. Kept as events/kept-reads.ts
// says: every change to what it holds emits one of the events below (subscriptions,
// groups, a user's role or activity, a channel's settings, the organization), and any of
// them drops the organization's entries, which is cheap as they are rare beside fetches.

import type { Notice } from '../events/types.ts';
import type { Channel } from './tables.ts';
import { KeptReads } from '../events/kept-reads.ts';

/** Events after which the organization's viewers and channels are read afresh. */
const DROPS = new Set<string>(['subscription', 'user_group', 'realm_user', 'realm_bot', 'stream', 'realm']);

/** A user's groups (recursive) and active subscriptions. */
export interface ViewerSets {
  groups: Set<number>;
  subscribed: Set<number>;
}

export class ViewerCache {
  readonly #viewers: KeptReads<number, ViewerSets>;
  readonly #channels: KeptReads<string, Channel>;

  constructor(ttlMs: number) {
    this.#viewers = new KeptReads(ttlMs);
    this.#channels = new KeptReads(ttlMs);
  }

  /** Taken before a read, given back to `set` (both kinds of entry are dropped together). */
  get stamp(): number {
    return this.#viewers.stamp;
  }

  /** The user's sets and, when `channelKey` is given, the channel it names: undefined unless both are kept. */
  get(userId: number, channelKey?: string): { sets: ViewerSets; channel: Channel | undefined } | undefined {
    const sets = this.#viewers.get(userId);
    if (!sets) return undefined;
    if (channelKey === undefined) return { sets, channel: undefined };
    const channel = this.#channels.get(channelKey);
    return channel ? { sets, channel } : undefined;
  }

  /** Keeps what a read found, unless a change dropped entries since `stamp`. A channel not found is not kept. */
  set(stamp: number, realmId: number, userId: number, sets: ViewerSets, channel?: { key: string; channel: Channel | undefined }): void {
    // The two are dropped together, so their stamps move together.
    this.#viewers.set(stamp, userId, realmId, sets);
    if (channel?.channel) this.#channels.set(stamp, channel.key, realmId, channel.channel);
  }

  clear(): void {
    this.#viewers.drop();
    this.#channels.drop();
  }

  /** Drops the organization's entries after a change that may touch them. */
  observe(notice: Notice): void {
    if (!DROPS.has(notice.event.type)) return;
    this.#viewers.dropRealm(notice.realmId);
    this.#channels.dropRealm(notice.realmId);
  }
}
