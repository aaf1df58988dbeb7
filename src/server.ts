// Starting and stopping a Confab server: services, database, migrations,
// bootstrap and the HTTP app. main.ts runs it; tests start one per file.

import pino, { type Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import type { Services } from './services.ts';
import { openDatabase, migrateToLatest } from './db/index.ts';
import { memoryRateLimiter } from './auth/rate-limit.ts';
import { argon2Hasher } from './auth/passwords.ts';
import { buildApp } from './app.ts';
import { bootstrapIfEmpty, type BootstrapResult } from './realm/bootstrap.ts';
import { lockDataDir } from './db/lock.ts';

export interface RunningServer {
  svc: Services;
  app: FastifyInstance;
  bootstrap: BootstrapResult | undefined;
  close(): Promise<void>;
}

export async function createServer(config: Config, log?: Logger): Promise<RunningServer> {
  const logger = log ?? pino({ level: config.logLevel });
  const unlock = config.databaseUrl ? () => {} : lockDataDir(config.dataDir);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrateToLatest(database.db);
  const svc: Services = {
    config,
    db: database.db,
    dbKind: database.kind,
    log: logger,
    events: { publish: () => {} },
    rateLimiter: memoryRateLimiter(),
    passwords: argon2Hasher(config.passwordHash),
  };
  const bootstrap = await bootstrapIfEmpty(svc);
  const app = await buildApp(svc);
  await app.ready();
  let closed = false;
  return {
    svc,
    app,
    bootstrap,
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await database.close();
      unlock();
    },
  };
}
