// Large reads carried as one JSON value on PGlite. PGlite hands each row and
// column over from WebAssembly one by one (about 80 ms for the 1,000 rows of a
// users table, against 2 ms to run the query); one JSON array is parsed by V8 in
// one go (15 ms for the same rows). PostgreSQL is the other way round: encoding
// 10,000 wide rows as JSON cost it more than sending them, so there the rows come
// as rows.

import { sql, type Expression } from 'kysely';
import type { Executor } from './schema.ts';
import { PGliteAdapter } from './pglite-dialect.ts';

const onPGlite = (db: Executor) => db.getExecutor().adapter instanceof PGliteAdapter;

/**
 * The rows of `query`, in its order (a plain aggregate over an ordered subquery
 * keeps it), as a plain read would give them: `dates` names the timestamp
 * columns, which JSON carries as strings.
 */
export async function jsonRows<T>(db: Executor, query: Expression<T>, dates: readonly (keyof T & string)[] = []): Promise<T[]> {
  if (!onPGlite(db)) return (await sql<T>`select * from (${query}) q`.execute(db)).rows;
  const result = await sql<{ rows: T[] }>`select coalesce(json_agg(q), '[]'::json) as rows from (${query}) q`.execute(db);
  const rows = result.rows[0].rows;
  if (dates.length > 0) {
    for (const row of rows as Record<string, unknown>[]) for (const d of dates) if (row[d] !== null) row[d] = new Date(row[d] as string);
  }
  return rows;
}

/**
 * jsonRows for the widest reads (no timestamp column): a reader of `columns`, all
 * of its query's, in which each row travels as an array of their values, not an
 * object that repeats every key. At 10,000 users that halves the text PGlite
 * writes, copies out and V8 parses.
 */
export function tupleReader<T>(columns: readonly (keyof T & string)[]): (db: Executor, query: Expression<T>) => Promise<T[]> {
  const values = sql.join(columns.map((c) => sql.ref(`q.${c}`)));
  // An object literal of fixed keys, made once: built ten times faster than a row keyed in
  // a loop (0.35 against 3.2 ms for 10,000 rows of 16 columns). The keys are our column names.
  const toRow = new Function('t', `return {${columns.map((c, i) => `${JSON.stringify(c)}: t[${i}]`).join(', ')}};`) as (tuple: unknown[]) => T;
  return async (db, query) => {
    if (!onPGlite(db)) return (await sql<T>`select * from (${query}) q`.execute(db)).rows;
    const result = await sql<{ rows: unknown[][] }>`select coalesce(json_agg(json_build_array(${values})), '[]'::json) as rows from (${query}) q`.execute(db);
    return result.rows[0].rows.map(toRow);
  };
}
