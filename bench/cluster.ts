// Scale-out benchmark (PostgreSQL + Redis). Three parts:
//  1. design: the cost, in Redis alone, of one event reaching N queues when queues are owned by
//     processes (one PUBLISH) or kept in the broker (an RPUSH per queue, then a PUBLISH), and of
//     one poll of a foreign queue (request/reply through the broker, or LRANGE on the broker);
//  2. sends per second and send -> all-queues latency with 1 and with 2 server processes;
//  3. one message to 10,000 queues spread over 2 processes.
//
//   node bench/cluster.ts [--seconds 8] [--queues 10000]
//   DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and BROKER_URL (redis://127.0.0.1:6379)

import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createServer as netServer } from 'node:net';
import { parseArgs } from 'node:util';
import { mkdirSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import { Redis } from 'ioredis';
import { SERVER_ENV } from './support.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '8' }, queues: { type: 'string', default: '10000' } } });
const SECONDS = Number(values.seconds);
const FANOUT = Number(values.queues);
const root = new URL('..', import.meta.url).pathname;
const baseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
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
let auth = '';

function call(port: number, method: string, path: string, params: Record<string, unknown> = {}): Promise<any> {
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

async function cluster(processes: number, run: (ports: number[]) => Promise<void>): Promise<void> {
  const name = `confab_bench_${process.pid}_${processes}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  try {
    for (let i = 0; i < processes; i++) {
      const port = await freePort();
      const env = {
        ...process.env,
        PORT: String(port),
        DATABASE_URL: url.toString(),
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
    auth = `Basic ${Buffer.from(`owner@bench.example:${login.api_key}`).toString('base64')}`;
    await run(ports);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode === null ? c.once('exit', r) : r(null)))));
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

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
function parkAll(qs: { port: number; id: string }[], last: Map<string, number>): Promise<number> {
  return Promise.all(
    qs.map((q) =>
      call(q.port, 'GET', '/events', { queue_id: q.id, last_event_id: last.get(q.id) ?? -1 }).then((r) => {
        const ev = r.events ?? [];
        if (ev.length) last.set(q.id, ev[ev.length - 1].id);
        return performance.now();
      }),
    ),
  ).then((times) => Math.max(...times));
}

async function throughput(processes: number): Promise<void> {
  await cluster(processes, async (ports) => {
    // Send -> all queues: 20 queues over the processes, each with a parked poll.
    const qs = await queues(ports, 20);
    const last = new Map<string, number>();
    const latencies: number[] = [];
    for (let i = 0; i < 15; i++) {
      const parked = parkAll(qs, last);
      await new Promise((r) => setTimeout(r, 30));
      const t = performance.now();
      await call(ports[i % ports.length], 'POST', '/messages', { type: 'direct', to: ['owner@bench.example'], content: `latency ${i}` });
      latencies.push((await parked) - t);
    }
    latencies.sort((a, b) => a - b);
    // Sends per second: 32 concurrent senders for SECONDS, spread over the processes.
    let sent = 0;
    const end = Date.now() + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: 32 }, async (_, k) => {
        while (Date.now() < end) {
          const r = await call(ports[k % ports.length], 'POST', '/messages', { type: 'direct', to: ['owner@bench.example'], content: `load ${k}` });
          if (r.result === 'success') sent++;
        }
      }),
    );
    report(
      `${processes} process(es): ${(sent / SECONDS).toFixed(0)} sends/s; send -> all 20 queues p50 ${latencies[7].toFixed(1)} ms, p95 ${latencies[13].toFixed(1)} ms`,
    );
    // The queues hold the load's messages; drain so the processes stop cleanly and fast.
    for (const q of qs) await call(q.port, 'DELETE', '/events', { queue_id: q.id });
  });
}

async function fanout(): Promise<void> {
  await cluster(2, async (ports) => {
    const t0 = performance.now();
    const qs = await queues(ports, FANOUT);
    const registered = performance.now() - t0;
    // The last queue of each process is delivered to last: parked polls on a sample that includes them.
    const sample = [...qs.slice(0, 50), ...qs.slice(-50)];
    const last = new Map<string, number>();
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

await design();
await throughput(1);
await throughput(2);
await fanout();
mkdirSync(new URL('results', import.meta.url), { recursive: true });
writeFileSync(new URL('results/cluster.txt', import.meta.url), `${new Date().toISOString()}\n${lines.join('\n')}\n`);
agent.destroy();
