// A Confab server for one test file, on the backend the run asks for
// (CONFAB_TEST_DB=pglite | postgres), with a fresh database of its own, and
// clients that speak HTTP to it the way real clients do.

import assert from 'node:assert/strict';
import pino from 'pino';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config.ts';
import { createServer, type RunningServer } from '../../src/server.ts';
import { ROLE, type Role } from '../../src/users/roles.ts';
import { versionFields } from '../../src/version.ts';
import { runDueJobs } from '../../src/jobs/worker.ts';
import { JOB_KINDS } from '../../src/jobs/kinds.ts';
import { EMAIL_JOB } from '../../src/email/queue.ts';
import { MISSED_MESSAGES_JOB } from '../../src/email/missed-messages.ts';
import { checkResponse } from './openapi.ts';
import { freshPostgresDatabase } from './postgres.ts';
import { injectRequest } from './inject.ts';

export const OWNER_EMAIL = 'owner@example.com';
export const OWNER_PASSWORD = 'owner-password-1';

export interface Response {
  status: number;
  body: any;
  headers: Record<string, string | string[] | number | undefined>;
}

type Params = Record<string, unknown>;

/** Form-encodes parameters: strings raw, everything else as JSON text (the API's convention). */
export function encodeParams(params: Params): string {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return form.toString();
}

export class Client {
  readonly server: TestServer;
  readonly email: string | undefined;
  readonly apiKey: string | undefined;
  readonly id: number;
  readonly host: string | undefined;

  constructor(server: TestServer, id: number, email?: string, apiKey?: string, host?: string) {
    this.server = server;
    this.id = id;
    this.email = email;
    this.apiKey = apiKey;
    this.host = host;
  }

  async request(method: string, path: string, params: Params = {}, headers: Record<string, string> = {}): Promise<Response> {
    const url = path.startsWith('/api/') || path.startsWith('/avatar') ? path : `/api/v1${path}`;
    const encoded = encodeParams(params);
    const isQuery = method === 'GET' || method === 'HEAD';
    const allHeaders: Record<string, string> = { ...headers };
    if (this.email !== undefined && this.apiKey !== undefined) {
      allHeaders.authorization = `Basic ${Buffer.from(`${this.email}:${this.apiKey}`).toString('base64')}`;
    }
    if (this.host) allHeaders.host = this.host;
    if (!isQuery && encoded) allHeaders['content-type'] = 'application/x-www-form-urlencoded';
    const res = await injectRequest(await this.server.pick(), {
      method: method as any,
      url: isQuery && encoded ? `${url}?${encoded}` : url,
      payload: !isQuery && encoded ? encoded : undefined,
      headers: allHeaders,
    });
    let body: any = res.body;
    try {
      body = JSON.parse(res.body);
    } catch {
      // not JSON: keep the text
    }
    checkResponse(method, url, res.statusCode, body);
    return { status: res.statusCode, body, headers: res.headers };
  }

  get = (path: string, params?: Params, headers?: Record<string, string>) => this.request('GET', path, params, headers);
  post = (path: string, params?: Params, headers?: Record<string, string>) => this.request('POST', path, params, headers);
  patch = (path: string, params?: Params, headers?: Record<string, string>) => this.request('PATCH', path, params, headers);
  delete = (path: string, params?: Params, headers?: Record<string, string>) => this.request('DELETE', path, params, headers);
  put = (path: string, params?: Params, headers?: Record<string, string>) => this.request('PUT', path, params, headers);
}

export interface TestServer extends RunningServer {
  config: Config;
  /** The SQL statements the server sends while `fn` runs (BEGIN and COMMIT included). */
  statementsDuring(fn: () => Promise<unknown>): Promise<string[]>;
  /** A second organization at `<subdomain>.confab.test`, and a client for its owner. */
  createOrganization(subdomain: string): Promise<Client & { realmId: number }>;
  /** Stops gracefully (queues saved) and starts again on the same database and data directory. */
  restart(): Promise<TestServer>;
  owner: Client;
  anonymous: Client;
  /** Creates an account with the given role (directly, through the same action the API uses). */
  createUser(opts?: { role?: Role; email?: string; fullName?: string; password?: string }): Promise<Client>;
  /** A client for an existing user, read from the database. */
  clientFor(userId: number): Promise<Client>;
  /**
   * The emails written to the outbox so far, oldest first (email/mailer.ts),
   * once every email job due now has run (emails are queued, email/queue.ts).
   */
  outbox(): Promise<{ file: string; to: string; subject: string; text: string }[]>;
  /** Runs the email and missed-message jobs due now (another pass may hold one: waits for it). */
  flushEmails(): Promise<void>;
  /** Every process of this server: one, or two sharing PostgreSQL and the broker (CONFAB_TEST_CLUSTER). */
  processes: RunningServer[];
  /** The app the next request goes to: in a cluster, the processes take turns. */
  pick(): Promise<RunningServer['app']>;
}

export const TEST_BROKER_URL = process.env.BROKER_URL ?? 'redis://127.0.0.1:6379';

/** Forgets what a test cluster left in the broker (rate-limit windows, queues nobody adopted). */
async function clearBroker(prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(TEST_BROKER_URL);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
}

export { freshPostgresDatabase };

/**
 * With CONFAB_TEST_CLUSTER=1 (on PostgreSQL) every test server is two processes' worth of
 * servers sharing the database and the broker, and requests alternate between them.
 */
export async function startTestServer(overrides: Partial<Config> = {}): Promise<TestServer> {
  if (process.env.CONFAB_TEST_CLUSTER === '1') return startTestCluster(overrides);
  const backend = process.env.CONFAB_TEST_DB ?? 'pglite';
  const pgdb = backend === 'postgres' ? await freshPostgresDatabase() : undefined;
  // One outbox per server, kept across restarts, removed when it closes.
  const outboxDir = mkdtempSync(join(tmpdir(), 'confab-test-outbox-'));
  return startOn({ outboxDir, ...overrides }, pgdb);
}

function readOutbox(dir: string): { file: string; to: string; subject: string; text: string }[] {
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith('.eml'))
      .sort();
  } catch {
    return [];
  }
  return files.map((file) => {
    const raw = readFileSync(join(dir, file), 'utf8');
    const [head, ...rest] = raw.split('\r\n\r\n');
    const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(head)?.[1] ?? '';
    return { file, to: field('To'), subject: field('Subject'), text: rest.join('\r\n\r\n') };
  });
}

/** Two servers on one fresh PostgreSQL database and the broker (under a prefix of their own). */
export async function startTestCluster(overrides: Partial<Config> = {}, size = 2): Promise<TestServer> {
  const pgdb = await freshPostgresDatabase();
  const prefix = `confab-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  const outboxDir = mkdtempSync(join(tmpdir(), 'confab-test-outbox-'));
  return startOn({ outboxDir, brokerUrl: TEST_BROKER_URL, brokerPrefix: prefix, ...overrides }, pgdb, size);
}

async function startOn(overrides: Partial<Config>, pgdb: { url: string; drop: () => Promise<void> } | undefined, size = 1): Promise<TestServer> {
  const base = loadConfig({}, {});
  const config: Config = {
    ...base,
    databaseUrl: pgdb?.url,
    dataDir: ':memory:',
    externalUrl: 'http://confab.test',
    bootstrap: { email: OWNER_EMAIL, password: OWNER_PASSWORD, orgName: 'Test Organization' },
    passwordHash: { memoryCost: 1024, timeCost: 1 },
    // Most test files count channels and messages from zero; onboarding.test.ts turns it on.
    onboarding: false,
    // Tests run retention passes themselves, at the times they choose.
    retention: { ...base.retention, intervalMs: 0 },
    softDeactivation: { ...base.softDeactivation, intervalMs: 0 },
    rateLimit: { ...base.rateLimit, perUser: 100_000, perIp: 100_000 },
    logLevel: process.env.CONFAB_TEST_LOG ?? 'silent',
    ...overrides,
  };
  let statements: string[] | undefined;
  const running = await createServer(config, pino({ level: config.logLevel }), { onQuery: (sql) => statements?.push(sql) });
  const server = running as TestServer;
  server.config = config;
  server.statementsDuring = async (fn) => {
    statements = [];
    try {
      await fn();
      return statements;
    } finally {
      statements = undefined;
    }
  };
  server.processes = [running];
  for (let i = 1; i < size; i++) server.processes.push(await createServer(config, pino({ level: config.logLevel })));
  if (size > 1) {
    // Tests that change the database behind the actions' back clear the first process's credential
    // cache: in a cluster every process's is cleared (the bus never clears, so nothing is masked).
    const first = running.svc.credentials;
    const { clear } = Object.getPrototypeOf(first) as typeof first;
    first.clear = () => {
      for (const p of server.processes) clear.call(p.svc.credentials);
    };
  }
  let turn = 0;
  server.pick = async () => {
    const target = server.processes[turn++ % server.processes.length];
    // What another process committed has reached this one's queues (real clients long-poll instead).
    if (server.processes.length > 1) await (target.svc.events as { sync?: () => Promise<void> }).sync?.();
    return target.app;
  };
  const close = running.close.bind(running);
  const closeAll = async () => {
    for (const p of server.processes.slice(1)) await p.close();
    await close();
  };
  server.close = async () => {
    await closeAll();
    if (config.brokerUrl) await clearBroker(config.brokerPrefix);
    await pgdb?.drop();
    if (config.outboxDir) rmSync(config.outboxDir, { recursive: true, force: true });
  };
  server.flushEmails = async () => {
    for (let i = 0; i < 2000; i++) {
      await runDueJobs(running.svc, JOB_KINDS);
      const due = await running.svc.db
        .selectFrom('jobs')
        .select('id')
        .where('kind', 'in', [EMAIL_JOB, MISSED_MESSAGES_JOB])
        .where('failed_at', 'is', null)
        .where('run_after', '<=', new Date())
        .executeTakeFirst();
      if (!due) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  server.outbox = async () => {
    await server.flushEmails();
    return config.outboxDir ? readOutbox(config.outboxDir) : [];
  };
  server.restart = async () => {
    await closeAll();
    return startOn(overrides, pgdb, size);
  };
  server.clientFor = async (userId: number) => {
    const u = await running.svc.db.selectFrom('users').select(['id', 'delivery_email', 'api_key']).where('id', '=', userId).executeTakeFirstOrThrow();
    return new Client(server, u.id, u.delivery_email, u.api_key);
  };
  const owner = await running.svc.db.selectFrom('users').select('id').where('delivery_email', '=', OWNER_EMAIL).executeTakeFirstOrThrow();
  server.owner = await server.clientFor(owner.id);
  server.anonymous = new Client(server, 0);
  server.createOrganization = async (subdomain: string) => {
    const { createRealm } = await import('../../src/realm/actions.ts');
    const { owner } = await createRealm(running.svc, {
      subdomain,
      name: `Org ${subdomain}`,
      owner: { email: `boss@${subdomain}.example`, fullName: 'Other Boss', password: `${subdomain}-password-1` },
    });
    const client = new Client(server, owner.id, owner.delivery_email, owner.api_key, `${subdomain}.confab.test`);
    return Object.assign(client, { realmId: owner.realm_id });
  };
  let users = 0;
  server.createUser = async (opts = {}) => {
    const { createUserAsOperator } = await import('../../src/users/actions.ts');
    const realm = await running.svc.db.selectFrom('realms').selectAll().where('string_id', '=', '').executeTakeFirstOrThrow();
    users++;
    const role = opts.role ?? ROLE.MEMBER;
    const user = await createUserAsOperator(running.svc, realm, {
      email: opts.email ?? `user${users}-${role}@example.com`,
      fullName: opts.fullName ?? `User ${users}`,
      password: opts.password ?? null,
      role,
    });
    return server.clientFor(user.id);
  };
  return server;
}

/** The keys every /register answer carries whatever fetch_event_types asks for: the envelope, the queue and the version names. */
export const REGISTER_ALWAYS: readonly string[] = ['result', 'msg', 'queue_id', 'last_event_id', ...Object.keys(versionFields(true))];

/** The body of a successful reply; a failed one fails the test with the reply's body. */
export function ok(res: { status: number; body: any }): any {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}
