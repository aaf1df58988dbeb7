// What actions hand to the event system: an event and who should receive it.
// The event system (events/) decides which queues get it and in what shape.
// Notices are plain data, so that they can cross processes through a broker.

export interface ServerEvent {
  type: string;
  op?: string;
  [key: string]: unknown;
}

export interface Notice {
  realmId: number;
  event: ServerEvent;
  /** The users whose queues receive the event. */
  users: readonly number[];
  /** Per-user extras merged into that user's copy (a message's `flags`). */
  perUser?: Readonly<Record<number, Record<string, unknown>>>;
  /** A message to a public channel: also for queues following all public channels. */
  publicChannel?: boolean;
  /** Local echo: the sending client's queue gets `local_message_id` (digest 1.1). */
  localEcho?: { queueId: string; localId: string };
  /** Data the shaping needs but clients never see (e.g. a message's raw Markdown). */
  hidden?: Record<string, unknown>;
}

export interface EventPublisher {
  /** With a broker, resolves once the notices reached this process's queues. */
  publish(notices: readonly Notice[]): void | Promise<void>;
}
