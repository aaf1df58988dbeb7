// What every benchmark starts from: a server on a database of its own, dropped
// afterwards (a PGlite directory, or a fresh database on the DATABASE_URL server;
// never that server's own tables).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { freshPostgresDatabase } from '../test/support/postgres.ts';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';

export async function benchServer(name: string) {
  const dataDir = mkdtempSync(join(tmpdir(), `confab-bench-${name}-`));
  const database = process.env.DATABASE_URL ? await freshPostgresDatabase(`confab_bench_${name}`) : undefined;
  const databaseUrl = database?.url;
  const config = loadConfig({
    databaseUrl,
    dataDir: databaseUrl ? ':memory:' : dataDir,
    logLevel: 'warn',
    passwordHash: { memoryCost: 1024, timeCost: 1 },
    rateLimit: { perUser: 1e9, perIp: 1e9, windowSeconds: 60, loginFailures: 5, loginWindowSeconds: 1800 },
    bootstrap: { email: 'owner@bench.example', password: 'bench-password', orgName: 'Bench' },
  });
  const server = await createServer(config, pino({ level: 'warn' }));
  return {
    server,
    /** The benchmark's own database (PostgreSQL), else undefined (PGlite). */
    databaseUrl,
    async close() {
      await server.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
export const ms = (x: number) => `${x.toFixed(2)} ms`;

/** `rounds` timings of `fn` (ms), after one run to warm up. */
export async function timed(rounds: number, fn: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  await fn();
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return times;
}
