// On PostgreSQL, statements planned again and again are prepared once per connection,
// as the PGlite driver does for its one connection (pglite-dialect.ts). Unnamed, every
// statement is sent with its text and parsed, analyzed and planned by the server each
// time; named (node-postgres's `{ name, text, values }`), a connection sends the text
// once and then only binds and executes it, and PostgreSQL's plan cache keeps its plan
// (custom for the first executions, generic when that costs no more). Kysely's own
// PostgresDriver runs the statements: this pool hands it connections that name them.

import pg from 'pg';
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import { MAX_PREPARED, PLANNED, SCHEMA_CHANGE } from './prepared.ts';

const BEGIN = /^\s*(begin|start\s+transaction)\b/i;
const END = /^\s*(commit|rollback|end|abort)\s*;?\s*$/i;

/** What a pool's connections share: a version of the schema, moved on by every schema change any of them makes. */
interface Schema {
  version: number;
}

/** node-postgres's record of the statements a connection has parsed, by name (it has no call to forget one). */
interface Parsed {
  connection: { parsedStatements: Record<string, string> };
}

/** A pg.Pool whose connections keep their planned statements prepared. */
export class PreparingPool implements PostgresPool {
  readonly Client = pg.Client;
  readonly #pool: pg.Pool;
  // A connection the pool replaces (an error, a restart of the server) is a new client: its statements start afresh.
  readonly #clients = new WeakMap<pg.PoolClient, PreparingClient>();
  readonly #schema: Schema = { version: 0 };

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  get options(): object {
    return this.#pool.options;
  }

  async connect(): Promise<PreparingClient> {
    const client = await this.#pool.connect();
    let preparing = this.#clients.get(client);
    if (!preparing) {
      preparing = new PreparingClient(client, this.#schema);
      this.#clients.set(client, preparing);
    }
    return preparing;
  }

  end(): Promise<void> {
    return this.#pool.end();
  }
}

/**
 * One pooled connection, naming each planned statement by its text. At most MAX_PREPARED
 * are kept, the least recently used forgotten first. A schema change (here or on another
 * of the pool's connections) makes every connection forget its statements: `select *`
 * must not keep the old columns. Forgotten statements are closed outside transactions
 * only, where a failing close cannot fail the caller's work.
 */
export class PreparingClient implements PostgresPoolClient {
  readonly #client: pg.PoolClient;
  readonly #schema: Schema;
  #version: number;
  /** Statement names by text, least recently used first. */
  readonly #names = new Map<string, string>();
  #forgotten: string[] = [];
  #next = 0;
  #inTransaction = false;

  constructor(client: pg.PoolClient, schema: Schema) {
    this.#client = client;
    this.#schema = schema;
    this.#version = schema.version;
  }

  /** Read by Kysely to cancel a query. */
  get processID(): number | undefined {
    return (this.#client as { processID?: number }).processID;
  }

  /** Statements kept (the tests). */
  get size(): number {
    return this.#names.size;
  }

  release(destroy?: boolean): void {
    this.#client.release(destroy);
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(query: string | PostgresCursor<R>, parameters: ReadonlyArray<unknown> = []): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof query !== 'string') return this.#client.query(query as never);
    return PLANNED.test(query) ? this.#named<R>(query, parameters) : this.#unnamed<R>(query, parameters);
  }

  async #named<R>(text: string, values: ReadonlyArray<unknown>, retry = true): Promise<PostgresQueryResult<R>> {
    if (this.#version !== this.#schema.version) this.#forgetAll();
    if (!this.#inTransaction && this.#forgotten.length > 0) await this.#closeForgotten();
    try {
      return (await this.#client.query({ name: this.#name(text), text, values: values as unknown[] })) as unknown as PostgresQueryResult<R>;
    } catch (e) {
      if (!isStalePlan(e)) throw e;
      // Another process changed the schema: every kept statement may be stale. Outside a
      // transaction nothing ran, so the statement runs again, prepared afresh.
      this.#schema.version++;
      if (this.#inTransaction || !retry) throw e;
      return this.#named<R>(text, values, false);
    }
  }

  async #unnamed<R>(text: string, values: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    // A failed commit or rollback ends the transaction too (or the connection, which Kysely then discards).
    if (END.test(text)) this.#inTransaction = false;
    try {
      const result = await this.#client.query(text, values as unknown[]);
      if (BEGIN.test(text)) this.#inTransaction = true;
      return result as unknown as PostgresQueryResult<R>;
    } finally {
      // Other connections prepare afresh: until this commits, their parse waits for the change's lock.
      if (SCHEMA_CHANGE.test(text)) this.#schema.version++;
    }
  }

  #name(text: string): string {
    const known = this.#names.get(text);
    if (known !== undefined) {
      this.#names.delete(text);
      this.#names.set(text, known);
      return known;
    }
    // Names are never reused: one a pending close has not reached yet cannot be taken for a new statement.
    const name = `confab_${this.#next++}`;
    this.#names.set(text, name);
    if (this.#names.size > MAX_PREPARED) {
      const [oldest, oldName] = this.#names.entries().next().value!;
      this.#names.delete(oldest);
      this.#forgotten.push(oldName);
    }
    return name;
  }

  #forgetAll(): void {
    this.#forgotten.push(...this.#names.values());
    this.#names.clear();
    this.#version = this.#schema.version;
  }

  async #closeForgotten(): Promise<void> {
    const parsed = (this.#client as unknown as Parsed).connection.parsedStatements;
    // Only those the server has: a statement whose parse failed was never made.
    const names = this.#forgotten.filter((name) => parsed[name] !== undefined);
    for (const name of this.#forgotten) delete parsed[name];
    this.#forgotten = [];
    if (names.length === 0) return;
    await this.#client.query(names.map((name) => `deallocate ${name}`).join('; ')).catch(() => {});
  }
}

/** PostgreSQL refused a kept statement whose result's columns a schema change altered. */
function isStalePlan(e: unknown): boolean {
  return e instanceof Error && (e as { code?: unknown }).code === '0A000' && /cached plan must not change result type/.test(e.message);
}
