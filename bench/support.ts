// What every benchmark starts from: a server on a database of its own, dropped
// afterwards (a PGlite directory, or a fresh database on the DATABASE_URL server;
// never that server's own tables).

import { spawn } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer as netServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { freshPostgresDatabase } from '../test/support/postgres.ts';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';
import type { Services } from '../src/services.ts';
import type { Realm } from '../src/realm/tables.ts';
import { createUserAsOperator } from '../src/users/actions.ts';
import { ROLE } from '../src/users/roles.ts';

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

/**
 * `rounds` timings of `fn` (ms), after one run to warm up. BENCH_PROFILE=dir writes a CPU
 * profile of the timed rounds alone (not the seeding) there, one file per call (a spawned
 * server writes its own: see spawnedServer).
 */
export async function timed(rounds: number, fn: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  await fn();
  const profile = process.env.BENCH_PROFILE ? await startProfile() : null;
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  await profile?.stop(process.env.BENCH_PROFILE!);
  return times;
}

export async function startProfile() {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop(dir: string) {
      const { profile } = await session.post('Profiler.stop');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${Date.now()}.cpuprofile`), JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/**
 * `n` members made in bulk (copies of one made by the action the API uses: same settings
 * and groups), with their API keys. Emails are `${prefix}${i}@bench.example`.
 */
export async function seedMembers(svc: Services, realm: Realm, n: number, prefix = 'm'): Promise<{ id: number; email: string; auth: string }[]> {
  const template = await createUserAsOperator(svc, realm, { email: `${prefix}0@bench.example`, fullName: `${prefix} 0`, password: null, role: ROLE.MEMBER });
  await sql`
    insert into users (realm_id, email, delivery_email, full_name, role, api_key, timezone, settings, date_joined)
    select u.realm_id, ${prefix} || g || '@bench.example', ${prefix} || g || '@bench.example', ${prefix} || ' ' || g, u.role,
           md5(random()::text || g), 'Europe/Paris', u.settings, now()
    from users u, generate_series(1, ${n - 1}::integer) g where u.id = ${template.id}`.execute(svc.db);
  await sql`
    insert into user_group_members (realm_id, group_id, user_id)
    select m.realm_id, m.group_id, u.id from user_group_members m, users u
    where m.user_id = ${template.id} and u.realm_id = ${realm.id} and u.email like ${`${prefix}%@bench.example`} and u.id <> ${template.id}`.execute(svc.db);
  const rows = await svc.db
    .selectFrom('users')
    .select(['id', 'delivery_email', 'api_key'])
    .where('realm_id', '=', realm.id)
    .where('email', 'like', `${prefix}%@bench.example`)
    .orderBy('id')
    .execute();
  return rows.map((u) => ({ id: u.id, email: u.delivery_email, auth: `Basic ${Buffer.from(`${u.delivery_email}:${u.api_key}`).toString('base64')}` }));
}

/** The machine's 1-minute load average, for the figures' heading. */
export const loadAverage = () => loadavg()[0].toFixed(2);

/** A benchmark server's settings: known owner, no rate limits, cheap password hashing, quiet. */
export const SERVER_ENV = {
  BOOTSTRAP_EMAIL: 'owner@bench.example',
  BOOTSTRAP_PASSWORD: 'bench-password',
  RATE_LIMIT_PER_USER: '100000000',
  RATE_LIMIT_PER_IP: '100000000',
  EVENT_HEARTBEAT_MS: '600000',
  ARGON2_MEMORY_KIB: '1024',
  ARGON2_TIME_COST: '1',
  LOG_LEVEL: 'warn',
};

/**
 * A server in a process of its own, as deployed (sockets, its own CPU), on a database of
 * its own: `seed` first runs in this process on that database, then the server starts on it.
 */
export async function spawnedServer(name: string, seed?: (server: Awaited<ReturnType<typeof createServer>>, realm: Realm) => Promise<void>) {
  const dataDir = mkdtempSync(join(tmpdir(), `confab-bench-${name}-`));
  const database = process.env.DATABASE_URL ? await freshPostgresDatabase(`confab_bench_${name}`) : undefined;
  const env = {
    ...SERVER_ENV,
    ...(database ? { DATABASE_URL: database.url, DATA_DIR: ':memory:' } : { DATA_DIR: dataDir }),
  };
  if (seed) {
    const config = loadConfig({}, env);
    const server = await createServer(config, pino({ level: 'warn' }));
    try {
      await seed(server, await server.svc.db.selectFrom('realms').selectAll().executeTakeFirstOrThrow());
    } finally {
      await server.close();
    }
  }
  const port = await new Promise<number>((resolve) => {
    const s = netServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  // BENCH_PROFILE=dir: the server writes a CPU profile of its whole life there when it stops.
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const child = spawn(process.execPath, [...profile, 'src/main.ts'], {
    cwd: new URL('..', import.meta.url).pathname,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  // Every simulated client keeps its connection, as real ones do (Node's default keeps 256 idle
  // sockets: the rest were closed after each answer, and the server paid for closes and reconnects).
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: Infinity });
  const exited = new Promise((r) => child.on('exit', r));
  /** One API call over a socket; the reply's status and parsed body. */
  const call = (method: string, path: string, auth: string | null, params: Record<string, unknown> = {}) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const form = new URLSearchParams();
      for (const [k, v] of Object.entries(params)) form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
      const body = form.toString();
      const isGet = method === 'GET';
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method,
          agent,
          path: `/api/v1${path}${isGet && body ? `?${body}` : ''}`,
          headers: { ...(auth ? { authorization: auth } : {}), ...(!isGet ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (text += d));
          res.on('end', () => {
            try {
              resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
            } catch (e) {
              reject(e);
            }
          });
        },
      );
      req.on('error', reject);
      req.end(isGet ? undefined : body);
    });
  // Migrations on a busy machine can take minutes.
  for (let i = 0; ; i++) {
    const up = await call('GET', '/server_settings', null).catch(() => undefined);
    if (up) break;
    if (i > 3000 || child.exitCode !== null) {
      child.kill('SIGTERM');
      agent.destroy();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
      throw new Error('the server did not start');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    pid: child.pid!,
    call,
    dbKind: database ? 'postgres' : 'pglite',
    async close() {
      agent.destroy();
      child.kill('SIGTERM');
      await exited;
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** CPU time a process has used, in clock ticks. */
export function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Resolves once a process has been idle for 300 ms (every request sent has been handled). */
export async function waitIdle(pid: number): Promise<void> {
  let last = cpuTicks(pid);
  for (let quiet = 0; quiet < 3; ) {
    await new Promise((r) => setTimeout(r, 100));
    const now = cpuTicks(pid);
    quiet = now - last <= 1 ? quiet + 1 : 0;
    last = now;
  }
}

/** `fn` for 0..n-1, `size` at a time. */
export async function inBatches<T>(n: number, size: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < n; start += size) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(size, n - start) }, (_, j) => fn(start + j)))));
  }
  return out;
}

/** Writes a benchmark's lines to bench/results/<name>-<database>.txt. */
export function writeResults(name: string, dbKind: string, lines: string[]) {
  const dir = new URL('results/', import.meta.url).pathname;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}-${dbKind}.txt`), `${lines.join('\n')}\n`);
}
