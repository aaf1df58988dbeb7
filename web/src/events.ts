// The live connection: /register, then long-polling /events. A collected queue
// (BAD_EVENT_QUEUE_ID) means registering afresh; a network or server failure means
// retrying with growing pauses. Neither touches what the person is typing.

import { api, ApiError } from './api.ts';
import type { Store } from './state.ts';

export type ConnectionState = 'connecting' | 'live' | 'offline';

export const REGISTER_PARAMS = {
  apply_markdown: true,
  client_svcavatar: false,
  slim_presence: true,
  include_subscribers: 'false',
  client_capabilities: {
    notification_settings_null: true,
    bulk_message_deletion: true,
    user_avatar_url_field_optional: false,
    stream_typing_notifications: true,
    user_settings_object: true,
    empty_topic_name: true,
    simplified_presence_events: true,
    archived_channels: true,
  },
};

export interface EventLoopHooks {
  onState(state: ConnectionState, detail?: string): void;
  /** After a fresh /register (first time or after the queue was lost). */
  onRegistered(fresh: boolean): void;
  onLoggedOut(): void;
}

export class EventLoop {
  private store: Store;
  private hooks: EventLoopHooks;
  private stopped = false;
  private abort: AbortController | null = null;
  private failures = 0;

  constructor(store: Store, hooks: EventLoopHooks) {
    this.store = store;
    this.hooks = hooks;
  }

  async start(): Promise<void> {
    await this.register(true);
    void this.poll();
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }

  private async register(first: boolean): Promise<void> {
    const r = await api.post('/register', REGISTER_PARAMS);
    this.store.load(r);
    this.failures = 0;
    this.hooks.onState('live');
    this.hooks.onRegistered(first);
  }

  private async poll(): Promise<void> {
    while (!this.stopped) {
      try {
        this.abort = new AbortController();
        const r = await api.get('/events', { queue_id: this.store.queueId, last_event_id: this.store.lastEventId }, { signal: this.abort.signal });
        if (this.failures > 0) this.hooks.onState('live');
        this.failures = 0;
        this.store.applyEvents(r.events ?? []);
      } catch (err) {
        if (this.stopped) return;
        await this.recover(err);
      }
    }
  }

  private async recover(err: unknown): Promise<void> {
    if (err instanceof ApiError && err.status === 401) {
      this.stopped = true;
      return this.hooks.onLoggedOut();
    }
    if (err instanceof ApiError && err.code === 'BAD_EVENT_QUEUE_ID') {
      try {
        await this.register(false);
        return;
      } catch (again) {
        err = again;
      }
    }
    this.failures++;
    const delay = Math.min(30_000, 500 * 2 ** Math.min(this.failures, 6));
    this.hooks.onState('offline', err instanceof Error ? err.message : String(err));
    await new Promise((r) => setTimeout(r, delay * (0.75 + Math.random() / 2)));
    this.hooks.onState('connecting');
  }

  /** Tries again now (the browser says it is back online). */
  nudge(): void {
    this.abort?.abort();
  }
}
