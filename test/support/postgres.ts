// Databases of their own for tests and benchmarks on PostgreSQL.

import pg from 'pg';
import { randomBytes } from 'node:crypto';

let counter = 0;

/**
 * A new, empty database on the DATABASE_URL server (default: the local `test`
 * database's server), and how to drop it: tests and benchmarks never use that
 * server's own tables.
 */
export async function freshPostgresDatabase(prefix = 'confab_test'): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const name = `${prefix}_${process.pid}_${++counter}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
