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

/** What a parked poll does when it ends: answers with what the queue holds. */
export type Answer = (events: QueuedEvent[]) => void;

/** A parked poll (opaque to callers: `cancelWait` takes it back). */
export interface Waiter {
  readonly answer: Answer;
  /** When its heartbeat is due (a step of `heartbeats`). */
  readonly heartbeatAt: number;
}

/**
 * Heartbeat delays are whole multiples of this (jitter included): Node keeps one timer list per
 * distinct delay, and 10,000 parked polls with delays of their own cost a heap operation each.
 */
const HEARTBEAT_STEP_MS = 100;

/** A parked poll's heartbeat delay: `heartbeatMs` plus up to `jitterMs`, in steps. */
export function heartbeatDelay(heartbeatMs: number, jitterMs: number): number {
  return heartbeatMs + Math.round((Math.random() * jitterMs) / HEARTBEAT_STEP_MS) * HEARTBEAT_STEP_MS;
}

/**
 * Parked polls' heartbeats, grouped by the step they are due at (never before their delay):
 * one timer per step for every poll due then, so that parking and answering a poll add to and
 * take from a set rather than make and clear a timer each. A step's timer goes with its last poll.
 */
export class Heartbeats {
  readonly #due = new Map<number, { queues: Set<EventQueue>; timer: NodeJS.Timeout }>();

  /** The step at which `queue` gets a heartbeat, `delayMs` from now or a little later. */
  add(queue: EventQueue, delayMs: number): number {
    const now = Date.now();
    const at = Math.ceil((now + delayMs) / HEARTBEAT_STEP_MS) * HEARTBEAT_STEP_MS;
    let step = this.#due.get(at);
    if (!step) {
      step = { queues: new Set(), timer: setTimeout(() => this.#beat(at), at - now) };
      this.#due.set(at, step);
    }
    step.queues.add(queue);
    return at;
  }

  remove(queue: EventQueue, at: number): void {
    const step = this.#due.get(at);
    if (!step?.queues.delete(queue) || step.queues.size > 0) return;
    clearTimeout(step.timer);
    this.#due.delete(at);
  }

  #beat(at: number): void {
    const step = this.#due.get(at);
    this.#due.delete(at);
    for (const queue of step?.queues ?? []) queue.push({ type: 'heartbeat' });
  }
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
  /** The bus's last delivery that reached this queue (see LocalEventBus.deliver). */
  reachedBy = 0;
  /** The options' part of its shape key, made once by shape.ts (a field: read for every notice). */
  optionsShapeKey: string | undefined;
  /**
   * The newest event and the shaped event it copies (often shared by many queues): its JSON is
   * made once. Two fields, not an object: one more object per queue and event outlives a fan-out.
   */
  #newestQueued: QueuedEvent | undefined;
  #newestShaped: ServerEvent | undefined;
  readonly #heartbeats: Heartbeats;

  /** `heartbeats`: the registry's, shared by its queues (one timer per step for all of them). */
  constructor(options: QueueOptions, heartbeats: Heartbeats, saved?: SavedQueue, idPrefix = '') {
    this.#heartbeats = heartbeats;
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
    this.#newestQueued = queued;
    this.#newestShaped = event;
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
   * Parks a poll: `answer` runs (synchronously, so it must not throw) at the next
   * event, with a heartbeat after `heartbeatMs`, when a newer poll parks, or when
   * the queue goes.
   */
  park(heartbeatMs: number, answer: Answer): Waiter {
    this.#finishWaiter();
    this.lastConnection = Date.now();
    this.#waiter = { answer, heartbeatAt: this.#heartbeats.add(this, heartbeatMs) };
    return this.#waiter;
  }

  /** `park` as a promise (polls forwarded from another process). */
  wait(heartbeatMs: number): Promise<QueuedEvent[]> {
    return new Promise((resolve) => this.park(heartbeatMs, resolve));
  }

  /** The client went away while parked (on `waiter`, if given: not on a newer poll). */
  cancelWait(waiter?: Waiter): void {
    if (!this.#waiter || (waiter && waiter !== this.#waiter)) return;
    this.#heartbeats.remove(this, this.#waiter.heartbeatAt);
    this.#waiter = undefined;
    this.lastConnection = Date.now();
  }

  /**
   * `events` as a JSON array, the same text as JSON.stringify's: the newest event's
   * text is its shaped event's, made once for every queue that holds that shape; a
   * woken poll's array (that event alone) is one text for every queue at the same id.
   */
  eventsJson(events: readonly QueuedEvent[]): string {
    const newest = this.#newestQueued;
    const shaped = this.#newestShaped!;
    if (events.length === 1 && newest !== undefined && newest === events[0]) {
      const json = shapedJson(shaped, newest.id);
      return (json.array ||= `[${json.event}]`);
    }
    let text = '[';
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      if (i > 0) text += ',';
      text += newest !== undefined && newest === event ? shapedJson(shaped, event.id).event : JSON.stringify(event);
    }
    return `${text}]`;
  }

  #wake(): void {
    if (this.#waiter) this.#finishWaiter();
  }

  #finishWaiter(): void {
    const waiter = this.#waiter;
    if (!waiter) return;
    this.#waiter = undefined;
    this.#heartbeats.remove(this, waiter.heartbeatAt);
    this.lastConnection = Date.now();
    waiter.answer([...this.events]);
  }

  /** Ends a parked poll at shutdown: it answers with what is there. */
  release(): void {
    this.#finishWaiter();
  }

  save(): SavedQueue {
    return { id: this.id, options: this.options, events: this.events, nextId: this.nextId, newestPrunedId: this.newestPrunedId };
  }
}

/** A shaped event's text, and the last id it was asked with: its event and its array alone ('' until asked). */
interface ShapedJson {
  readonly text: string;
  id: number;
  event: string;
  array: string;
}

const shapedTexts = new WeakMap<ServerEvent, ShapedJson>();

/**
 * JSON of `{ ...shaped, id }` (`event`) and of `[{ ...shaped, id }]` (`array`): the shaped
 * event's text is made once; at a fan-out most queues ask with the same id, and share both.
 */
function shapedJson(shaped: ServerEvent, id: number): ShapedJson {
  let json = shapedTexts.get(shaped);
  if (json === undefined) {
    const text = JSON.stringify(shaped);
    json = { text, id: Number.NaN, event: '', array: '' };
    shapedTexts.set(shaped, json);
  }
  if (json.id !== id) {
    json.id = id;
    json.event = withId(shaped, json.text, id);
    json.array = '';
  }
  return json;
}

/** JSON of `{ ...shaped, id }` from the shaped event's `text`. */
function withId(shaped: ServerEvent, text: string, id: number): string {
  // An event with an id of its own keeps it in place: JSON.stringify says where.
  if (text === '{}' || Object.hasOwn(shaped, 'id')) return JSON.stringify({ ...shaped, id });
  return `${text.slice(0, -1)},"id":${id}}`;
}
