// Starting and stopping a Confab server: services, database, migrations,
// bootstrap and the HTTP app. main.ts runs it; tests start one per file.

import pino, { type Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import type { Services } from './services.ts';
import { openDatabase, migrateToLatest, type OpenedDatabase } from './db/index.ts';
import { memoryRateLimiter } from './auth/rate-limit.ts';
import { argon2Hasher } from './auth/passwords.ts';
import { buildApp } from './app.ts';
import { domainHooks } from './wiring.ts';
import { bootstrapIfEmpty, type BootstrapResult } from './realm/bootstrap.ts';
import { lockDataDir } from './db/lock.ts';
import { QueueRegistry } from './events/queues.ts';
import { LocalEventBus } from './events/bus.ts';
import { CredentialCache } from './auth/credential-cache.ts';
import { RenderPool } from './markdown/index.ts';
import { startScheduler } from './scheduled_messages/scheduler.ts';
import { localFileStorage, uploadsRoot } from './uploads/storage.ts';
import { SERVER_GENERATION, versionFields } from './version.ts';
import { startJobWorker } from './jobs/worker.ts';
import { JOB_KINDS } from './jobs/kinds.ts';
import { loadImageProxyKey } from './previews/secret.ts';
import { mailerFor } from './email/mailer.ts';
import { Metrics } from './metrics/metrics.ts';
import { startRetention } from './retention/retention.ts';
import { jobBacklog, schedulerBacklog } from './metrics/backlogs.ts';

export interface RunningServer {
  svc: Services;
  app: FastifyInstance;
  bootstrap: BootstrapResult | undefined;
  /** Listens on the configured host, port and backlog; the address. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** `onQuery`: told of every SQL statement (test/support/server.ts counts them). */
export async function createServer(config: Config, log?: Logger, opts: { onQuery?: (sql: string) => void } = {}): Promise<RunningServer> {
  const logger = log ?? pino({ level: config.logLevel });
  const unlock = config.databaseUrl ? () => {} : lockDataDir(config.dataDir);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    onIdleError: (err) => logger.warn({ err }, 'database connection lost'),
    onQuery: opts.onQuery,
  });
  await migrateToLatest(database.db);
  const svc = await buildServices(config, database, logger);
  const bootstrap = await bootstrapIfEmpty(svc);
  const app = await buildApp(svc);
  await app.ready();
  const persistQueues = config.dataDir !== ':memory:';
  if (persistQueues) {
    const restored = svc.queues.load(config.dataDir);
    // Clients learn that the server behind their queue changed (digest 3.1).
    const restart = { type: 'restart', ...versionFields(config.compatNames), server_generation: SERVER_GENERATION, immediate: false };
    for (const queue of restored) if (queue.eventTypes === null || queue.eventTypes.has('restart')) queue.push(restart);
    if (restored.length > 0) logger.info({ queues: restored.length }, 'restored event queues');
  }
  svc.queues.startCollector(config.events.gcIntervalMs);
  const scheduler = startScheduler(svc, config.schedulerIntervalMs);
  const jobs = startJobWorker(svc, JOB_KINDS, config.jobIntervalMs);
  const retention = startRetention(svc, config.retention.intervalMs);
  svc.lifecycle.phase = 'serving';
  let closed = false;
  return {
    svc,
    app,
    bootstrap,
    listen() {
      // A burst of reconnecting clients (after a restart) must fit the accept queue.
      return app.listen({ host: config.host, port: config.port, backlog: config.listenBacklog });
    },
    async close() {
      if (closed) return;
      closed = true;
      // /ready says so at once, so load balancers stop sending work while requests drain.
      svc.lifecycle.phase = 'stopping';
      // Parked long-polls answer now, so that closing does not wait for their heartbeats.
      svc.queues.stop();
      await app.close();
      await scheduler.stop();
      await jobs.stop();
      await retention.stop();
      if (persistQueues) logger.info({ queues: svc.queues.save(config.dataDir) }, 'saved event queues');
      await svc.markdown.close();
      await database.close();
      unlock();
    },
  };
}

/** The services of a process: the server's, or the manage command's. */
export async function buildServices(config: Config, database: OpenedDatabase, log: Logger): Promise<Services> {
  const queues = new QueueRegistry();
  const bus = new LocalEventBus(queues);
  const credentials = new CredentialCache(config.credentialCacheMs);
  bus.observe((notice) => credentials.observe(notice));
  const metrics = new Metrics();
  const markdown = new RenderPool({ onRendered: metrics.observeRender });
  metrics.attach({
    queues: () => queues.stats(),
    renderQueue: () => markdown.queued,
    dbPool: database.poolStats,
    schedulerBacklog: () => schedulerBacklog(database.db, new Date()),
    jobBacklog: () => jobBacklog(database.db, new Date(), Object.keys(JOB_KINDS)),
  });
  return {
    config,
    db: database.db,
    dbKind: database.kind,
    log,
    events: metrics.timedPublisher(bus),
    queues,
    rateLimiter: memoryRateLimiter(),
    credentials,
    markdown,
    passwords: argon2Hasher(config.passwordHash),
    storage: localFileStorage(uploadsRoot(config)),
    imageProxyKey: await loadImageProxyKey(database.db, config.camoKey),
    mailer: mailerFor(config, log),
    metrics,
    lifecycle: { phase: 'starting' },
    // Before anything acts (bootstrap, the manage command): domains answer each other from the start.
    hooks: domainHooks(),
  };
}
