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
import type { EventQueue } from './events/queue.ts';
import { LocalEventBus } from './events/bus.ts';
import { CredentialCache } from './auth/credential-cache.ts';
import { ViewerCache } from './channels/viewer-cache.ts';
import { LinkifierCache } from './linkifiers/cache.ts';
import { UserListCache } from './users/list-cache.ts';
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
import { startSoftDeactivation } from './messages/soft-deactivation.ts';
import { jobBacklog, schedulerBacklog } from './metrics/backlogs.ts';
import { clusterServices, connectBroker, queueIdPrefix, type Broker, type Cluster } from './cluster/index.ts';
import type { RestartEvent } from './events/types.ts';

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
    preparedStatements: config.databasePreparedStatements,
    onIdleError: (err) => logger.warn({ err }, 'database connection lost'),
    onQuery: opts.onQuery,
  });
  await migrateToLatest(database.db);
  const broker = config.brokerUrl ? await connectBroker(config, logger) : undefined;
  const { svc, cluster } = await buildServicesWith(config, database, logger, broker);
  const bootstrap = await bootstrapIfEmpty(svc);
  const app = await buildApp(svc);
  await app.ready();
  // With a broker, queues are handed to another process at a stop instead (src/cluster/queues.ts).
  const persistQueues = config.dataDir !== ':memory:' && !cluster;
  const announceRestart = (restored: EventQueue[]) => {
    // Clients learn that the server behind their queue changed (digest 3.1).
    const restart: RestartEvent = { type: 'restart', ...versionFields(config.compatNames), server_generation: SERVER_GENERATION };
    for (const queue of restored) {
      // A queue that moved twice with nothing in between (handed on by a process that was itself
      // stopping) needs one notice, of the server that holds it now: the last one is brought up to date.
      const last = queue.events.at(-1);
      if (last?.type === 'restart') Object.assign(last, restart);
      else if (queue.eventTypes === null || queue.eventTypes.has('restart')) queue.push(restart);
    }
    if (restored.length > 0) logger.info({ queues: restored.length }, 'restored event queues');
  };
  if (persistQueues) announceRestart(svc.queues.load(config.dataDir));
  await cluster?.start(announceRestart);
  svc.queues.startCollector(config.events.gcIntervalMs);
  const scheduler = startScheduler(svc, config.schedulerIntervalMs);
  const jobs = startJobWorker(svc, JOB_KINDS, config.jobIntervalMs);
  const retention = startRetention(svc, config.retention.intervalMs);
  const softDeactivation = startSoftDeactivation(svc);
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
      await softDeactivation?.stop();
      await cluster?.stop();
      if (persistQueues) logger.info({ queues: svc.queues.save(config.dataDir) }, 'saved event queues');
      await svc.markdown.close();
      await database.close();
      unlock();
    },
  };
}

/** The services of a process: the server's, or the manage command's. */
export async function buildServices(config: Config, database: OpenedDatabase, log: Logger): Promise<Services> {
  return (await buildServicesWith(config, database, log, undefined)).svc;
}

/**
 * The manage command's services. With a broker its notices go through it like a server's, so
 * that every server process's clients and credential caches hear of an operator's change at once;
 * it holds no queues and answers for none.
 */
export async function buildCommandServices(config: Config, database: OpenedDatabase, log: Logger): Promise<{ svc: Services; close(): Promise<void> }> {
  const broker = config.brokerUrl ? await connectBroker(config, log) : undefined;
  const { svc, cluster } = await buildServicesWith(config, database, log, broker);
  await cluster?.bus.start();
  return { svc, close: async () => await broker?.close() };
}

/** With a broker, events, remote queues and rate limits go through it. */
async function buildServicesWith(
  config: Config,
  database: OpenedDatabase,
  log: Logger,
  broker: Broker | undefined,
): Promise<{ svc: Services; cluster?: Cluster }> {
  const queues = new QueueRegistry(queueIdPrefix(broker));
  const local = new LocalEventBus(queues);
  const credentials = new CredentialCache(config.credentialCacheMs);
  const viewers = new ViewerCache(config.credentialCacheMs);
  const linkifiers = new LinkifierCache(config.credentialCacheMs);
  const userLists = new UserListCache(config.credentialCacheMs);
  local.observe((notice) => {
    credentials.observe(notice);
    viewers.observe(notice);
    linkifiers.observe(notice);
    userLists.observe(notice);
  });
  local.onMissed(() => {
    credentials.clear();
    viewers.clear();
    linkifiers.clear();
    userLists.clear();
  });
  const cluster = broker ? clusterServices(broker, local, queues, config, log) : undefined;
  const metrics = new Metrics();
  const markdown = new RenderPool({ onRendered: metrics.observeRender });
  metrics.attach({
    queues: () => queues.stats(),
    renderQueue: () => markdown.queued,
    dbPool: database.poolStats,
    schedulerBacklog: () => schedulerBacklog(database.db, new Date()),
    jobBacklog: () => jobBacklog(database.db, new Date(), Object.keys(JOB_KINDS)),
  });
  const svc: Services = {
    config,
    db: database.db,
    dbKind: database.kind,
    log,
    events: metrics.timedPublisher(cluster?.bus ?? local),
    queues,
    remoteQueues: cluster?.queues,
    rateLimiter: cluster?.rateLimiter ?? memoryRateLimiter(),
    credentials,
    viewers,
    linkifiers,
    userLists,
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
  return { svc, cluster };
}
