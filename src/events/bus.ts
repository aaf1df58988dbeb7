// Delivers notices to this process's queues, each in the shape its client wants.
// With a broker (src/cluster/bus.ts) `deliver` runs in every process for what
// any process published; without one, `publish` delivers here at once.

import type { EventPublisher, Notice, ServerEvent } from './types.ts';
import type { QueueRegistry } from './queues.ts';
import type { EventQueue } from './queue.ts';
import { shapeFor, shapeKey } from './shape.ts';

/** Deliveries so far, by every bus of the process: each marks the queues it reached (EventQueue.reachedBy). */
let deliveries = 0;

export class LocalEventBus implements EventPublisher {
  readonly #queues: QueueRegistry;
  readonly #observers: ((notice: Notice) => void)[] = [];
  readonly #onMissed: (() => void)[] = [];

  constructor(queues: QueueRegistry) {
    this.#queues = queues;
  }

  /** Server-side listeners (caches) that must hear of every change. */
  observe(observer: (notice: Notice) => void): void {
    this.#observers.push(observer);
  }

  /** `listener` runs when notices may have been missed (the broker was lost): caches forget everything. */
  onMissed(listener: () => void): void {
    this.#onMissed.push(listener);
  }

  missed(): void {
    for (const listener of this.#onMissed) listener();
  }

  publish(notices: readonly Notice[]): void {
    for (const notice of notices) this.deliver(notice);
  }

  /** Delivers to this process's queues (only to `only`, for queues adopted from another process). */
  deliver(notice: Notice, only?: ReadonlySet<EventQueue>): void {
    if (!only) for (const observer of this.#observers) observer(notice);
    // Each queue once (a user named twice, a public listener among the users): marked with this
    // delivery's number, not kept in a set of thousands of queues.
    const delivery = ++deliveries;
    // Queues of one shape share its events (and so their JSON text, see EventQueue.eventsJson).
    const shapes = new Map<string, ServerEvent[]>();
    const push = (queue: EventQueue) => {
      if (queue.options.realmId !== notice.realmId || queue.reachedBy === delivery || (only && !only.has(queue))) return;
      queue.reachedBy = delivery;
      const key = shapeKey(queue, notice);
      let events = key === undefined ? undefined : shapes.get(key);
      if (events === undefined) {
        events = shapeFor(queue, notice);
        if (key !== undefined) shapes.set(key, events);
      }
      for (const event of events) queue.push(event);
    };
    for (const userId of notice.users) for (const queue of this.#queues.forUser(userId)) push(queue);
    if (notice.publicChannel) for (const queue of this.#queues.publicListeners(notice.realmId)) push(queue);
    // A deactivated user hears nothing more, so their queues would drift from the truth: they go,
    // and a reactivated client registers afresh (its old queue id is BAD_EVENT_QUEUE_ID).
    const { event } = notice;
    if (event.type === 'realm_user' && event.op === 'update' && event.person.is_active === false) this.#queues.dropUser(event.person.user_id);
  }
}
