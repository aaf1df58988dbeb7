// Queues are owned by the process that registered them (the measurement in
// docs/DECISIONS.md chose this over queues kept in the broker). A queue id starts
// with its owner's id; a poll for a queue held elsewhere is published on the
// owner's channel and answered on this process's reply channel. Redis tells at
// once when nobody listens there (the owner died): BAD_EVENT_QUEUE_ID.
//
// At a graceful stop a process hands its queues to a live one: a marker on the
// events channel cuts the ordered stream in two, the queues as they stand at the
// marker travel through a broker key, and the adopter applies what it received
// after the marker, then answers on the stopped process's channel too.

import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { QueueRegistry } from '../events/queues.ts';
import type { EventQueue, QueuedEvent } from '../events/queue.ts';
import { badQueueId } from '../events/queue.ts';
import { pollQueue, type PollParams, type RemoteQueues } from '../events/fetch.ts';
import { ApiError } from '../http/errors.ts';
import { ORPHANS, type Broker } from './broker.ts';
import type { BrokerEventBus } from './bus.ts';

interface Request {
  op: 'get' | 'cancel' | 'delete' | 'adopt';
  rid: number;
  replyTo: string;
  userId?: number;
  poll?: PollParams;
  /** cancel: the rid of the poll to end. */
  of?: number;
  /** adopt: the handover and the process ids whose queues come with it. */
  handover?: string;
  aliases?: string[];
}

/** How long the broker keeps queues no live process could take at a stop. */
const ORPHAN_TTL_SECONDS = 7 * 24 * 3600;

export class ClusterQueues implements RemoteQueues {
  readonly #broker: Broker;
  readonly #bus: BrokerEventBus;
  readonly #queues: QueueRegistry;
  readonly #config: Config;
  readonly #log: Logger;
  /** The process ids this process answers for: its own, and those whose queues it adopted. */
  readonly #aliases = new Set<string>();
  readonly #polls = new Map<string, AbortController>();
  #adopted: (queues: EventQueue[]) => void = () => {};
  /** Set when this process starts handing its queues over: it adopts none any more. */
  #stopping = false;

  constructor(broker: Broker, bus: BrokerEventBus, queues: QueueRegistry, config: Config, log: Logger) {
    this.#broker = broker;
    this.#bus = bus;
    this.#queues = queues;
    this.#config = config;
    this.#log = log;
  }

  static idPrefix(broker: Broker): string {
    return `${broker.procId}:`;
  }

  async start(adopted: (queues: EventQueue[]) => void): Promise<void> {
    this.#adopted = adopted;
    await this.#answerFor([this.#broker.procId]);
    await this.#broker.subscribe(this.#broker.channel(`live:${this.#broker.procId}`), () => {});
    // Queues left by processes that stopped when no other was running.
    for (;;) {
      const orphan = await this.#broker.cmd.lpop(this.#broker.key(ORPHANS));
      if (!orphan) break;
      const { aliases, queues } = JSON.parse(orphan) as { aliases: string[]; queues: string };
      const restored = this.#queues.restore(queues);
      await this.#answerFor(aliases);
      this.#adopted(restored);
    }
  }

  async getEvents(userId: number, poll: PollParams, signal: AbortSignal): Promise<QueuedEvent[]> {
    const owner = ownerOf(poll.queue_id);
    if (!owner) throw badQueueId(poll.queue_id);
    const { heartbeatMs, heartbeatJitterMs } = this.#config.events;
    const timeoutMs = (poll.dont_block ? 0 : heartbeatMs + heartbeatJitterMs) + 10_000;
    const channel = this.#broker.channel(`proc:${owner}`);
    // The client may leave before the request is published (or before this call): the
    // cancel then follows the request, else the owner's poll stays parked until a heartbeat.
    let sent: number | undefined;
    const cancel = () => {
      if (sent !== undefined && signal.aborted) this.#broker.publish(channel, { op: 'cancel', of: sent, replyTo: this.#broker.procId, rid: 0 }).catch(() => {});
    };
    signal.addEventListener('abort', cancel, { once: true });
    try {
      const request = { op: 'get', userId, poll };
      const onSent = (rid: number) => {
        sent = rid;
        cancel();
      };
      const reply = await this.#broker.request(channel, request, timeoutMs, onSent).catch(() => undefined);
      return unwrap(reply, poll.queue_id).events as QueuedEvent[];
    } finally {
      signal.removeEventListener('abort', cancel);
    }
  }

  async delete(userId: number, queueId: string): Promise<void> {
    const owner = ownerOf(queueId);
    if (!owner) throw badQueueId(queueId);
    const reply = await this.#broker.request(this.#broker.channel(`proc:${owner}`), { op: 'delete', userId, queueId }, 10_000).catch(() => undefined);
    unwrap(reply, queueId);
  }

  /**
   * Graceful stop: the queues go to a live process, or, with none, into the broker for the next
   * one to start. Parked polls have already answered (the registry is stopping).
   */
  async handOver(): Promise<void> {
    // Processes stopping together (SIGTERM to every worker) must not hand queues to each other.
    this.#stopping = true;
    await this.#broker.unsubscribe(this.#broker.channel(`live:${this.#broker.procId}`)).catch(() => {});
    if (this.#queues.size === 0) return;
    const live = (await this.#broker.cmd.pubsub('CHANNELS', this.#broker.channel('live:*'))) as string[];
    const others = live.map((c) => c.slice(this.#broker.channel('live:').length)).filter((id) => id !== this.#broker.procId);
    const aliases = [...this.#aliases];
    for (const to of others) {
      const id = randomBytes(8).toString('hex');
      try {
        await this.#bus.handoverMark(id, to);
        await this.#broker.cmd.set(this.#broker.key(`handover:${id}`), this.#serialize(), 'EX', 120);
        const reply = await this.#broker.request(this.#broker.channel(`proc:${to}`), { op: 'adopt', handover: id, aliases }, 15_000);
        if (reply?.ok) {
          this.#log.info({ queues: this.#queues.size, to }, 'handed event queues over');
          return;
        }
      } catch (err) {
        this.#log.warn({ err, to }, 'handover failed; trying another process');
      }
    }
    await this.#broker.cmd.rpush(this.#broker.key(ORPHANS), JSON.stringify({ aliases, queues: this.#serialize() }));
    await this.#broker.cmd.expire(this.#broker.key(ORPHANS), ORPHAN_TTL_SECONDS);
    this.#log.info({ queues: this.#queues.size }, 'no live process: event queues left in the broker for the next one');
  }

  #serialize(): string {
    const lines: string[] = [];
    this.#queues.serialize({ raw: (text) => lines.push(text) });
    return lines.join('\n');
  }

  async #answerFor(ids: string[]): Promise<void> {
    for (const id of ids) {
      if (this.#aliases.has(id)) continue;
      this.#aliases.add(id);
      await this.#broker.subscribe(this.#broker.channel(`proc:${id}`), (m: Request) => void this.#serve(m));
    }
  }

  async #serve(m: Request): Promise<void> {
    const key = `${m.replyTo}:${m.op === 'cancel' ? m.of : m.rid}`;
    if (m.op === 'cancel') {
      this.#polls.get(key)?.abort();
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = await this.#perform(m, key);
    } catch (err) {
      if (!(err instanceof ApiError)) this.#log.error({ err }, 'forwarded queue request failed');
      const e = err instanceof ApiError ? err : new ApiError('BAD_EVENT_QUEUE_ID', 'Bad event queue ID');
      body = { error: { code: e.code, msg: e.message, data: e.data } };
    }
    await this.#broker.reply(m, body).catch((err) => this.#log.warn({ err }, 'could not answer a forwarded queue request'));
  }

  async #perform(m: Request, key: string): Promise<Record<string, unknown>> {
    if (m.op === 'adopt') return this.#adopt(m.handover!, m.aliases!);
    if (m.op === 'delete') {
      const queueId = (m as unknown as { queueId: string }).queueId;
      this.#queues.delete(this.#queues.get(queueId, m.userId!));
      return {};
    }
    const abort = new AbortController();
    this.#polls.set(key, abort);
    try {
      return { events: await pollQueue({ queues: this.#queues, config: this.#config }, m.userId!, m.poll!, abort.signal) };
    } finally {
      this.#polls.delete(key);
    }
  }

  async #adopt(id: string, aliases: string[]): Promise<Record<string, unknown>> {
    if (this.#stopping) throw new ApiError('BAD_REQUEST', 'stopping');
    const text = await this.#broker.cmd.getdel(this.#broker.key(`handover:${id}`));
    if (text === null) throw new ApiError('BAD_REQUEST', 'handover not found');
    // Refused, the stopping process tries another or leaves its queues in the broker.
    if (this.#stopping) throw new ApiError('BAD_REQUEST', 'stopping');
    const adopted = this.#queues.restore(text);
    this.#bus.release(id, new Set(adopted));
    this.#adopted(adopted);
    await this.#answerFor(aliases);
    return { ok: true };
  }
}

function ownerOf(queueId: string): string | undefined {
  const colon = queueId.indexOf(':');
  return colon > 0 ? queueId.slice(0, colon) : undefined;
}

/** A forwarded request's answer; no answer means the owner is gone. */
function unwrap(reply: any, queueId: string): Record<string, unknown> {
  if (!reply) throw badQueueId(queueId);
  if (reply.error) throw new ApiError(reply.error.code, reply.error.msg, { data: reply.error.data });
  return reply;
}
