// Authenticated users by API key, kept for a few seconds so that the API's most
// frequent requests (the event long-poll above all) skip a database read.
// Changes made in this process reach it through the event bus: every change to
// a user emits a `realm_user` or `user_settings` event, every change to an
// organization a `realm` event, and those drop the affected entries at once. A change no client
// hears of (a person's regenerated API key) is a CREDENTIALS_CHANGED notice with no audience.
// With a broker every process hears every notice, so an entry goes everywhere at once. The TTL
// bounds what a process outside the broker (the manage command without BROKER_URL) leaves stale.

import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Notice } from '../events/types.ts';

/** An internal event for caches only: its notice has an empty audience, so no queue gets it. */
export const CREDENTIALS_CHANGED = 'credentials_changed';

/** A user's API key changed: every process forgets the user's cached credentials (no client hears of it). */
export interface CredentialsChangedEvent {
  type: typeof CREDENTIALS_CHANGED;
  user_id: number;
  /** More users at once (the soft deactivation pass marks thousands): one pass over the cache. */
  user_ids?: number[];
}

interface Entry {
  user: User;
  realm: Realm;
  expires: number;
}

type Found = { user: User; realm: Realm } | undefined;

export class CredentialCache {
  readonly #byKey = new Map<string, Entry>();
  /** Reads under way: a burst of polls with one key (its entry just expired) reads it once. */
  readonly #reading = new Map<string, Promise<Found>>();
  /** Counts what dropped entries: a read that began before a drop is not remembered. */
  #drops = 0;
  readonly #ttlMs: number;

  constructor(ttlMs: number) {
    this.#ttlMs = ttlMs;
  }

  get(apiKey: string): { user: User; realm: Realm } | undefined {
    const entry = this.#byKey.get(apiKey);
    if (!entry) return undefined;
    if (entry.expires < Date.now()) {
      this.#byKey.delete(apiKey);
      return undefined;
    }
    return entry;
  }

  /**
   * `read()`, shared with the requests that miss the same key while it runs (each
   * checks the result itself). `stamp` goes to `set`: it remembers nothing read
   * before a change dropped entries.
   */
  async load(apiKey: string, read: () => Promise<Found>): Promise<{ found: Found; stamp: number }> {
    const stamp = this.#drops;
    let reading = this.#reading.get(apiKey);
    if (!reading) {
      reading = read().finally(() => {
        if (this.#reading.get(apiKey) === reading) this.#reading.delete(apiKey);
      });
      this.#reading.set(apiKey, reading);
    }
    return { found: await reading, stamp };
  }

  set(apiKey: string, user: User, realm: Realm, stamp = this.#drops): void {
    if (this.#ttlMs <= 0 || stamp !== this.#drops) return;
    if (this.#byKey.size > 100_000) this.#byKey.clear();
    this.#byKey.set(apiKey, { user, realm, expires: Date.now() + this.#ttlMs });
  }

  /** Forgets everything (after a change made outside the actions, e.g. in tests). */
  clear(): void {
    this.#dropped();
    this.#byKey.clear();
  }

  /** Reads under way may have seen what a change replaced: later misses read again. */
  #dropped(): void {
    this.#drops++;
    this.#reading.clear();
  }

  /** Forgets users' entries at once (their API key changed, or they became long-term idle). */
  forgetUser(userId: number, more: readonly number[] = []): void {
    this.#dropped();
    const ids = new Set([userId, ...more]);
    for (const [key, entry] of this.#byKey) if (ids.has(entry.user.id)) this.#byKey.delete(key);
  }

  /** Drops what a published change may have made stale. */
  observe(notice: Notice): void {
    const { event } = notice;
    if (event.type === 'realm_user' || event.type === 'user_settings' || event.type === 'realm_bot' || event.type === 'realm') this.#dropped();
    if (event.type === 'realm_user' || event.type === 'user_settings') {
      // A user's own settings travel to that user alone: the audience names them.
      const userIds = event.type === 'realm_user' ? [(event.person as { user_id?: number } | undefined)?.user_id] : notice.users;
      for (const [key, entry] of this.#byKey) if (userIds.includes(entry.user.id)) this.#byKey.delete(key);
    } else if (event.type === 'realm_bot') {
      // A bot's regenerated key (and any other change to it) drops what was remembered.
      const botId = (event.bot as { user_id?: number } | undefined)?.user_id;
      for (const [key, entry] of this.#byKey) if (entry.user.id === botId) this.#byKey.delete(key);
    } else if (event.type === CREDENTIALS_CHANGED) {
      this.forgetUser(event.user_id as number, (event.user_ids as number[] | undefined) ?? []);
    } else if (event.type === 'realm') {
      for (const [key, entry] of this.#byKey) if (entry.realm.id === notice.realmId) this.#byKey.delete(key);
    }
  }
}
