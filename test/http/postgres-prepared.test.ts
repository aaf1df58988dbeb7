// On PostgreSQL the pool keeps planned statements prepared per connection
// (src/db/postgres-pool.ts): answers must be those of unnamed statements, a schema change
// must not leave a statement returning the old columns, and errors must not leave a
// statement broken. Runs only on PostgreSQL (CONFAB_TEST_DB=postgres), in a database of its own.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { Kysely, PostgresDialect, sql, type Generated } from 'kysely';
import { PreparingPool } from '../../src/db/postgres-pool.ts';
import { openDatabase } from '../../src/db/index.ts';
import { loadConfig } from '../../src/config.ts';
import { MAX_PREPARED } from '../../src/db/prepared.ts';
import { freshPostgresDatabase } from '../support/postgres.ts';

const skip = process.env.CONFAB_TEST_DB !== 'postgres' ? 'needs CONFAB_TEST_DB=postgres' : false;

interface T {
  id: Generated<number>;
  name: string;
  tags: string[] | null;
  data: unknown;
  at: Date | null;
  big: number | null;
  ok: boolean | null;
}

let database: { url: string; drop: () => Promise<void> } | undefined;
let plain: pg.Client;
before(async () => {
  if (skip) return;
  database = await freshPostgresDatabase();
  plain = new pg.Client({ connectionString: database.url });
  await plain.connect();
});
after(async () => {
  await plain?.end();
  await database?.drop();
});

type Db = Kysely<{ t: T }>;

/** `work` on a new table t, with Kysely over a pool of `max` connections that keep their statements. */
async function withPool(max: number, work: (db: Db, pool: PreparingPool, raw: pg.Pool) => Promise<void>): Promise<void> {
  await plain.query(
    'drop table if exists t; create table t (id serial primary key, name text not null, tags text[], data jsonb, at timestamptz, big bigint, ok boolean)',
  );
  const raw = new pg.Pool({ connectionString: database!.url, max });
  const pool = new PreparingPool(raw);
  const db = new Kysely<{ t: T }>({ dialect: new PostgresDialect({ pool }) });
  try {
    await work(db, pool, raw);
  } finally {
    await db.destroy(); // ends the pool if Kysely used it
    if (!raw.ended) await raw.end();
  }
}

/** This connection's statements that the server holds. */
const kept = async (c: { query: (s: string, p: unknown[]) => Promise<{ rows: { n: number }[] }> }) =>
  (await c.query(`select count(*)::integer as n from pg_prepared_statements where name like 'confab%' and statement not like '%pg_prepared_statements%'`, []))
    .rows[0]?.n;

test('a statement used again is prepared once, and answers as an unnamed one does', { skip }, () =>
  withPool(1, async (_db, pool) => {
    const c = await pool.connect();
    const insert = 'insert into t (name, tags, data, at, big, ok) values ($1, $2, $3, $4, $5, $6) returning *';
    const at = new Date('2026-01-02T03:04:05.678Z');
    const first = await c.query(insert, ['a', ['x', 'y'], { k: [1, 2] }, at, 9007199254740991, true]);
    const second = await c.query(insert, ['b', null, null, null, null, false]);
    assert.equal(c.size, 1, 'the second insert reuses the statement');
    assert.equal(await kept(c), 1, 'the server holds it once');
    assert.deepEqual(first.rows, [{ id: 1, name: 'a', tags: ['x', 'y'], data: { k: [1, 2] }, at, big: 9007199254740991, ok: true }]);
    assert.deepEqual(second.rows, [{ id: 2, name: 'b', tags: null, data: null, at: null, big: null, ok: false }]);
    const select = 'select * from t where id = any($1) order by id';
    assert.deepEqual((await c.query(select, [[1, 2]])).rows, (await plain.query(select, [[1, 2]])).rows);
    assert.equal((await c.query('update t set ok = $1 where id > $2', [true, 0])).rowCount, 2);
    c.release();
  }),
);

const COLUMNS = ['id', 'name', 'tags', 'data', 'at', 'big', 'ok'];

test('after a schema change every connection returns the new columns', { skip }, () =>
  withPool(3, async (db) => {
    await db.insertInto('t').values({ name: 'a' }).execute();
    // Three connections at once, each preparing `select *`.
    const all = () =>
      Promise.all(
        [1, 2, 3].map(() =>
          db.transaction().execute(async (tx) => {
            await sql`select pg_sleep(0.05)`.execute(tx);
            return (await tx.selectFrom('t').selectAll().executeTakeFirstOrThrow()) as Record<string, unknown>;
          }),
        ),
      );
    for (const row of await all()) assert.deepEqual(Object.keys(row), COLUMNS);
    await sql`alter table t add column extra integer default 7`.execute(db);
    for (const row of await all()) assert.equal(row.extra, 7);
    // The same in a transaction: the rest of it sees the change, and so does everyone after its commit.
    await db.transaction().execute(async (tx) => {
      await sql`alter table t drop column extra`.execute(tx);
      assert.deepEqual(Object.keys(await tx.selectFrom('t').selectAll().executeTakeFirstOrThrow()), COLUMNS);
    });
    for (const row of await all()) assert.deepEqual(Object.keys(row), COLUMNS);
  }),
);

test('a schema change made elsewhere is recovered from outside a transaction', { skip }, () =>
  withPool(1, async (db) => {
    await db.insertInto('t').values({ name: 'a' }).execute();
    await db.selectFrom('t').selectAll().execute();
    await plain.query('alter table t add column extra integer default 7');
    assert.equal(((await db.selectFrom('t').selectAll().executeTakeFirstOrThrow()) as Record<string, unknown>).extra, 7);
  }),
);

test('a failed statement in a transaction leaves its statement usable', { skip }, () =>
  withPool(1, async (db) => {
    // First use inside a transaction that fails at execution (a unique violation), then at binding (a bad value).
    await assert.rejects(
      db.transaction().execute(async (tx) => {
        await tx.insertInto('t').values({ id: 1, name: 'a' }).execute();
        await tx.insertInto('t').values({ id: 1, name: 'a' }).execute();
      }),
      (e: { code?: string }) => e.code === '23505',
    );
    await assert.rejects(
      db.transaction().execute(async (tx) => {
        await tx.selectFrom('t').select('id').where('id', '=', 1).execute();
        await tx
          .selectFrom('t')
          .select('id')
          .where('id', '=', 'x' as never)
          .execute();
      }),
      (e: { code?: string }) => e.code === '22P02',
    );
    // A statement first sent after the transaction failed is refused, and works once it ended.
    await assert.rejects(
      db.transaction().execute(async (tx) => {
        await tx.insertInto('t').values({ id: 1, name: 'a' }).execute();
        await tx
          .insertInto('t')
          .values({ id: 1, name: 'a' })
          .execute()
          .catch(() => {});
        await tx.selectFrom('t').select('name').where('name', '=', 'b').execute();
      }),
      (e: { code?: string }) => e.code === '25P02',
    );
    assert.deepEqual(await db.selectFrom('t').selectAll().execute(), []);
    await db.insertInto('t').values({ id: 1, name: 'a' }).execute();
    assert.deepEqual(await db.selectFrom('t').select('id').where('id', '=', 1).execute(), [{ id: 1 }]);
    assert.deepEqual(await db.selectFrom('t').select('name').where('name', '=', 'b').execute(), []);
    assert.equal((await sql<{ n: number }>`select count(*)::integer as n from t`.execute(db)).rows[0]?.n, 1);
  }),
);

test('a connection keeps at most MAX_PREPARED statements, and closes the others', { skip }, () =>
  withPool(1, async (_db, pool) => {
    const c = await pool.connect();
    for (let i = 0; i < MAX_PREPARED + 20; i++) await c.query(`select $1::integer + ${i} as n`, [1]);
    assert.equal(c.size, MAX_PREPARED);
    await c.query('select $1::integer + 0 as n', [1]); // closes those forgotten, then prepares this one again
    assert.equal(await kept(c), MAX_PREPARED);
    assert.deepEqual((await c.query(`select $1::integer + ${MAX_PREPARED + 19} as n`, [1])).rows, [{ n: MAX_PREPARED + 20 }]);
    c.release();
  }),
);

test('inside a transaction nothing is closed: the statements forgotten there are closed after it', { skip }, () =>
  withPool(1, async (db) => {
    const held = (e: Db | Parameters<Parameters<ReturnType<Db['transaction']>['execute']>[0]>[0]) =>
      sql<{ n: number }>`select count(*)::integer as n from pg_prepared_statements where name like 'confab%' and statement not like '%pg_prepared_statements%'`
        .execute(e)
        .then((r) => r.rows[0]?.n);
    await db.transaction().execute(async (tx) => {
      for (let i = 0; i < MAX_PREPARED + 20; i++) await sql`select ${1}::integer + ${sql.raw(String(i))} as n`.execute(tx);
      assert.equal(await held(tx), MAX_PREPARED + 20);
    });
    // Closed at the next statement after it: the connection keeps MAX_PREPARED, the count itself one of them.
    assert.equal(await held(db), MAX_PREPARED - 1);
  }),
);

test('a pool of several connections: each prepares its own, a replaced connection starts afresh', { skip }, () =>
  withPool(4, async (db, pool, raw) => {
    const dropped: Error[] = [];
    raw.on('error', (e) => dropped.push(e));
    await db
      .insertInto('t')
      .values([{ name: 'a' }, { name: 'b' }])
      .execute();
    const read = () => db.selectFrom('t').select('name').where('name', '=', 'b').execute();
    for (const rows of await Promise.all(Array.from({ length: 40 }, read))) assert.deepEqual(rows, [{ name: 'b' }]);
    assert.ok(raw.totalCount > 1, 'the reads ran on several connections');
    // Every idle connection ended by the server (a restart): the pool replaces them, the new ones prepare again.
    await plain.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    while (raw.totalCount > 0) await new Promise((r) => setTimeout(r, 10));
    assert.ok(dropped.length > 0);
    for (const rows of await Promise.all(Array.from({ length: 8 }, read))) assert.deepEqual(rows, [{ name: 'b' }]);
    const c = await pool.connect();
    assert.equal(await kept(c), 1, 'a new connection holds only what it prepared');
    c.release();
  }),
);

test('DATABASE_PREPARED_STATEMENTS=false (a pooler that cannot keep them): every statement is sent unnamed', { skip }, async () => {
  assert.equal(loadConfig({}, {}).databasePreparedStatements, true);
  const { databasePreparedStatements } = loadConfig({}, { DATABASE_PREPARED_STATEMENTS: 'false' });
  assert.equal(databasePreparedStatements, false);
  for (const preparedStatements of [true, false]) {
    const { db, close } = await openDatabase({ databaseUrl: database!.url, dataDir: ':memory:', poolSize: 1, preparedStatements });
    try {
      await db.selectNoFrom(sql<number>`${1}::integer`.as('one')).execute();
      const held = await sql<{ n: number }>`select count(*)::integer as n from pg_prepared_statements where name like 'confab%'`.execute(db);
      assert.equal(held.rows[0]!.n > 0, preparedStatements, `preparedStatements: ${preparedStatements}`);
    } finally {
      await close();
    }
  }
});
