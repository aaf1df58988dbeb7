// All live event queues of this process, indexed by id, by user and, for the
// queues that also follow public channels, by organization. Collects idle
// queues, and writes them to disk at shutdown so clients keep their queue_id
// across a deploy.

import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { EventQueue, Heartbeats, badQueueId, type QueueOptions, type QueuedEvent, type SavedQueue } from './queue.ts';
import type { ServerEvent } from './types.ts';
import { optionsShapeKey } from './shape.ts';

export class QueueRegistry {
  readonly #byId = new Map<string, EventQueue>();
  readonly #byUser = new Map<number, Set<EventQueue>>();
  /** Queues that receive every public channel message of their organization. */
  readonly #publicListeners = new Map<number, Set<EventQueue>>();
  #gcTimer: NodeJS.Timeout | undefined;
  /** Set at shutdown: polls answer at once instead of parking. */
  stopping = false;
  /** Starts every new queue id: with a broker, the owning process (src/cluster/queues.ts). */
  readonly idPrefix: string;

  readonly #heartbeats = new Heartbeats();

  constructor(idPrefix = '') {
    this.idPrefix = idPrefix;
  }

  create(options: QueueOptions, saved?: SavedQueue): EventQueue {
    const queue = new EventQueue(options, this.#heartbeats, saved, this.idPrefix);
    // Made now rather than on the path of the first fan-out to reach the queue.
    optionsShapeKey(queue);
    this.#byId.set(queue.id, queue);
    addTo(this.#byUser, options.userId, queue);
    // Only `all_public_streams` widens what a queue receives (a `narrow` filters the user's own
    // messages); guests cannot ask for it (register refuses).
    if (options.allPublicStreams) addTo(this.#publicListeners, options.realmId, queue);
    return queue;
  }

  has(queueId: string): boolean {
    return this.#byId.has(queueId);
  }

  get size(): number {
    return this.#byId.size;
  }

  /** The caller's queue; anyone else's, or a collected one, is a bad queue id. */
  get(queueId: string, userId: number): EventQueue {
    const queue = this.find(queueId, userId);
    if (queue) return queue;
    const overflowed = this.#byId.get(queueId);
    if (overflowed?.options.userId === userId) this.delete(overflowed);
    throw badQueueId(queueId);
  }

  /** What `get` returns, or undefined where it would refuse (nothing changes). */
  find(queueId: string, userId: number): EventQueue | undefined {
    const queue = this.#byId.get(queueId);
    return queue && queue.options.userId === userId && !queue.overflowed ? queue : undefined;
  }

  delete(queue: EventQueue): void {
    // A poll parked on it answers now (its next poll is BAD_EVENT_QUEUE_ID) rather than hang.
    queue.release();
    this.#byId.delete(queue.id);
    removeFrom(this.#byUser, queue.options.userId, queue);
    removeFrom(this.#publicListeners, queue.options.realmId, queue);
  }

  /** A deactivated user is logged out everywhere: a parked poll answers, then the queues go. */
  dropUser(userId: number): number {
    const queues = [...this.forUser(userId)];
    for (const queue of queues) {
      queue.release();
      this.delete(queue);
    }
    return queues.length;
  }

  /** How many queues live, and how many have a long-poll parked (metrics). */
  stats(): { queues: number; parked: number } {
    let parked = 0;
    for (const queue of this.#byId.values()) if (queue.waiting) parked++;
    return { queues: this.#byId.size, parked };
  }

  /** Every queue goes (their events can no longer be trusted complete); parked polls answer. */
  dropAll(): number {
    const all = [...this.#byId.values()];
    for (const queue of all) this.delete(queue);
    return all.length;
  }

  forUser(userId: number): Iterable<EventQueue> {
    return this.#byUser.get(userId) ?? [];
  }

  publicListeners(realmId: number): Iterable<EventQueue> {
    return this.#publicListeners.get(realmId) ?? [];
  }

  /** Removes queues that have had no connection for their lifespan. */
  collect(now = Date.now()): number {
    let removed = 0;
    for (const queue of [...this.#byId.values()]) {
      if (queue.overflowed || (!queue.waiting && now - queue.lastConnection >= queue.options.lifespanMs)) {
        this.delete(queue);
        removed++;
      }
    }
    return removed;
  }

  startCollector(intervalMs: number): void {
    this.#gcTimer = setInterval(() => this.collect(), intervalMs);
    this.#gcTimer.unref();
  }

  stop(): void {
    this.stopping = true;
    clearInterval(this.#gcTimer);
    for (const queue of this.#byId.values()) queue.release();
  }

  /**
   * Writes every queue to `dir` (atomically) for the next start, one line at a
   * time. An event that many queues hold (a message to a large channel) is written
   * once, and each queue refers to it by number.
   */
  save(dir: string): number {
    mkdirSync(dir, { recursive: true });
    const path = join(dir, QUEUE_FILE);
    const out = new LineWriter(`${path}.tmp`);
    const saved = this.serialize(out);
    out.close();
    renameSync(`${path}.tmp`, path);
    return saved;
  }

  /** Writes every queue as lines (the format of `save`), for a file or the broker. */
  serialize(out: { raw(text: string): void }): number {
    out.raw(JSON.stringify({ version: 2, savedAt: Date.now() }));
    // Values many queues hold (an event, the same options) are written once, as numbered `p` lines.
    const shared = new Map<string, number>();
    const share = (value: unknown): number => {
      const text = JSON.stringify(value);
      let ref = shared.get(text);
      if (ref === undefined) {
        shared.set(text, (ref = shared.size));
        out.raw(`{"p":${text}}`);
      }
      return ref;
    };
    let saved = 0;
    for (const queue of this.#byId.values()) {
      if (queue.overflowed) continue;
      const events = queue.events.map(({ id, ...payload }) => [id, share(payload)]);
      out.raw(JSON.stringify({ q: { id: queue.id, options: share(queue.options), nextId: queue.nextId, newestPrunedId: queue.newestPrunedId, events } }));
      saved++;
    }
    return saved;
  }

  /**
   * Loads what the previous process saved. Each restored queue gets a fresh
   * lifespan from now, so its client has time to come back. Queues holding the
   * same event share its payload.
   */
  load(dir: string): EventQueue[] {
    const path = join(dir, QUEUE_FILE);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      return [];
    }
    rmSync(path, { force: true });
    return this.restore(text);
  }

  /** Creates the queues `serialize` wrote. */
  restore(text: string): EventQueue[] {
    const shared: unknown[] = [];
    const restored: EventQueue[] = [];
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      const entry = JSON.parse(text.slice(start, end)) as SavedLine;
      start = end + 1;
      if ('p' in entry) shared.push(entry.p);
      else if ('queues' in entry) {
        // The single-document form of earlier versions.
        for (const saved of entry.queues) restored.push(this.create(saved.options, saved));
      } else if ('q' in entry) {
        const { events, options, ...rest } = entry.q;
        const saved: SavedQueue = {
          ...rest,
          options: shared[options] as QueueOptions,
          events: events.map(([id, ref]) => ({ ...(shared[ref] as ServerEvent), id }) as QueuedEvent),
        };
        restored.push(this.create(saved.options, saved));
      }
    }
    return restored;
  }
}

type SavedLine =
  | { version: number }
  | { queues: SavedQueue[] }
  | { p: unknown }
  | { q: Omit<SavedQueue, 'events' | 'options'> & { options: number; events: [number, number][] } };

/** Lines written through a buffer, so that no single string holds the whole file. */
class LineWriter {
  readonly #fd: number;
  #buffer: string[] = [];
  #size = 0;
  constructor(path: string) {
    this.#fd = openSync(path, 'w');
  }
  raw(text: string): void {
    this.#buffer.push(text, '\n');
    this.#size += text.length + 1;
    if (this.#size >= 1 << 20) this.#flush();
  }
  #flush(): void {
    writeSync(this.#fd, this.#buffer.join(''));
    this.#buffer = [];
    this.#size = 0;
  }
  close(): void {
    this.#flush();
    closeSync(this.#fd);
  }
}

const QUEUE_FILE = 'event-queues.json';

function addTo<K>(index: Map<K, Set<EventQueue>>, key: K, queue: EventQueue): void {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(queue);
}

function removeFrom<K>(index: Map<K, Set<EventQueue>>, key: K, queue: EventQueue): void {
  const set = index.get(key);
  if (!set) return;
  set.delete(queue);
  if (set.size === 0) index.delete(key);
}
