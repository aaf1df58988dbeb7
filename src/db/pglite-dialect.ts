// A Kysely dialect for PGlite (PostgreSQL compiled to WebAssembly, in-process).
// Kysely ships one, but it shares its single connection between concurrent
// callers, so one request's query could run inside another's open transaction.
// PGlite is a single connection, so this driver hands it out to one user at a
// time: a transaction holds it until commit or rollback, and every other query
// waits its turn. Code inside a transaction must use the transaction object,
// never the outer `db`, or it would wait for itself.

import { parse, protocol, type PGlite, type Results } from '@electric-sql/pglite';
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
import { MAX_PREPARED, PLANNED, SCHEMA_CHANGE } from './prepared.ts';

const { serialize } = protocol;

// Each driver's statements have names of their own, should two share a PGlite.
let drivers = 0;

interface Prepared {
  name: string;
  paramTypes: number[];
}

/**
 * Runs statements on PGlite, each planned statement prepared once by its text. PGlite's own
 * `query()` parses, describes and plans every statement afresh, in six calls into its
 * WebAssembly; for the short statements most requests are made of, that costs two to three
 * times their execution. A statement seen before is bound and executed in one call.
 * Plans are PostgreSQL's own plan cache's: custom for the first executions, generic when
 * that costs no more (`plan_cache_mode`).
 */
export class PreparedStatements {
  readonly #pg: PGlite;
  readonly #byText = new Map<string, Prepared>();
  readonly #prefix = `confab_${drivers++}_`;
  #next = 0;

  constructor(pg: PGlite) {
    this.#pg = pg;
  }

  get size(): number {
    return this.#byText.size;
  }

  async query<R>(text: string, params: readonly unknown[]): Promise<Results<R>> {
    if (!PLANNED.test(text)) return this.#unprepared<R>(text, params);
    try {
      const statement = await this.#prepare(text);
      const values = params.map((v, i) => this.#serialize(v, statement.paramTypes[i]));
      const bind = serialize.bind({ statement: statement.name, values });
      const { messages } = await this.#pg.execProtocol(concat(bind, serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()));
      return parse.parseResults(messages, this.#pg.parsers)[0] as Results<R>;
    } catch (e) {
      throw withQuery(e, text, params);
    }
  }

  async #prepare(text: string): Promise<Prepared> {
    const known = this.#byText.get(text);
    if (known) {
      // Most recently used last: the map's first entry is the one to close.
      this.#byText.delete(text);
      this.#byText.set(text, known);
      return known;
    }
    const name = `${this.#prefix}${this.#next++}`;
    const parsed = serialize.parse({ name, text });
    const { messages } = await this.#pg.execProtocol(concat(parsed, serialize.describe({ type: 'S', name }), serialize.sync()));
    const statement = { name, paramTypes: parse.parseDescribeStatementResults(messages) };
    this.#byText.set(text, statement);
    if (this.#byText.size > MAX_PREPARED) await this.#close(this.#byText.keys().next().value!);
    return statement;
  }

  async #close(text: string): Promise<void> {
    const statement = this.#byText.get(text)!;
    this.#byText.delete(text);
    // In a failed transaction the close is refused and the statement stays until the session ends.
    await this.#pg.execProtocol(concat(serialize.close({ type: 'S', name: statement.name }), serialize.sync()), { throwOnError: false });
  }

  async #unprepared<R>(text: string, params: readonly unknown[]): Promise<Results<R>> {
    const result = await this.#pg.query<R>(text, params as unknown[]);
    if (SCHEMA_CHANGE.test(text)) for (const kept of [...this.#byText.keys()]) await this.#close(kept);
    return result;
  }

  // As PGlite's query() does: by the parameter's type as PostgreSQL inferred it.
  #serialize(value: unknown, type: number | undefined): string | null {
    if (value === null || value === undefined) return null;
    const serializer = type === undefined ? undefined : this.#pg.serializers[type];
    return serializer ? serializer(value) : String(value);
  }
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** The statement and its parameters on a database error, as PGlite's query() gives them. */
function withQuery(e: unknown, query: string, params: readonly unknown[]): unknown {
  if (e instanceof Error && 'code' in e) Object.assign(e, { query, params });
  return e;
}

class PGliteConnection implements DatabaseConnection {
  readonly #statements: PreparedStatements;

  constructor(pg: PGlite) {
    this.#statements = new PreparedStatements(pg);
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.#statements.query<R>(query.sql, query.parameters);
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
