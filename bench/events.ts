// Event system benchmark: a server in its own process holds QUEUES registered
// queues, each with a long-poll parked over a real socket; one action then
// produces an event for every one of them. Prints the server's memory for the
// queues and the latency from the action to the event's arrival in each queue.
//
//   node bench/events.ts [--queues 10000] [--users 100] [--rounds 5]
//   DATABASE_URL=postgres://... node bench/events.ts    (default: embedded PGlite)

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { createServer as netServer } from 'node:net';

const { values } = parseArgs({
  options: { queues: { type: 'string', default: '10000' }, users: { type: 'string', default: '100' }, rounds: { type: 'string', default: '5' } },
});
const QUEUES = Number(values.queues);
const USERS = Number(values.users);
const ROUNDS = Number(values.rounds);
const root = new URL('..', import.meta.url).pathname;

const port = await new Promise<number>((resolve) => {
  const s = netServer().listen(0, '127.0.0.1', () => {
    const p = (s.address() as { port: number }).port;
    s.close(() => resolve(p));
  });
});
const dataDir = mkdtempSync(join(tmpdir(), 'confab-bench-'));
const child = spawn(process.execPath, ['src/main.ts'], {
  cwd: root,
  env: {
    ...process.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    BOOTSTRAP_EMAIL: 'owner@bench.example',
    BOOTSTRAP_PASSWORD: 'bench-password',
    RATE_LIMIT_PER_USER: '100000000',
    RATE_LIMIT_PER_IP: '100000000',
    EVENT_HEARTBEAT_MS: '600000',
    ARGON2_MEMORY_KIB: '1024',
    ARGON2_TIME_COST: '1',
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

interface Reply {
  status: number;
  body: any;
}

function call(method: string, path: string, auth: string | null, params: Record<string, unknown> = {}): Promise<Reply> {
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
        path: `/api/v1${path}${isGet && body ? `?${body}` : ''}`,
        headers: {
          ...(auth ? { authorization: auth } : {}),
          ...(!isGet ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(isGet ? undefined : body);
  });
}

const basic = (email: string, key: string) => `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`;

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

async function inBatches<T>(n: number, size: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < n; start += size) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(size, n - start) }, (_, j) => fn(start + j)))));
  }
  return out;
}

/** CPU time the process has used, in clock ticks. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Waits until the server has been idle for a while: every poll sent has parked. */
async function waitIdle(pid: number): Promise<void> {
  let last = cpuTicks(pid);
  for (let quiet = 0; quiet < 3; ) {
    await new Promise((r) => setTimeout(r, 100));
    const now = cpuTicks(pid);
    quiet = now - last <= 1 ? quiet + 1 : 0;
    last = now;
  }
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

try {
  for (let i = 0; ; i++) {
    try {
      await call('GET', '/server_settings', null);
      break;
    } catch {
      if (i > 600) throw new Error('server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const login = await call('POST', '/fetch_api_key', null, { username: 'owner@bench.example', password: 'bench-password' });
  const owner = basic('owner@bench.example', login.body.api_key);

  const users = await inBatches(USERS, 20, async (i) => {
    const email = `u${i}@bench.example`;
    const created = await call('POST', '/users', owner, { email, password: 'bench-password', full_name: `Bench User ${i}` });
    if (created.status !== 200) throw new Error(`POST /users: ${JSON.stringify(created.body)}`);
    const key = await call('POST', '/fetch_api_key', null, { username: email, password: 'bench-password' });
    return { auth: basic(email, key.body.api_key), id: created.body.user_id as number };
  });
  // The action of every round: renaming a user everyone sees.
  const renamed = users[0].id;
  await new Promise((r) => setTimeout(r, 500));
  const rssBefore = rssMiB(child.pid!);

  const queues = await inBatches(QUEUES, 200, async (i) => {
    const auth = users[i % users.length].auth;
    const res = await call('POST', '/register', auth, { event_types: ['realm_user'], fetch_event_types: [] });
    return { auth, id: res.body.queue_id as string, last: res.body.last_event_id as number };
  });

  const latencies: number[] = [];
  const parkTimes: number[] = [];
  let rssParked = 0;
  for (let round = 0; round < ROUNDS; round++) {
    let t0 = 0;
    const arrivals = queues.map((q) =>
      call('GET', '/events', q.auth, { queue_id: q.id, last_event_id: q.last }).then((res) => {
        const took = performance.now() - t0;
        const events = res.body.events as { id: number }[];
        if (events.length > 0) q.last = events[events.length - 1].id;
        return took;
      }),
    );
    // Let every poll reach the server and park.
    const parkStart = performance.now();
    await waitIdle(child.pid!);
    parkTimes.push(performance.now() - parkStart - 300);
    if (round === 0) rssParked = rssMiB(child.pid!);
    t0 = performance.now();
    const action = await call('PATCH', `/users/${renamed}`, owner, { full_name: `Renamed ${round}` });
    if (action.status !== 200) throw new Error(`PATCH /users: ${JSON.stringify(action.body)}`);
    latencies.push(...(await Promise.all(arrivals)));
  }
  latencies.sort((a, b) => a - b);
  const lines = [
    `event queues: ${QUEUES} queues of ${USERS} users, each with a parked long-poll over its own socket (${child.pid ? 'server in its own process' : ''})`,
    `database: ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}; node ${process.version}; ${new Date().toISOString()}`,
    `server RSS before queues: ${rssBefore.toFixed(1)} MiB; with queues and parked polls: ${rssParked.toFixed(1)} MiB`,
    `memory per queue with its parked poll: ${(((rssParked - rssBefore) * 1024) / QUEUES).toFixed(1)} KiB`,
    `parking ${QUEUES} polls took ${Math.min(...parkTimes).toFixed(0)} ms at best (${((QUEUES / Math.min(...parkTimes)) * 1000).toFixed(0)} polls/s)`,
    `action -> event in every queue, ${ROUNDS} rounds (${latencies.length} arrivals):`,
    `  p50 ${quantile(latencies, 0.5).toFixed(1)} ms   p99 ${quantile(latencies, 0.99).toFixed(1)} ms   max ${latencies[latencies.length - 1].toFixed(1)} ms`,
  ];
  console.log(lines.join('\n'));
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/events.txt'), `${lines.join('\n')}\n`);
} finally {
  agent.destroy();
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
