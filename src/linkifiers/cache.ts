// Each organization's linkifiers, kept by the process so that a render (every message sent)
// skips their read (events/kept-reads.ts). Every change emits a `realm_linkifiers` event
// (actions.ts), which drops the organization's entry in every process.

import type { Notice } from '../events/types.ts';
import type { Linkifier } from '../markdown/index.ts';
import { KeptReads } from '../events/kept-reads.ts';

export class LinkifierCache {
  readonly #byRealm: KeptReads<number, Linkifier[]>;

  constructor(ttlMs: number) {
    this.#byRealm = new KeptReads(ttlMs);
  }

  /** The organization's linkifiers, remembered or `read()` (outside any transaction: what it reads is committed). */
  get(realmId: number, read: () => Promise<Linkifier[]>): Promise<Linkifier[]> {
    return this.#byRealm.through(realmId, realmId, read);
  }

  /** Forgets everything (a notice may have been lost). */
  clear(): void {
    this.#byRealm.drop();
  }

  /** Drops an organization's entry when its linkifiers change. */
  observe(notice: Notice): void {
    if (notice.event.type === 'realm_linkifiers') this.#byRealm.dropRealm(notice.realmId);
  }
}
