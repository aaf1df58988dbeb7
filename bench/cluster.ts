// Scale-out benchmark (PostgreSQL + Redis). Three parts:
//  1. design: the cost, in Redis alone, of one event reaching N queues when queues are owned by
//     processes (one PUBLISH) or kept in the broker (an RPUSH per queue, then a PUBLISH), and of
//     one poll of a foreign queue (request/reply through the broker, or LRANGE on the broker);
//  2. sends per second and send -> all-queues latency with 1 and with 2 server processes: a
//     message to a channel of 50 subscribers (issue 14's send row), each with a live queue,
//     queues and senders spread over the processes; then direct messages. Beside each row the
//     CPU per send of the servers, the bench database's PostgreSQL backends, Redis and the load
//     generator (/proc/<pid>/stat), and the ceiling those costs put on 2 processes on this machine;
//  3. one message to 10,000 queues spread over 2 processes.
//
//   node bench/cluster.ts [--seconds 8] [--senders 16] [--queues 10000] [--parts design,throughput,fanout] [--processes 1,2]
//   DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test; the bench makes a database of
//   its own there) and BROKER_URL (redis://127.0.0.1:6379). bench/results/cluster.txt is written
//   when every part ran.

import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createServer as netServer } from 'node:net';
import { parseArgs } from 'node:util';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import pg from 'pg';
import { Redis } from 'ioredis';
import { freshPostgresDatabase } from '../test/support/postgres.ts';
import { SERVER_ENV } from './support.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '8' },
    queues: { type: 'string', default: '10000' },
    senders: { type: 'string', default: '16' },
    parts: { type: 'string', default: 'design,throughput,fanout' },
    processes: { type: 'string', default: '1,2' },
  },
});
const SECONDS = Number(values.seconds);
const FANOUT = Number(values.queues);
const SENDERS = Number(values.senders);
const SUBSCRIBERS = 50;
const POLL_MS = 1000;
const WARM_UP_SECONDS = 3;
const root = new URL('..', import.meta.url).pathname;
const brokerUrl = process.env.BROKER_URL ?? 'redis://127.0.0.1:6379';
const lines: string[] = [];
const report = (line: string) => {
  console.log(line);
  lines.push(line);
};

// ---- 1. design, in Redis alone ----
async function design(): Promise<void> {
  const pub = new Redis(brokerUrl);
  const subs = [new Redis(brokerUrl), new Redis(brokerUrl)];
  const event = JSON.stringify({ type: 'message', message: { id: 1, content: 'x'.repeat(200), sender_id: 1 } });
  for (const n of [100, FANOUT]) {
    let received = 0;
    for (const s of subs) {
      await s.subscribe('bench:design');
      s.on('message', () => received++);
    }
    const rounds = 50;
    let t = performance.now();
    for (let i = 0; i < rounds; i++) await pub.publish('bench:design', event);
    while (received < rounds * subs.length) await new Promise((r) => setImmediate(r));
    const owned = (performance.now() - t) / rounds;
    t = performance.now();
    for (let i = 0; i < 5; i++) {
      const p = pub.pipeline();
      for (let q = 0; q < n; q++) p.rpush(`bench:q:${q}`, event);
      p.publish('bench:design', 'wake');
      await p.exec();
    }
    const inBroker = (performance.now() - t) / 5;
    report(`design: one event to ${n} queues: owned by processes ${owned.toFixed(2)} ms (1 PUBLISH); kept in Redis ${inBroker.toFixed(2)} ms (${n} RPUSH)`);
    for (const s of subs) s.removeAllListeners('message');
    const keys = await pub.keys('bench:q:*');
    for (let i = 0; i < keys.length; i += 1000) await pub.del(...keys.slice(i, i + 1000));
  }
  // A foreign poll: request and reply through the broker (owned) or one LRANGE + LTRIM (in Redis).
  await subs[1].subscribe('bench:owner');
  subs[1].on('message', (_c, m) => void pub.publish('bench:reply', m));
  const replies = new Redis(brokerUrl);
  await replies.subscribe('bench:reply');
  let pending: (() => void) | undefined;
  replies.on('message', () => pending?.());
  let t = performance.now();
  for (let i = 0; i < 200; i++) {
    const back = new Promise<void>((r) => (pending = r));
    await pub.publish('bench:owner', String(i));
    await back;
  }
  const forwarded = (performance.now() - t) / 200;
  t = performance.now();
  for (let i = 0; i < 200; i++) await pub.multi().lrange('bench:poll', 0, -1).ltrim('bench:poll', 1, 0).exec();
  const kept = (performance.now() - t) / 200;
  report(`design: a poll of a foreign queue: forwarded to its owner ${forwarded.toFixed(3)} ms; read from Redis ${kept.toFixed(3)} ms`);
  for (const c of [pub, ...subs, replies]) c.disconnect();
}

// ---- servers ----
async function freePort(): Promise<number> {
  const s = netServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
const ownerAuth = { value: '' };

function call(port: number, method: string, path: string, params: Record<string, unknown> = {}, auth = ownerAuth.value): Promise<any> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  const body = form.toString();
  const isGet = method === 'GET';
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        agent,
        path: `/api/v1${path}${isGet ? `?${body}` : ''}`,
        headers: { authorization: auth, ...(isGet ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve(JSON.parse(text)));
      },
    );
    req.on('error', reject);
    if (!isGet) req.write(body);
    req.end();
  });
}

interface Cluster {
  ports: number[];
  pids: number[];
  databaseUrl: string;
}

async function cluster(processes: number, run: (c: Cluster) => Promise<void>): Promise<void> {
  const database = await freshPostgresDatabase(`confab_bench_cluster_${processes}`);
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  try {
    for (let i = 0; i < processes; i++) {
      const port = await freePort();
      const env = {
        ...process.env,
        PORT: String(port),
        DATABASE_URL: database.url,
        BROKER_URL: brokerUrl,
        BROKER_PREFIX: `bench-${process.pid}-${processes}`,
        ...SERVER_ENV,
      };
      children.push(spawn(process.execPath, ['src/main.ts'], { cwd: root, env, stdio: ['ignore', 'inherit', 'inherit'] }));
      for (;;) {
        const up = await call(port, 'GET', '/server_settings').catch(() => undefined);
        if (up) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      ports.push(port);
    }
    const login = await call(ports[0], 'POST', '/fetch_api_key', { username: 'owner@bench.example', password: 'bench-password' });
    ownerAuth.value = basic('owner@bench.example', login.api_key);
    await run({ ports, pids: children.map((c) => c.pid!), databaseUrl: database.url });
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode === null ? c.once('exit', r) : r(null)))));
    await database.drop();
  }
}

const basic = (email: string, key: string) => `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`;

/** Registers `count` queues for the owner, alternating over the processes. */
async function queues(ports: number[], count: number): Promise<{ port: number; id: string }[]> {
  const out: { port: number; id: string }[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = Array.from({ length: Math.min(50, count - i) }, (_, j) => ports[(i + j) % ports.length]);
    const regs = await Promise.all(batch.map((port) => call(port, 'POST', '/register', { event_types: ['message'], fetch_event_types: ['realm'] })));
    for (const [j, r] of regs.entries()) out.push({ port: batch[j], id: r.queue_id });
  }
  return out;
}

/** Parks a poll on each queue; resolves with the time at which every one answered. */
function parkAll(qs: { port: number; id: string; auth?: string }[], last: Map<string, number>): Promise<number> {
  return Promise.all(
    qs.map((q) =>
      call(q.port, 'GET', '/events', { queue_id: q.id, last_event_id: last.get(q.id) ?? -1 }, q.auth).then((r) => {
        const ev = r.events ?? [];
        if (ev.length) last.set(q.id, ev[ev.length - 1].id);
        return performance.now();
      }),
    ),
  ).then((times) => Math.max(...times));
}

// ---- CPU: seconds of CPU (user + system) of each process that works for a send ----
const TICKS = 100; // USER_HZ: /proc's clock ticks per second on Linux

/** CPU seconds of a process: user + system, and system alone (the kernel's share: sockets, wake-ups). */
function cpuOf(pid: number): { all: number; sys: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { all: (Number(f[11]) + Number(f[12])) / TICKS, sys: Number(f[12]) / TICKS };
  } catch {
    return undefined;
  }
}

/** Busy and total CPU seconds of the whole machine (every core), from /proc/stat. */
function machine(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0) / TICKS;
  return { busy: total - (f[3] + f[4]) / TICKS, total };
}

interface CpuSample {
  servers: number[];
  serversSys: number;
  database: Map<number, { all: number; sys: number }>;
  broker: number;
  client: number;
  machine: { busy: number; total: number };
}

/** What the run costs: the servers, the bench database's backends, Redis (shared), this process. */
class CpuMeter {
  readonly #pids: number[];
  readonly #db: pg.Client;
  readonly #dbPid: number;
  readonly #redis: Redis;
  #redisPid = 0;

  private constructor(pids: number[], db: pg.Client, dbPid: number, redis: Redis) {
    this.#pids = pids;
    this.#db = db;
    this.#dbPid = dbPid;
    this.#redis = redis;
  }

  static async open(c: Cluster): Promise<CpuMeter> {
    const db = new pg.Client({ connectionString: c.databaseUrl });
    await db.connect();
    const { rows } = await db.query('select pg_backend_pid() as pid');
    const meter = new CpuMeter(c.pids, db, rows[0].pid, new Redis(brokerUrl));
    const info = await meter.#redis.info('server');
    meter.#redisPid = Number(/process_id:(\d+)/.exec(info)?.[1]);
    return meter;
  }

  async sample(): Promise<CpuSample> {
    const { rows } = await this.#db.query('select pid from pg_stat_activity where datname = current_database() and pid <> $1', [this.#dbPid]);
    const database = new Map<number, { all: number; sys: number }>();
    for (const { pid } of rows) {
      const t = cpuOf(pid);
      if (t !== undefined) database.set(pid, t);
    }
    const u = process.cpuUsage();
    const servers = this.#pids.map((p) => cpuOf(p) ?? { all: 0, sys: 0 });
    return {
      servers: servers.map((t) => t.all),
      serversSys: servers.reduce((sum, t) => sum + t.sys, 0),
      database,
      broker: cpuOf(this.#redisPid)?.all ?? 0,
      client: (u.user + u.system) / 1e6,
      machine: machine(),
    };
  }

  async close(): Promise<void> {
    await this.#db.end();
    this.#redis.disconnect();
  }
}

interface CpuPerSend {
  /** ms of CPU per send: each server process, all of them, the database, the broker, the load generator. */
  servers: number[];
  server: number;
  database: number;
  /** The kernel's share of the server's and of the database's CPU. */
  serverSys: number;
  databaseSys: number;
  broker: number;
  client: number;
  /** Share of the machine's 2 cores busy during the run, and the part of it that was ours. */
  busy: number;
  ours: number;
}

function perSend(a: CpuSample, b: CpuSample, sends: number): CpuPerSend {
  const per = (x: number) => (x * 1000) / sends;
  const servers = b.servers.map((t, i) => per(t - a.servers[i]));
  // A backend that started during the run counts whole; one that ended is missed (the pool keeps them).
  let database = 0;
  let databaseSys = 0;
  for (const [pid, t] of b.database) {
    database += t.all - (a.database.get(pid)?.all ?? 0);
    databaseSys += t.sys - (a.database.get(pid)?.sys ?? 0);
  }
  const wall = b.machine.total - a.machine.total;
  const ourSeconds = b.servers.reduce((s, t, i) => s + t - a.servers[i], 0) + database + (b.broker - a.broker) + (b.client - a.client);
  const server = servers.reduce((s, x) => s + x, 0);
  return {
    servers,
    server,
    database: per(database),
    serverSys: per(b.serversSys - a.serversSys) / server,
    databaseSys: databaseSys / database,
    broker: per(b.broker - a.broker),
    client: per(b.client - a.client),
    busy: (b.machine.busy - a.machine.busy) / wall,
    ours: ourSeconds / wall,
  };
}

const load = () => loadavg()[0].toFixed(1);
const pct = (x: number) => `${(x * 100).toFixed(0)}%`;

interface User {
  id: number;
  email: string;
  auth: string;
  /** The process its queue is on and its requests go to. */
  port: number;
  queue: string;
}

interface Phase {
  rate: number;
  cpu: CpuPerSend;
  /** Polls that answered, per send. */
  polls: number;
  load: string;
}

/**
 * Sends from SENDERS users at once for `seconds`, each to its own process; measured with
 * `meter` (CPU) and `polls` (the pollers' count), unmeasured without.
 */
async function saturate(
  users: User[],
  body: (k: number, i: number) => Record<string, unknown>,
  measure?: { meter: CpuMeter; polls: { count: number } },
  duration = SECONDS,
): Promise<Phase | undefined> {
  const loadBefore = load();
  let sent = 0;
  const before = await measure?.meter.sample();
  const pollsBefore = measure?.polls.count ?? 0;
  const start = performance.now();
  const end = Date.now() + duration * 1000;
  await Promise.all(
    users.slice(0, SENDERS).map(async (u, k) => {
      for (let i = 0; Date.now() < end; i++) {
        const r = await call(u.port, 'POST', '/messages', body(k, i), u.auth);
        if (r.result === 'success') sent++;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  if (!measure || !before) return undefined;
  const after = await measure.meter.sample();
  const polls = (measure.polls.count - pollsBefore) / sent;
  return { rate: sent / seconds, cpu: perSend(before, after, sent), polls, load: `${loadBefore}-${load()}` };
}

interface Run {
  processes: number;
  channel: Phase;
  direct: Phase;
}

async function throughput(processes: number): Promise<Run> {
  let result: Run | undefined;
  await cluster(processes, async (c) => {
    const { ports } = c;
    // 50 members, each with a live queue; their queues and requests alternate over the processes.
    const users: User[] = [];
    for (let i = 0; i < SUBSCRIBERS; i++) {
      const email = `u${i}@bench.example`;
      const created = await call(ports[0], 'POST', '/users', { email, password: 'bench-password', full_name: `Bench User ${i}` });
      const { api_key } = await call(ports[0], 'POST', '/fetch_api_key', { username: email, password: 'bench-password' });
      users.push({ id: created.user_id, email, auth: basic(email, api_key), port: ports[i % ports.length], queue: '' });
    }
    await call(ports[0], 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'live' }], principals: users.map((u) => u.id) });
    for (const u of users) u.queue = (await call(u.port, 'POST', '/register', { event_types: ['message'], fetch_event_types: [] }, u.auth)).queue_id;
    const qs = users.map((u) => ({ port: u.port, id: u.queue, auth: u.auth }));
    const toChannel = (k: number, i: number) => ({
      type: 'stream',
      to: 'live',
      topic: `t${(k + i) % 10}`,
      content: `message ${i} from ${k} with **some** text`,
    });

    // Unmeasured: every pooled database connection opened and warm, the servers' code compiled,
    // their Markdown workers started; then every queue read up to date.
    await saturate(users, toChannel, undefined, WARM_UP_SECONDS);
    const last = new Map<string, number>();
    await parkAll(qs, last);

    // Send -> all 50 queues, one send at a time with a poll parked on every queue.
    const latencies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const parked = parkAll(qs, last);
      await new Promise((r) => setTimeout(r, 30));
      const u = users[i % SENDERS];
      const t = performance.now();
      await call(u.port, 'POST', '/messages', toChannel(i, i), u.auth);
      latencies.push((await parked) - t);
    }
    latencies.sort((a, b) => a - b);
    if (process.env.BENCH_DEBUG) console.log(latencies.map((l) => l.toFixed(0)).join(' '));

    // Throughput: every queue keeps being polled, at most every POLL_MS (a poll answers with all
    // that arrived since the last), so that the polls' cost does not grow as the sends slow down.
    let polling = true;
    const polls = { count: 0 };
    const pollers = qs.map(async (q) => {
      while (polling) {
        const next = performance.now() + POLL_MS;
        const r = await call(q.port, 'GET', '/events', { queue_id: q.id, last_event_id: last.get(q.id) ?? -1 }, q.auth);
        polls.count++;
        const ev = r.events ?? [];
        if (ev.length) last.set(q.id, ev[ev.length - 1].id);
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
      }
    });
    const meter = await CpuMeter.open(c);
    const measure = { meter, polls };
    const toSomeone = (k: number, i: number) => ({ type: 'direct', to: [users[(k + 1) % SUBSCRIBERS].id], content: `direct ${i} from ${k}` });
    const channel = (await saturate(users, toChannel, measure))!;
    const direct = (await saturate(users, toSomeone, measure))!;
    await meter.close();
    polling = false;
    // One last message answers the parked polls.
    await call(users[0].port, 'POST', '/messages', toChannel(0, 0), users[0].auth);
    await Promise.all(pollers);
    for (const q of qs) await call(q.port, 'DELETE', '/events', { queue_id: q.id }, q.auth);

    const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(1);
    report(`${processes} process(es), send -> all ${SUBSCRIBERS} queues (one send at a time): p50 ${p(0.5)} ms, p95 ${p(0.95)} ms`);
    for (const [name, phase] of [
      [`channel of ${SUBSCRIBERS}`, channel],
      ['direct messages', direct],
    ] as const) {
      const cpu = phase.cpu;
      const servers = cpu.servers.length > 1 ? ` (${cpu.servers.map((x) => x.toFixed(2)).join(' + ')})` : '';
      report(
        `${processes} process(es), ${name}, ${SENDERS} senders: ${phase.rate.toFixed(0)} sends/s (${phase.polls.toFixed(2)} polls per send); ` +
          `CPU ms per send: server ${cpu.server.toFixed(2)}${servers} (system ${pct(cpu.serverSys)}), database ${cpu.database.toFixed(2)} (system ${pct(cpu.databaseSys)}), ` +
          `Redis ${cpu.broker.toFixed(2)}, load generator ${cpu.client.toFixed(2)}; cores busy ${pct(cpu.busy)} (ours ${pct(cpu.ours)}); load average ${phase.load}`,
      );
    }
    result = { processes, channel, direct };
  });
  return result!;
}

/**
 * The 2-process ratio beside its ceiling. With one process CPU-bound at X ms per send, 1 process
 * does 1/X sends/ms; 2 processes on 2 cores that also run the database (Y), Redis (Z) and the load
 * generator (W) do at most 2/(X+Y+Z+W): a ratio of at most 2X/(X+Y+Z+W).
 */
function compare(name: string, one: Phase, two: Phase): void {
  const { server: x, database: y, broker: z, client: w } = one.cpu;
  const c2 = two.cpu;
  const atTwo = (2 * x) / (c2.server + c2.database + c2.broker + c2.client);
  report(
    `${name}: 2 processes = ${(two.rate / one.rate).toFixed(2)}x of 1 (${two.rate.toFixed(0)} / ${one.rate.toFixed(0)} sends/s). ` +
      `Ceiling on 2 cores, from the 1-process costs: 2X/(X+Y+Z) = ${((2 * x) / (x + y + z)).toFixed(2)}x; ` +
      `with the load generator on the same cores 2X/(X+Y+Z+W) = ${((2 * x) / (x + y + z + w)).toFixed(2)}x; ` +
      `with the 2-process costs in the denominator 2X/(X'+Y'+Z'+W') = ${atTwo.toFixed(2)}x; ` +
      `with the database and the load generator on other cores 2X/(X+Z) = ${((2 * x) / (x + z)).toFixed(2)}x. ` +
      `1 process used ${((x * one.rate) / 10).toFixed(0)}% of a core (not CPU-bound below 100%: the ceiling then says more than the ratio)`,
  );
}

async function fanout(): Promise<void> {
  await cluster(2, async ({ ports }) => {
    const t0 = performance.now();
    const qs = await queues(ports, FANOUT);
    const registered = performance.now() - t0;
    // The last queue of each process is delivered to last: parked polls on a sample that includes them.
    const sample = [...qs.slice(0, 50), ...qs.slice(-50)];
    const last = new Map<string, number>();
    // Unmeasured: a first send through each process (a cold one took seconds), then the sample read.
    for (const port of ports) await call(port, 'POST', '/messages', { type: 'direct', to: ['owner@bench.example'], content: 'warm-up' });
    await parkAll(sample, last);
    const rounds: number[] = [];
    for (let i = 0; i < 3; i++) {
      const parked = parkAll(sample, last);
      await new Promise((r) => setTimeout(r, 200));
      const t = performance.now();
      await call(ports[i % 2], 'POST', '/messages', { type: 'direct', to: ['owner@bench.example'], content: `fan-out ${i}` });
      rounds.push((await parked) - t);
    }
    report(
      `fan-out: ${FANOUT} queues over 2 processes (registered in ${(registered / 1000).toFixed(1)} s): send -> last queue ${rounds.map((r) => r.toFixed(0)).join(', ')} ms`,
    );
  });
}

const parts = values.parts.split(',');
if (parts.includes('design')) await design();
if (parts.includes('throughput')) {
  const runs = [];
  for (const n of values.processes.split(',')) runs.push(await throughput(Number(n)));
  const [one, two] = runs;
  if (two) {
    compare(`channel of ${SUBSCRIBERS}`, one.channel, two.channel);
    compare('direct messages', one.direct, two.direct);
  }
}
if (parts.includes('fanout')) await fanout();
mkdirSync(new URL('results', import.meta.url), { recursive: true });
if (parts.length === 3) writeFileSync(new URL('results/cluster.txt', import.meta.url), `${new Date().toISOString()}\n${lines.join('\n')}\n`);
agent.destroy();
