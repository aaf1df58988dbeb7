// Opens the database: a real PostgreSQL server through a pool when DATABASE_URL is
// set, otherwise embedded PGlite keeping its files in the data directory. Both
// speak the same SQL; the rest of the server cannot tell them apart.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect, type LogEvent } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import pg from 'pg';
import type { Database, Db } from './schema.ts';
import { migrations } from './migrations/index.ts';
import { PreparingPool } from './postgres-pool.ts';

export interface OpenedDatabase {
  db: Db;
  kind: 'pglite' | 'postgres';
  close(): Promise<void>;
  /** The PostgreSQL pool's connections (metrics); PGlite has one connection and no pool. */
  poolStats?: () => { total: number; idle: number; waiting: number };
}

// Counts and sums come back as int8; every one we read fits a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface DatabaseOptions {
  databaseUrl?: string;
  /** PGlite directory; ':memory:' for a database that lives only in this process. */
  dataDir: string;
  poolSize?: number;
  /** PostgreSQL: name planned statements so each connection prepares them once (default true). */
  preparedStatements?: boolean;
  /** Told of errors on idle pooled connections (logged by the server). */
  onIdleError?: (err: Error) => void;
  /** Told of every statement sent, transaction control included (the tests' query counts). */
  onQuery?: (sql: string) => void;
}

export async function openDatabase(opts: DatabaseOptions): Promise<OpenedDatabase> {
  const { onQuery } = opts;
  const log = onQuery ? (event: LogEvent) => onQuery(event.query.sql) : undefined;
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10 });
    // An idle connection the server drops (a restart, a dropped database) must not crash the process;
    // the pool replaces it on the next query.
    pool.on('error', (err) => opts.onIdleError?.(err));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: opts.preparedStatements === false ? pool : new PreparingPool(pool) }), log });
    const poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
    return { db, kind: 'postgres', close: () => db.destroy(), poolStats };
  }
  let location: string | undefined;
  if (opts.dataDir !== ':memory:') {
    location = join(opts.dataDir, 'pglite');
    mkdirSync(location, { recursive: true });
  }
  const pglite = await PGlite.create(location, { parsers: { [pgliteTypes.INT8]: (v: string) => Number(v) } });
  // Kept statements (pglite-dialect.ts) are planned at each run, never with a generic plan: PGlite
  // has no autovacuum, so nothing would replan one made while the tables were small, and such a
  // plan (measured: the message window at 100+ ms) stalled the whole process as they grew.
  await pglite.exec('set plan_cache_mode = force_custom_plan');
  const { PGliteDialect } = await import('./pglite-dialect.ts');
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite), log });
  return { db, kind: 'pglite', close: () => db.destroy() };
}

class StaticMigrations implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

/** Brings the schema up to date; runs at every start. */
export async function migrateToLatest(db: Db): Promise<void> {
  // Domains add numbered files independently; each is applied once, whatever the order of arrival.
  const migrator = new Migrator({ db, provider: new StaticMigrations(), allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${String(error)}`, { cause: error });
  }
}
