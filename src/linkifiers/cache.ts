// Each organization's linkifiers, kept by the process so that a render (every message sent)
// skips their read. Every change emits a `realm_linkifiers` event (actions.ts), which drops
// the organization's entry here; with a broker every process hears every notice. The TTL
// (the credential cache's, config.ts) bounds what a process outside the broker leaves stale.

import type { Notice } from '../events/types.ts';
import type { Linkifier } from '../markdown/index.ts';

interface Entry {
  linkifiers: Linkifier[];
  expires: number;
}

export class LinkifierCache {
  readonly #byRealm = new Map<number, Entry>();
  /** Counts drops: a read that began before one is not remembered (it may predate the change). */
  #drops = 0;
  readonly #ttlMs: number;

  constructor(ttlMs: number) {
    this.#ttlMs = ttlMs;
  }

  /** The organization's linkifiers, remembered or `read()` (outside any transaction: what it reads is committed). */
  async get(realmId: number, read: () => Promise<Linkifier[]>): Promise<Linkifier[]> {
    const entry = this.#byRealm.get(realmId);
    if (entry && entry.expires >= Date.now()) return entry.linkifiers;
    const stamp = this.#drops;
    const linkifiers = await read();
    if (this.#ttlMs > 0 && stamp === this.#drops) this.#byRealm.set(realmId, { linkifiers, expires: Date.now() + this.#ttlMs });
    return linkifiers;
  }

  /** Forgets everything (a notice may have been lost). */
  clear(): void {
    this.#drops++;
    this.#byRealm.clear();
  }

  /** Drops an organization's entry when its linkifiers change. */
  observe(notice: Notice): void {
    if (notice.event.type !== 'realm_linkifiers') return;
    this.#drops++;
    this.#byRealm.delete(notice.realmId);
  }
}
