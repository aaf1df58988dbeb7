// Events across processes: every committed notice is published on one broker
// channel, and every process (this one included) delivers what it receives to
// the queues it holds. Redis orders the messages of a channel, so all processes
// see every notice in the same order, and an action answers only once its own
// notices are in this process's queues.
//
// Nothing is ever silently missed: when this process loses its subscription it
// drops every queue it holds (clients get BAD_EVENT_QUEUE_ID and register again),
// and notices whose publish failed are announced as a gap once the broker is
// back, so that every process drops the queues that should have had them.

import type { Logger } from 'pino';
import type { EventPublisher, Notice } from '../events/types.ts';
import type { LocalEventBus } from '../events/bus.ts';
import type { QueueRegistry } from '../events/queues.ts';
import type { EventQueue } from '../events/queue.ts';
import { ORPHANS, type Broker } from './broker.ts';

/** What travels on the events channel. */
export type BusMessage =
  | { o: string; s: number; n: readonly Notice[] }
  /** A marker from `sync` (or a handover) that only orders the stream. */
  | { o: string; s: number; mark: true; handover?: { id: string; to: string } }
  /** Notices that were committed but could not be published. */
  | { o: string; s: number; gap: { realmId: number; users: number[]; publicChannel: boolean }[] };

/** How long an action waits to see its own notices come back before it answers anyway. */
const ECHO_WAIT_MS = 2000;
/** How long an adopter holds notices for queues that are on their way. */
const HOLD_MS = 60_000;

export class BrokerEventBus implements EventPublisher {
  readonly #broker: Broker;
  readonly #local: LocalEventBus;
  readonly #queues: QueueRegistry;
  readonly #log: Logger;
  readonly #echo = new Map<number, () => void>();
  #seq = 0;
  #lost: Notice[] = [];
  /** Notices seen since a handover marker addressed here, until its queues arrive. */
  readonly #held = new Map<string, Notice[]>();
  readonly #markers = new Map<string, () => void>();
  #connected = true;

  constructor(broker: Broker, local: LocalEventBus, queues: QueueRegistry, log: Logger) {
    this.#broker = broker;
    this.#local = local;
    this.#queues = queues;
    this.#log = log;
  }

  get channel(): string {
    return this.#broker.channel('events');
  }

  async start(): Promise<void> {
    await this.#broker.subscribe(this.channel, (m: BusMessage) => this.#receive(m));
    this.#broker.sub.on('close', () => this.#disconnected());
    this.#broker.sub.on('ready', () => void this.#reconnected());
    this.#broker.cmd.on('ready', () => void this.#announceLost());
  }

  /** Publishes, then waits (briefly) until this process has delivered the notices itself. */
  publish(notices: readonly Notice[]): Promise<void> {
    const s = ++this.#seq;
    const delivered = this.#awaitEcho(s);
    this.#publishEvents({ o: this.#broker.procId, s, n: notices }).catch((err) => {
      this.#log.warn({ err, notices: notices.length }, 'events could not be published; their queues will be dropped');
      this.#lost.push(...notices);
      this.#echo.get(s)?.();
    });
    return delivered;
  }

  /** Resolves once everything published before this call (by any process) is delivered here. */
  sync(): Promise<void> {
    const s = ++this.#seq;
    const seen = this.#awaitEcho(s);
    this.#broker.publish(this.channel, { o: this.#broker.procId, s, mark: true }).catch(() => this.#echo.get(s)?.());
    return seen;
  }

  /**
   * A handover marker: returns once it came back (every notice published before it is in this
   * process's queues). The adopter holds what follows it until the queues arrive.
   */
  async handoverMark(id: string, to: string): Promise<void> {
    const back = new Promise<void>((resolve) => this.#markers.set(id, resolve));
    const timeout = new Promise<void>((_, reject) => setTimeout(() => reject(new Error('handover marker did not come back')), ECHO_WAIT_MS).unref());
    await this.#broker.publish(this.channel, { o: this.#broker.procId, s: ++this.#seq, mark: true, handover: { id, to } });
    try {
      await Promise.race([back, timeout]);
    } finally {
      this.#markers.delete(id);
    }
  }

  /** Delivers to adopted queues what was held since their handover marker. */
  release(id: string, adopted: Set<EventQueue>): void {
    const held = this.#held.get(id) ?? [];
    this.#held.delete(id);
    for (const notice of held) this.#local.deliver(notice, adopted);
  }

  /**
   * Publishes events (or a gap). Queues left in the broker by processes that stopped with none
   * live to adopt them would miss these, so they go in the same transaction: their clients get
   * BAD_EVENT_QUEUE_ID and register again instead of reading a gap.
   */
  async #publishEvents(message: BusMessage): Promise<void> {
    const results = await this.#broker.cmd.multi().del(this.#broker.key(ORPHANS)).publish(this.channel, JSON.stringify(message)).exec();
    const failed = results?.find(([err]) => err);
    if (!results || failed) throw failed?.[0] ?? new Error('the events transaction was discarded');
  }

  #awaitEcho(s: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ECHO_WAIT_MS);
      const echo = this.#echo;
      function done() {
        clearTimeout(timer);
        echo.delete(s);
        resolve();
      }
      this.#echo.set(s, done);
    });
  }

  #receive(m: BusMessage): void {
    if ('n' in m) {
      for (const notice of m.n) this.#local.deliver(notice);
      for (const held of this.#held.values()) held.push(...m.n);
    } else if ('gap' in m) {
      // A lost notice may have been a change to credentials (whose audience is empty).
      this.#local.missed();
      for (const g of m.gap) this.#dropAudience(g.realmId, g.users, g.publicChannel);
    } else if (m.handover) {
      if (m.handover.to === this.#broker.procId) {
        const id = m.handover.id;
        this.#held.set(id, []);
        // A handover that never completes must not hold notices for ever.
        setTimeout(() => this.#held.delete(id), HOLD_MS).unref();
      }
      this.#markers.get(m.handover.id)?.();
    }
    if (m.o === this.#broker.procId) this.#echo.get(m.s)?.();
  }

  #dropAudience(realmId: number, users: readonly number[], publicChannel: boolean): void {
    for (const userId of users) this.#queues.dropUser(userId);
    if (publicChannel) for (const queue of [...this.#queues.publicListeners(realmId)]) this.#queues.delete(queue);
  }

  #disconnected(): void {
    if (!this.#connected || this.#broker.closed) return;
    this.#connected = false;
    this.#local.missed();
    const dropped = this.#queues.dropAll();
    this.#log.warn({ dropped }, 'lost the broker: event queues dropped, clients will register again');
  }

  async #reconnected(): Promise<void> {
    if (this.#connected) return;
    // Subscribed again before anything else, then queues registered meanwhile (they may have
    // missed events) go too.
    await this.#broker.sub.subscribe(this.channel).catch(() => {});
    this.#connected = true;
    this.#local.missed();
    this.#queues.dropAll();
    await this.#announceLost();
  }

  async #announceLost(): Promise<void> {
    const lost = this.#lost;
    this.#lost = [];
    if (lost.length === 0) return;
    const gap = lost.map((n) => ({ realmId: n.realmId, users: [...n.users], publicChannel: n.publicChannel === true }));
    try {
      await this.#publishEvents({ o: this.#broker.procId, s: ++this.#seq, gap });
    } catch (err) {
      this.#lost.push(...lost);
      this.#log.warn({ err }, 'could not announce lost events yet');
    }
  }
}
