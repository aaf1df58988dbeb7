// A Kysely dialect for PGlite (PostgreSQL compiled to WebAssembly, in-process).
// Kysely ships one, but it shares its single connection between concurrent
// callers, so one request's query could run inside another's open transaction.
// PGlite is a single connection, so this driver hands it out to one user at a
// time: a transaction holds it until commit or rollback, and every other query
// waits its turn. Code inside a transaction must use the transaction object,
// never the outer `db`, or it would wait for itself.

import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

class PGliteConnection implements DatabaseConnection {
  readonly #pg: PGlite;

  constructor(pg: PGlite) {
    this.#pg = pg;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.#pg.query<R>(query.sql, query.parameters as unknown[]);
    const affected = result.affectedRows;
    return { rows: result.rows, numAffectedRows: affected === undefined ? undefined : BigInt(affected) };
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    yield await this.executeQuery<R>(query);
  }
}

class PGliteDriver implements Driver {
  readonly #pg: PGlite;
  readonly #connection: PGliteConnection;
  #queue: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;

  constructor(pg: PGlite) {
    this.#pg = pg;
    this.#connection = new PGliteConnection(pg);
  }

  async init(): Promise<void> {
    await this.#pg.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    // A chain of promises is the mutex: each acquirer waits for the previous release.
    const previous = this.#queue;
    let release!: () => void;
    this.#queue = new Promise<void>((resolve) => (release = resolve));
    await previous;
    this.#release = release;
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await connection.executeQuery(CompiledQuery.raw(`begin${level}`));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }

  async destroy(): Promise<void> {
    await this.#queue;
    if (!this.#pg.closed) await this.#pg.close();
  }
}

/** PostgreSQL's, under its own name: queries that read large results ask which database they run on (json-rows.ts). */
export class PGliteAdapter extends PostgresAdapter {}

export class PGliteDialect implements Dialect {
  readonly #pg: PGlite;

  constructor(pg: PGlite) {
    this.#pg = pg;
  }

  createAdapter() {
    return new PGliteAdapter();
  }

  createDriver(): Driver {
    return new PGliteDriver(this.#pg);
  }

  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }

  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
}
