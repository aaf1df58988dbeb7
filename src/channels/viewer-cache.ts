// What GET /messages reads before its window, kept between requests: a user's groups
// and subscriptions (a ChannelViewer's sets) and the channel a narrow names. Without
// it each fetch costs a round trip more than its window. It is invalidated as the
// credential cache is (auth/credential-cache.ts), through the event bus, and lives as
// long (config.credentialCacheMs; 0 turns it off): every change to what it holds emits
// one of the events below (subscriptions, groups, a user's role or activity, a channel's
// settings, the organization), and any of them drops the organization's entries, which
// is cheap as they are rare beside fetches. With a broker every process hears every notice.

import type { Notice } from '../events/types.ts';
import type { Channel } from './tables.ts';

/** Events after which the organization's viewers and channels are read afresh. */
const DROPS = new Set<string>(['subscription', 'user_group', 'realm_user', 'realm_bot', 'stream', 'realm']);

/** A user's groups (recursive) and active subscriptions. */
export interface ViewerSets {
  groups: Set<number>;
  subscribed: Set<number>;
}

interface Entry<T> {
  realmId: number;
  value: T;
  expires: number;
}

export class ViewerCache {
  readonly #viewers = new Map<number, Entry<ViewerSets>>();
  readonly #channels = new Map<string, Entry<Channel>>();
  /** Counts drops: a read that began before one is not remembered (`stamp`). */
  #drops = 0;
  readonly #ttlMs: number;

  constructor(ttlMs: number) {
    this.#ttlMs = ttlMs;
  }

  /** Taken before a read, given back to `set`. */
  get stamp(): number {
    return this.#drops;
  }

  /** The user's sets and, when `channelKey` is given, the channel it names: undefined unless both are kept. */
  get(userId: number, channelKey?: string): { sets: ViewerSets; channel: Channel | undefined } | undefined {
    const sets = this.#fresh(this.#viewers, userId);
    if (!sets) return undefined;
    if (channelKey === undefined) return { sets, channel: undefined };
    const channel = this.#fresh(this.#channels, channelKey);
    return channel ? { sets, channel } : undefined;
  }

  /** Keeps what a read found, unless a change dropped entries since `stamp`. A channel not found is not kept. */
  set(stamp: number, realmId: number, userId: number, sets: ViewerSets, channel?: { key: string; channel: Channel | undefined }): void {
    if (this.#ttlMs <= 0 || stamp !== this.#drops) return;
    if (this.#viewers.size > 100_000 || this.#channels.size > 100_000) this.clear();
    const expires = Date.now() + this.#ttlMs;
    this.#viewers.set(userId, { realmId, value: sets, expires });
    if (channel?.channel) this.#channels.set(channel.key, { realmId, value: channel.channel, expires });
  }

  clear(): void {
    this.#drops++;
    this.#viewers.clear();
    this.#channels.clear();
  }

  /** Drops the organization's entries after a change that may touch them. */
  observe(notice: Notice): void {
    if (!DROPS.has(notice.event.type)) return;
    this.#drops++;
    for (const map of [this.#viewers, this.#channels] as Map<unknown, Entry<unknown>>[]) {
      for (const [key, entry] of map) if (entry.realmId === notice.realmId) map.delete(key);
    }
  }

  #fresh<K, T>(map: Map<K, Entry<T>>, key: K): T | undefined {
    const entry = map.get(key);
    if (!entry) return undefined;
    if (entry.expires < Date.now()) {
      map.delete(key);
      return undefined;
    }
    return entry.value;
  }
}
