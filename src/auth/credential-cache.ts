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
import { KeptReads } from '../events/kept-reads.ts';

/** An internal event for caches only: its notice has an empty audience, so no queue gets it. */
export const CREDENTIALS_CHANGED = 'credentials_changed';

/** A user's API key changed: every process forgets the user's cached credentials (no client hears of it). */
export interface CredentialsChangedEvent {
  type: typeof CREDENTIALS_CHANGED;
  user_id: number;
  /** More users at once (the soft deactivation pass marks thousands): one pass over the cache. */
  user_ids?: number[];
}

type Found = { user: User; realm: Realm } | undefined;

export class CredentialCache {
  /** By API key (events/kept-reads.ts). */
  readonly #byKey: KeptReads<string, { user: User; realm: Realm }>;
  /** Reads under way: a burst of polls with one key (its entry just expired) reads it once. */
  readonly #reading = new Map<string, Promise<Found>>();

  constructor(ttlMs: number) {
    this.#byKey = new KeptReads(ttlMs);
  }

  get(apiKey: string): { user: User; realm: Realm } | undefined {
    return this.#byKey.get(apiKey);
  }

  /**
   * `read()`, shared with the requests that miss the same key while it runs (each
   * checks the result itself). `stamp` goes to `set`: it remembers nothing read
   * before a change dropped entries.
   */
  async load(apiKey: string, read: () => Promise<Found>): Promise<{ found: Found; stamp: number }> {
    const stamp = this.#byKey.stamp;
    let reading = this.#reading.get(apiKey);
    if (!reading) {
      reading = read().finally(() => {
        if (this.#reading.get(apiKey) === reading) this.#reading.delete(apiKey);
      });
      this.#reading.set(apiKey, reading);
    }
    return { found: await reading, stamp };
  }

  set(apiKey: string, user: User, realm: Realm, stamp = this.#byKey.stamp): void {
    this.#byKey.set(stamp, apiKey, realm.id, { user, realm });
  }

  /** Forgets everything (after a change made outside the actions, e.g. in tests). */
  clear(): void {
    this.#drop();
  }

  /** Drops the entries `test` names; reads under way may have seen what a change replaced: later misses read again. */
  #drop(test?: (entry: { user: User; realm: Realm }, realmId: number) => boolean): void {
    this.#byKey.drop(test);
    this.#reading.clear();
  }

  /** Forgets users' entries at once (their API key changed, or they became long-term idle). */
  forgetUser(userId: number, more: readonly number[] = []): void {
    const ids = new Set([userId, ...more]);
    this.#drop((entry) => ids.has(entry.user.id));
  }

  /** Drops what a published change may have made stale. */
  observe(notice: Notice): void {
    const { event } = notice;
    if (event.type === 'realm_user' || event.type === 'user_settings') {
      // A user's own settings travel to that user alone: the audience names them.
      const userIds = event.type === 'realm_user' ? [(event.person as { user_id?: number } | undefined)?.user_id] : notice.users;
      this.#drop((entry) => userIds.includes(entry.user.id));
    } else if (event.type === 'realm_bot') {
      // A bot's regenerated key (and any other change to it) drops what was remembered.
      const botId = (event.bot as { user_id?: number } | undefined)?.user_id;
      this.#drop((entry) => entry.user.id === botId);
    } else if (event.type === CREDENTIALS_CHANGED) {
      this.forgetUser(event.user_id as number, (event.user_ids as number[] | undefined) ?? []);
    } else if (event.type === 'realm') {
      this.#drop((_, realmId) => realmId === notice.realmId);
    }
  }
}
