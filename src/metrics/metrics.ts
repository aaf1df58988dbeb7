// The server's Prometheus metrics: one registry per server (tests run several
// in a process), passed through Services. Labels carry only route patterns,
// methods, status codes and fixed words: never an id, a name or any user data.
// Gauges that describe the present (queues, pools, backlogs) are read when
// scraped, from the objects that own them.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EventPublisher, Notice } from '../events/types.ts';

/** What a scrape reads from the running server; each part may be absent (the manage command has none). */
export interface MetricSources {
  queues?: () => { queues: number; parked: number };
  renderQueue?: () => number;
  dbPool?: () => { total: number; idle: number; waiting: number } | undefined;
  /** Scheduled messages and reminders due and not yet delivered. */
  schedulerBacklog?: () => Promise<number>;
  /** The job table by kind (one of ours, or "other") and state. */
  jobBacklog?: () => Promise<{ kind: string; state: string; count: number }[]>;
}

const SECONDS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

function outcomeHistogram(registry: Registry, name: string, help: string): Histogram<'outcome'> {
  return new Histogram({ name, help, labelNames: ['outcome'] as const, buckets: SECONDS_BUCKETS, registers: [registry] });
}

export class Metrics {
  readonly registry = new Registry();
  #sources: MetricSources = {};

  readonly requests = new Counter({
    name: 'confab_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly requestSeconds = new Histogram({
    name: 'confab_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly deliverySeconds = new Histogram({
    name: 'confab_event_delivery_seconds',
    help: "Time from a transaction's commit until its events are in every queue of this process",
    buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1],
    registers: [this.registry],
  });
  readonly eventsPublished = new Counter({
    name: 'confab_events_published_total',
    help: 'Events published after commits',
    registers: [this.registry],
  });
  readonly renderSeconds = outcomeHistogram(
    this.registry,
    'confab_render_duration_seconds',
    'Time to render a message (waiting in the pool included), by outcome',
  );
  readonly transactionSeconds = outcomeHistogram(this.registry, 'confab_db_transaction_duration_seconds', 'Time a transaction held its connection, by outcome');
  readonly retentionDeleted = new Counter({
    name: 'confab_retention_messages_archived_total',
    help: 'Messages removed by the retention policy (archived for the grace period)',
    registers: [this.registry],
  });

  constructor() {
    const sources = () => this.#sources;
    this.#gauge('confab_event_queues', 'Live event queues in this process', () => sources().queues?.().queues);
    this.#gauge('confab_event_parked_polls', 'Long-polls waiting for an event', () => sources().queues?.().parked);
    this.#gauge('confab_render_queue', 'Renders waiting for a worker', () => sources().renderQueue?.());
    this.#gauge('confab_scheduler_backlog', 'Scheduled messages and reminders due and not yet delivered', () => sources().schedulerBacklog?.());
    new Gauge({
      name: 'confab_job_backlog',
      help: 'Jobs in the job table by kind and state (due, waiting to retry, running, failed)',
      labelNames: ['kind', 'state'] as const,
      registers: [this.registry],
      async collect() {
        const rows = await sources().jobBacklog?.();
        if (!rows) return;
        this.reset();
        for (const r of rows) this.set({ kind: r.kind, state: r.state }, r.count);
      },
    });
    new Gauge({
      name: 'confab_db_pool_connections',
      help: 'Database pool connections by state (PostgreSQL only)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const p = sources().dbPool?.();
        if (!p) return;
        this.set({ state: 'total' }, p.total);
        this.set({ state: 'idle' }, p.idle);
        this.set({ state: 'waiting' }, p.waiting);
      },
    });
    collectDefaultMetrics({ register: this.registry, prefix: 'confab_process_' });
  }

  /** A gauge set at each scrape from `read` (left alone when its source is absent). */
  #gauge(name: string, help: string, read: () => number | undefined | Promise<number | undefined>): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        const value = await read();
        if (value !== undefined) this.set(value);
      },
    });
  }

  /** Plugs in what scrapes read, once the objects exist. */
  attach(sources: MetricSources): void {
    this.#sources = { ...this.#sources, ...sources };
  }

  /** Called by transact() for every transaction. */
  observeTransaction = (seconds: number, ok: boolean): void => {
    this.transactionSeconds.observe({ outcome: ok ? 'commit' : 'rollback' }, seconds);
  };

  /** Called by the render pool for every render. */
  observeRender = (seconds: number, ok: boolean): void => {
    this.renderSeconds.observe({ outcome: ok ? 'ok' : 'error' }, seconds);
  };

  /** The publisher, timed: what clients wait for after a commit. */
  /**
   * The publisher with its publishing timed. Everything else of the inner
   * publisher (a broker bus's sync, ping and start) stays reachable, and a
   * publish that resolves later (through a broker) is awaited by its caller.
   */
  timedPublisher<P extends EventPublisher>(inner: P): P {
    const publish = (notices: readonly Notice[]) => {
      const end = this.deliverySeconds.startTimer();
      const done = () => {
        end();
        this.eventsPublished.inc(notices.length);
      };
      try {
        const result = inner.publish(notices);
        if (result instanceof Promise) return result.finally(done);
        done();
        return result;
      } catch (err) {
        done();
        throw err;
      }
    };
    return new Proxy(inner, {
      get(target, prop) {
        if (prop === 'publish') return publish;
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }
}
