// What every benchmark starts from: a server on a database of its own, dropped
// afterwards (a PGlite directory, or a fresh database on the DATABASE_URL server;
// never that server's own tables).

import { spawn } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer as netServer, type Socket } from 'node:net';
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
  // 100 µs samples: a request of a few ms needs more than the default's 1 ms.
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
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
  // BENCH_NODE_FLAGS='--trace-gc --max-semi-space-size=64': the server's own Node and V8 flags.
  const flags = process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...profile, ...flags, 'src/main.ts'], {
    cwd: new URL('..', import.meta.url).pathname,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  // Every simulated client keeps its connection, as real ones do (closing after each answer
  // made the server pay for closes and reconnects), over a client cheap enough not to take the
  // cores the server needs (rawHttpClient).
  const client = rawHttpClient(port);
  const exited = new Promise((r) => child.on('exit', r));
  /** One API call over a socket; the reply's status and parsed body. */
  const call = async (method: string, path: string, auth: string | null, params: Record<string, unknown> = {}) => {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
    const body = form.toString();
    const isGet = method === 'GET';
    const headers = `${auth ? `Authorization: ${auth}\r\n` : ''}${!isGet ? 'Content-Type: application/x-www-form-urlencoded\r\n' : ''}`;
    const res = await client.request(method, `/api/v1${path}${isGet && body ? `?${body}` : ''}`, headers, isGet ? undefined : body);
    return { status: res.status, body: JSON.parse(res.text) };
  };
  // Migrations on a busy machine can take minutes.
  for (let i = 0; ; i++) {
    const up = await call('GET', '/server_settings', null).catch(() => undefined);
    if (up) break;
    if (i > 3000 || child.exitCode !== null) {
      child.kill('SIGTERM');
      client.destroy();
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
      client.destroy();
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

/**
 * HTTP/1.1 over keep-alive sockets to 127.0.0.1:`port`, one request at a time per socket,
 * as many sockets as requests in flight: the same requests as Node's http client with an
 * agent that keeps every socket, and the same answers (status and body), for a fraction of
 * its CPU (no parser, message or agent objects per request). Answers carry Content-Length.
 */
export function rawHttpClient(port: number) {
  interface Connection {
    socket: Socket;
    done?: (err: Error | null, answer?: { status: number; text: string }) => void;
    chunks: Buffer[];
  }
  const idle: Connection[] = [];
  const all = new Set<Connection>();
  const HEADER_END = Buffer.from('\r\n\r\n');

  const open = (): Connection => {
    const conn: Connection = { socket: connect(port, '127.0.0.1'), chunks: [] };
    conn.socket.setNoDelay(true);
    all.add(conn);
    const fail = (err: Error) => {
      all.delete(conn);
      const i = idle.indexOf(conn);
      if (i >= 0) idle.splice(i, 1);
      const done = conn.done;
      conn.done = undefined;
      done?.(err);
    };
    conn.socket.on('error', fail);
    conn.socket.on('close', () => fail(new Error('socket closed')));
    conn.socket.on('data', (data: Buffer) => {
      conn.chunks.push(data);
      const whole = conn.chunks.length === 1 ? conn.chunks[0] : Buffer.concat(conn.chunks);
      conn.chunks = [whole];
      const end = whole.indexOf(HEADER_END);
      if (end < 0) return;
      const head = whole.toString('latin1', 0, end);
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      if (!length) return fail(new Error(`an answer without Content-Length: ${head}`));
      const bodyEnd = end + 4 + Number(length[1]);
      if (whole.length < bodyEnd) return;
      const answer = { status: Number(head.slice(9, 12)), text: whole.toString('utf8', end + 4, bodyEnd) };
      conn.chunks = [];
      const done = conn.done;
      conn.done = undefined;
      if (/\r\nconnection: *close/i.test(head)) {
        all.delete(conn);
        conn.socket.destroy();
      } else {
        idle.push(conn);
      }
      done?.(null, answer);
    });
    return conn;
  };

  return {
    /** `headers`: extra header lines, each ending in CRLF. */
    request(method: string, path: string, headers: string, body?: string): Promise<{ status: number; text: string }> {
      const conn = idle.pop() ?? open();
      return new Promise((resolve, reject) => {
        conn.done = (err, answer) => (err ? reject(err) : resolve(answer!));
        const length = body === undefined ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`;
        conn.socket.write(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: keep-alive\r\n${headers}${length}\r\n${body ?? ''}`);
      });
    },
    destroy() {
      for (const conn of all) conn.socket.destroy();
      all.clear();
      idle.length = 0;
    },
  };
}
