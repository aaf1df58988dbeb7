// WORKERS=N: the primary process prepares the database once (migrations, the
// first organization), then only forks N server processes and keeps N running.
// The workers share the listening socket (node:cluster hands connections out).
// SIGHUP replaces the workers one at a time (a rolling restart on new code):
// the replacement listens before the old one stops and hands its queues over.
// SIGTERM / SIGINT stop every worker gracefully.

import cluster, { type Worker } from 'node:cluster';
import pino from 'pino';
import type { Config } from '../config.ts';
import { openDatabase, migrateToLatest } from '../db/index.ts';
import { buildServices } from '../server.ts';
import { bootstrapIfEmpty, type BootstrapResult } from '../realm/bootstrap.ts';

/** A worker that dies this soon after its start is restarted only after a pause. */
const CRASH_LOOP_MS = 5000;

export async function prepareDatabase(config: Config): Promise<BootstrapResult | undefined> {
  const log = pino({ level: config.logLevel });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, preparedStatements: config.databasePreparedStatements });
  try {
    await migrateToLatest(database.db);
    const svc = await buildServices(config, database, log);
    const result = await bootstrapIfEmpty(svc);
    await svc.markdown.close();
    return result;
  } finally {
    await database.close();
  }
}

export function runPrimary(config: Config): void {
  const log = pino({ level: config.logLevel });
  const started = new Map<Worker, number>();
  /** Workers being replaced or stopped on purpose: their exit is not a crash. */
  const retiring = new Set<Worker>();
  let stopping = false;

  const fork = (): Worker => {
    const worker = cluster.fork();
    started.set(worker, Date.now());
    return worker;
  };

  cluster.on('exit', (worker, code, signal) => {
    const since = Date.now() - (started.get(worker) ?? 0);
    started.delete(worker);
    if (stopping || retiring.delete(worker)) return;
    log.warn({ pid: worker.process.pid, code, signal }, 'worker died; starting another');
    setTimeout(fork, since < CRASH_LOOP_MS ? CRASH_LOOP_MS : 0);
  });

  const stopWorker = (worker: Worker) =>
    new Promise<void>((resolve) => {
      retiring.add(worker);
      worker.once('exit', () => resolve());
      worker.process.kill('SIGTERM');
    });

  let rolling = false;
  process.on('SIGHUP', async () => {
    if (rolling || stopping) return;
    rolling = true;
    log.info('rolling restart');
    let done = true;
    for (const old of [...started.keys()]) {
      const next = fork();
      // Until it listens, its death is the new code's failure, not a crash to restart.
      retiring.add(next);
      const up = await new Promise<boolean>((resolve) => {
        next.once('listening', () => resolve(true));
        next.once('exit', () => resolve(false));
      });
      retiring.delete(next);
      if (!up) {
        log.error({ pid: next.process.pid }, 'a new worker died before listening: rolling restart stopped, the old workers keep serving');
        done = false;
        break;
      }
      await stopWorker(old);
    }
    rolling = false;
    if (done) log.info('rolling restart done');
  });

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping workers');
    await Promise.all([...started.keys()].map(stopWorker));
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  for (let i = 0; i < config.workers; i++) fork();
  log.info({ workers: config.workers, port: config.port }, 'primary started');
}
