// What actions hand to the event system: an event and who should receive it.
// The event system (events/) decides which queues get it and in what shape.

export interface ServerEvent {
  type: string;
  op?: string;
  [key: string]: unknown;
}

export interface Notice {
  realmId: number;
  event: ServerEvent;
  /** Recipients: user ids, or per-user data (message flags) keyed by user id. */
  users: readonly number[];
  /** Per-user extras merged into that user's copy (e.g. message `flags`). */
  perUser?: ReadonlyMap<number, Record<string, unknown>>;
}

export interface EventPublisher {
  publish(notices: readonly Notice[]): void;
}
