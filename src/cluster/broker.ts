// This process's link to the broker (Redis, BROKER_URL): one connection for
// commands and publishing, one for subscriptions. Every channel and key is under
// BROKER_PREFIX, so that several deployments (or test servers) share one Redis.
//
// Requests to another process are a PUBLISH on that process's channel: Redis
// answers with how many subscribers received it, so a process that died (its
// connection closed) is known at once, without a liveness protocol of our own.

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export type Handler = (message: any) => void;

/** The key of queues whose process stopped when no live one could adopt them (queues.ts). */
export const ORPHANS = 'orphans';

export class Broker {
  /** This process, in the broker's channel names and in queue ids. */
  readonly procId = randomBytes(6).toString('hex');
  readonly prefix: string;
  readonly cmd: Redis;
  readonly sub: Redis;
  readonly #handlers = new Map<string, Handler>();
  readonly #replies = new Map<number, (reply: any) => void>();
  #rid = 0;
  #closed = false;

  private constructor(url: string, prefix: string, log: Logger) {
    this.prefix = prefix;
    // Commands fail at once while disconnected (no offline queue): an action must not wait for
    // the broker, and a publish that failed is handled as a gap (see BrokerEventBus).
    const options = { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: (n: number) => Math.min(n * 100, 2000) };
    this.cmd = new Redis(url, { ...options, lazyConnect: true });
    this.sub = new Redis(url, { ...options, lazyConnect: true, autoResubscribe: true });
    for (const conn of [this.cmd, this.sub]) conn.on('error', (err) => log.debug({ err }, 'broker connection error'));
    this.sub.on('messageBuffer', (channel: Buffer, message: Buffer) => this.#dispatch(channel.toString(), message.toString()));
  }

  static async connect(url: string, prefix: string, log: Logger): Promise<Broker> {
    const broker = new Broker(url, prefix, log);
    await Promise.all([broker.cmd.connect(), broker.sub.connect()]);
    await broker.subscribe(broker.channel(`reply:${broker.procId}`), (reply) => broker.#replies.get(reply.rid)?.(reply));
    return broker;
  }

  channel(name: string): string {
    return `${this.prefix}:${name}`;
  }

  key(name: string): string {
    return `${this.prefix}:${name}`;
  }

  async subscribe(channel: string, handler: Handler): Promise<void> {
    this.#handlers.set(channel, handler);
    await this.sub.subscribe(channel);
  }

  async unsubscribe(channel: string): Promise<void> {
    this.#handlers.delete(channel);
    await this.sub.unsubscribe(channel);
  }

  /** How many processes received it. */
  publish(channel: string, message: unknown): Promise<number> {
    return this.cmd.publish(channel, JSON.stringify(message));
  }

  /**
   * Publishes `message` with a reply address and waits for the first reply.
   * `undefined` when nobody listens on `channel` or nobody answered in time.
   */
  async request(channel: string, message: Record<string, unknown>, timeoutMs: number, onSent?: (rid: number) => void): Promise<any> {
    const rid = ++this.#rid;
    const reply = new Promise<any>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      this.#replies.set(rid, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
    });
    try {
      const receivers = await this.publish(channel, { ...message, rid, replyTo: this.procId });
      if (receivers === 0) return undefined;
      onSent?.(rid);
      return await reply;
    } finally {
      this.#replies.delete(rid);
    }
  }

  /** Answers a request received through `subscribe`. */
  reply(request: { rid: number; replyTo: string }, body: Record<string, unknown>): Promise<number> {
    return this.publish(this.channel(`reply:${request.replyTo}`), { ...body, rid: request.rid });
  }

  get closed(): boolean {
    return this.#closed;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.sub.disconnect();
    await this.cmd.quit().catch(() => this.cmd.disconnect());
  }

  #dispatch(channel: string, text: string): void {
    const handler = this.#handlers.get(channel);
    if (!handler) return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    handler(message);
  }
}
