// Reads a process keeps between requests, each entry an organization's, dropped when the
// event bus carries a change that may touch it (with a broker every process hears every
// notice). The TTL (config.credentialCacheMs; 0 keeps nothing) bounds what a change made
// outside the broker leaves stale. A read that began before a drop is not kept: take
// `stamp` before reading and give it to `set`. The credential, viewer, linkifier and user-list
// caches are this mechanism with their own keys and the notices that drop them.

interface Entry<V> {
  realmId: number;
  value: V;
  expires: number;
}

/** Past this many entries everything is dropped: a bound on memory, not a policy. */
const MAX_ENTRIES = 100_000;

export class KeptReads<K, V> {
  readonly #entries = new Map<K, Entry<V>>();
  /** Counts drops: a stamp older than the count belongs to a read that may predate a change. */
  #drops = 0;
  readonly #ttlMs: number;

  constructor(ttlMs: number) {
    this.#ttlMs = ttlMs;
  }

  /** Taken before a read, given back to `set`. */
  get stamp(): number {
    return this.#drops;
  }

  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expires < Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Keeps what a read found, unless something was dropped since `stamp`. */
  set(stamp: number, key: K, realmId: number, value: V): void {
    if (this.#ttlMs <= 0 || stamp !== this.#drops) return;
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
    this.#entries.set(key, { realmId, value, expires: Date.now() + this.#ttlMs });
  }

  /** The kept value, or `read()`'s, kept. */
  async through(key: K, realmId: number, read: () => Promise<V>): Promise<V> {
    const kept = this.get(key);
    if (kept !== undefined) return kept;
    const stamp = this.#drops;
    const value = await read();
    this.set(stamp, key, realmId, value);
    return value;
  }

  /** Drops the entries `test` names (all with no test); reads under way are not kept. */
  drop(test?: (value: V, realmId: number) => boolean): void {
    this.#drops++;
    if (!test) this.#entries.clear();
    else for (const [key, entry] of this.#entries) if (test(entry.value, entry.realmId)) this.#entries.delete(key);
  }

  /** Drops an organization's entries. */
  dropRealm(realmId: number): void {
    this.drop((_, r) => r === realmId);
  }
}
