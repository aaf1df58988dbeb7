// One client's event queue (spec "Events", digest 1.23 and 3.1): events with
// per-queue increasing ids, pruned as the client acknowledges them, and at most
// one parked long-poll waiting for the next event.

import { randomUUID } from 'node:crypto';
import type { ServerEvent } from './types.ts';
import { ApiError, badRequest } from '../http/errors.ts';

export const CAPABILITIES = [
  'notification_settings_null',
  'bulk_message_deletion',
  'user_avatar_url_field_optional',
  'stream_typing_notifications',
  'user_settings_object',
  'linkifier_url_template',
  'user_list_incomplete',
  'include_deactivated_groups',
  'archived_channels',
  'empty_topic_name',
  'simplified_presence_events',
] as const;

export type Capability = (typeof CAPABILITIES)[number];
export type Capabilities = Record<Capability, boolean>;

export function capabilities(given: Partial<Record<string, unknown>> = {}): Capabilities {
  return Object.fromEntries(CAPABILITIES.map((c) => [c, given[c] === true])) as Capabilities;
}

/** What a client chose at register time; it fixes how every event is filtered and shaped. */
export interface QueueOptions {
  realmId: number;
  userId: number;
  /** null: every type. */
  eventTypes: string[] | null;
  narrow: [string, string][];
  allPublicStreams: boolean;
  applyMarkdown: boolean;
  clientSvcavatar: boolean;
  slimPresence: boolean;
  capabilities: Capabilities;
  clientName: string;
  /** How long the queue lives without a connection. */
  lifespanMs: number;
}

export type QueuedEvent = ServerEvent & { id: number };

export interface SavedQueue {
  id: string;
  options: QueueOptions;
  events: QueuedEvent[];
  nextId: number;
  newestPrunedId: number | null;
}

interface Waiter {
  resolve: (events: QueuedEvent[]) => void;
  heartbeat: NodeJS.Timeout;
}

/**
 * Events a queue keeps for a client that does not come to fetch them. Beyond it
 * the queue is dropped, and the client's next poll gets BAD_EVENT_QUEUE_ID and
 * registers again (as the reference's limit on a queue's length makes it do).
 */
export const MAX_QUEUE_EVENTS = 1000;

export function badQueueId(queueId: string): ApiError {
  return new ApiError('BAD_EVENT_QUEUE_ID', `Bad event queue ID: ${queueId}`, { data: { queue_id: queueId } });
}

export class EventQueue {
  readonly id: string;
  readonly options: QueueOptions;
  readonly eventTypes: Set<string> | null;
  events: QueuedEvent[] = [];
  nextId = 0;
  newestPrunedId: number | null = null;
  /** When a client last had a poll open here (ms); the collector measures idleness from it. */
  lastConnection = Date.now();
  /** More than MAX_QUEUE_EVENTS were waiting: the queue is gone for its client. */
  overflowed = false;
  #waiter: Waiter | undefined;

  constructor(options: QueueOptions, saved?: SavedQueue, idPrefix = '') {
    this.id = saved?.id ?? idPrefix + randomUUID();
    this.options = options;
    this.eventTypes = options.eventTypes ? new Set(options.eventTypes) : null;
    if (saved) {
      this.events = saved.events;
      this.nextId = saved.nextId;
      this.newestPrunedId = saved.newestPrunedId;
    }
  }

  get waiting(): boolean {
    return this.#waiter !== undefined;
  }

  push(event: ServerEvent): QueuedEvent {
    const queued = { ...event, id: this.nextId++ } as QueuedEvent;
    if (this.overflowed) return queued;
    this.events.push(queued);
    if (this.events.length > MAX_QUEUE_EVENTS) {
      this.overflowed = true;
      this.events = [];
      this.release();
      return queued;
    }
    this.#wake();
    return queued;
  }

  /**
   * Drops the events the client has acknowledged (`last_event_id` and older),
   * with Zulip's checks that the id makes sense for this queue.
   */
  acknowledge(lastEventId: number): void {
    if (this.newestPrunedId !== null && lastEventId < this.newestPrunedId) {
      throw badRequest(`An event newer than ${lastEventId} has already been pruned!`);
    }
    let drop = 0;
    while (drop < this.events.length && this.events[drop].id <= lastEventId) drop++;
    const newestPruned = drop > 0 ? this.events[drop - 1].id : this.newestPrunedId;
    // Checked before pruning (the reference prunes first): a refused poll loses no events.
    if (newestPruned !== null && lastEventId !== newestPruned) {
      throw badRequest(`Event ${lastEventId} was not in this queue`);
    }
    if (drop > 0) {
      this.newestPrunedId = newestPruned;
      this.events.splice(0, drop);
    }
  }

  /**
   * Waits for the next event, or sends a heartbeat after `heartbeatMs`. A newer
   * poll ends this one with what the queue holds.
   */
  wait(heartbeatMs: number): Promise<QueuedEvent[]> {
    this.#finishWaiter();
    this.lastConnection = Date.now();
    return new Promise((resolve) => {
      const heartbeat = setTimeout(() => this.push({ type: 'heartbeat' }), heartbeatMs);
      this.#waiter = { resolve, heartbeat };
    });
  }

  /** The client went away while parked. */
  cancelWait(): void {
    if (!this.#waiter) return;
    clearTimeout(this.#waiter.heartbeat);
    this.#waiter = undefined;
    this.lastConnection = Date.now();
  }

  #wake(): void {
    if (this.#waiter) this.#finishWaiter();
  }

  #finishWaiter(): void {
    const waiter = this.#waiter;
    if (!waiter) return;
    this.#waiter = undefined;
    clearTimeout(waiter.heartbeat);
    this.lastConnection = Date.now();
    waiter.resolve([...this.events]);
  }

  /** Ends a parked poll at shutdown: it answers with what is there. */
  release(): void {
    this.#finishWaiter();
  }

  save(): SavedQueue {
    return { id: this.id, options: this.options, events: this.events, nextId: this.nextId, newestPrunedId: this.newestPrunedId };
  }
}
