// The PGlite driver keeps planned statements prepared (src/db/pglite-dialect.ts): the
// answers must be those of PGlite's own query(), and a schema change must not leave a
// statement that returns the old columns. Runs on an in-memory PGlite whatever the backend.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PGlite, types } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import { PGliteDialect, PreparedStatements } from '../../src/db/pglite-dialect.ts';
import { openDatabase } from '../../src/db/index.ts';

let pg: PGlite;
before(async () => {
  pg = await PGlite.create({ parsers: { [types.INT8]: (v: string) => Number(v) } });
});
after(() => pg.close());

/** An empty table t of every type of column the tests use. */
async function fresh() {
  await pg.exec(
    `drop table if exists t; create table t (id serial primary key, name text not null, tags text[], data jsonb, at timestamptz, big bigint, ok boolean)`,
  );
  return pg;
}
const openStatements = async () => (await pg.query<{ n: number }>('select count(*)::integer as n from pg_prepared_statements')).rows[0]?.n;

test('a kept statement answers as PGlite query() does, for every type of parameter and column', async () => {
  await fresh();
  const kept = new PreparedStatements(pg);
  const insert = 'insert into t (name, tags, data, at, big, ok) values ($1, $2, $3, $4, $5, $6) returning *';
  const at = new Date('2026-01-02T03:04:05.678Z');
  const first = await kept.query(insert, ['a', ['x', 'y'], { k: [1, 2] }, at, 9007199254740991, true]);
  const second = await kept.query(insert, ['b', null, null, null, null, false]);
  assert.equal(kept.size, 1, 'the second insert reuses the statement');
  assert.deepEqual(first.rows, [{ id: 1, name: 'a', tags: ['x', 'y'], data: { k: [1, 2] }, at, big: 9007199254740991, ok: true }]);
  assert.deepEqual(second.rows, [{ id: 2, name: 'b', tags: null, data: null, at: null, big: null, ok: false }]);
  const select = 'select * from t where id = any($1) order by id';
  const mine = await kept.query(select, [[1, 2]]);
  const theirs = await pg.query(select, [[1, 2]]);
  assert.deepEqual(mine.rows, theirs.rows);
  assert.deepEqual(mine.fields, theirs.fields);
  const update = await kept.query('update t set ok = $1 where id > $2', [true, 0]);
  assert.equal(update.affectedRows, 2);
});

test('a database error keeps its code and statement, and the statement still works afterwards', async () => {
  await fresh();
  const kept = new PreparedStatements(pg);
  const text = 'insert into t (id, name) values ($1, $2)';
  await kept.query(text, [1, 'a']);
  await assert.rejects(kept.query(text, [1, 'again']), (e: { code?: string; query?: string }) => e.code === '23505' && e.query === text);
  await assert.rejects(kept.query(text, ['not a number', 'x']), (e: { code?: string }) => e.code === '22P02');
  await kept.query(text, [2, 'b']);
  assert.equal((await pg.query<{ n: number }>('select count(*)::integer as n from t')).rows[0]?.n, 2);
});

test('after a schema change a kept statement returns the new columns', async () => {
  await fresh();
  const kept = new PreparedStatements(pg);
  await kept.query('insert into t (name) values ($1)', ['a']);
  assert.deepEqual(Object.keys((await kept.query('select * from t', [])).rows[0] as object), ['id', 'name', 'tags', 'data', 'at', 'big', 'ok']);
  await kept.query('alter table t add column extra integer default 7', []);
  assert.equal(kept.size, 0, 'a schema change closes every kept statement');
  assert.deepEqual((await kept.query('select * from t', [])).rows[0], { id: 1, name: 'a', tags: null, data: null, at: null, big: null, ok: null, extra: 7 });
});

test('at most 500 statements are kept, the least recently used closed first', async () => {
  await fresh();
  const kept = new PreparedStatements(pg);
  const already = (await openStatements())!;
  for (let i = 0; i < 520; i++) await kept.query(`select $1::integer + ${i} as n`, [1]);
  assert.equal(kept.size, 500);
  assert.equal(await openStatements(), already + 500, 'closed statements are gone from the session too');
  assert.deepEqual((await kept.query('select $1::integer + 519 as n', [1])).rows, [{ n: 520 }]);
});

test('a failed statement inside a transaction rolls the whole transaction back', async () => {
  await fresh();
  const db = new Kysely<{ t: { id: number; name: string } }>({ dialect: new PGliteDialect(pg) });
  await assert.rejects(
    db.transaction().execute(async (tx) => {
      await tx.insertInto('t').values({ id: 1, name: 'a' }).execute();
      await tx.insertInto('t').values({ id: 1, name: 'a' }).execute();
    }),
    (e: { code?: string }) => e.code === '23505',
  );
  assert.deepEqual(await db.selectFrom('t').selectAll().execute(), []);
  await db.insertInto('t').values({ id: 1, name: 'a' }).execute();
  assert.equal((await sql<{ n: number }>`select count(*)::integer as n from t`.execute(db)).rows[0]?.n, 1);
});

test('the embedded database plans kept statements at each run: a generic plan made on small tables would stay as they grow', async () => {
  const { db, close } = await openDatabase({ dataDir: ':memory:' });
  try {
    await sql`create table grows (id serial primary key, k integer not null)`.execute(db);
    await sql`create index grows_k on grows (k)`.execute(db);
    const read = () => sql<{ id: number }>`select id from grows where k = ${7}`.execute(db);
    // Past PostgreSQL's five custom plans, while the table is empty: the point where a generic plan would be kept.
    for (let i = 0; i < 8; i++) await read();
    await sql`insert into grows (k) select g % 1000 from generate_series(1, 20000) g`.execute(db);
    assert.equal((await sql<{ plan_cache_mode: string }>`show plan_cache_mode`.execute(db)).rows[0]!.plan_cache_mode, 'force_custom_plan');
    assert.equal((await read()).rows.length, 20);
  } finally {
    await close();
  }
});
