// Mixed workload: simulated users against a server in its own process, over sockets.
// Each user holds an event queue with a long-poll always parked, sends a message to
// their team's channel (TEAM members) every 60 s and reads its newest 50 messages
// every 30 s, each at a random phase. The number of users steps up; a step holds when
// the sends' p99 stays under 1 s and nothing failed. Prints each step and the largest
// number of users that held.
//
//   node bench/workload.ts [--steps 250,500,1000] [--large] [--seconds 60] [--team 50]
//   --large: steps up to 10,000 users (several minutes each on 2 cores)
//   DATABASE_URL=postgres://... node bench/workload.ts    (default: embedded PGlite)
//
// The load generator shares the machine with the server (and PostgreSQL): on 2 cores
// its own CPU counts against the server's.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { cpuTicks, inBatches, loadAverage, quantile, seedMembers, spawnedServer, writeResults } from './support.ts';
import { recountSubscribers } from '../src/channels/subscriber-counts.ts';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '250,500,1000' },
    large: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '60' },
    team: { type: 'string', default: '50' },
  },
});
const STEPS = values.large ? [250, 500, 1000, 2000, 3000, 4000, 5000, 6000, 8000, 10000] : values.steps.split(',').map(Number);
const SECONDS = Number(values.seconds);
const TEAM = Number(values.team);
const SEND_EVERY_MS = 60_000;
const READ_EVERY_MS = 30_000;
const SEND_P99_GOAL_MS = 1000;
const GOAL_USERS = 5000;
const MAX = Math.max(...STEPS);

let users: { id: number; auth: string; team: number }[] = [];
const seedStart = performance.now();
const server = await spawnedServer('workload', async ({ svc, app }, realm) => {
  const members = await seedMembers(svc, realm, MAX, 'w');
  const owner = await svc.db
    .selectFrom('users')
    .select(['delivery_email', 'api_key'])
    .where('delivery_email', '=', 'owner@bench.example')
    .executeTakeFirstOrThrow();
  const ownerAuth = `Basic ${Buffer.from(`${owner.delivery_email}:${owner.api_key}`).toString('base64')}`;
  const teams = Math.ceil(MAX / TEAM);
  const channelIds: number[] = [];
  for (let t = 0; t < teams; t++) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/channels/create',
      payload: new URLSearchParams({ name: `team ${t}`, subscribers: JSON.stringify([members[t * TEAM].id]) }).toString(),
      headers: { authorization: ownerAuth, 'content-type': 'application/x-www-form-urlencoded' },
    });
    if (res.statusCode !== 200) throw new Error(`channel: ${res.body}`);
    channelIds.push(JSON.parse(res.body).id);
  }
  // The rest of each team in bulk, as the subscribe action would leave them.
  await sql`
    insert into subscriptions (realm_id, user_id, channel_id, color)
    select ${realm.id}::integer, t.u, t.c, '#76ce90'
    from unnest(${members.map((m) => m.id)}::integer[], ${members.map((_, i) => channelIds[Math.floor(i / TEAM)])}::integer[]) as t(u, c)
    on conflict do nothing`.execute(svc.db);
  await recountSubscribers(svc.db, realm.id);
  await sql`analyze`.execute(svc.db);
  users = members.map((m, i) => ({ id: m.id, auth: m.auth, team: Math.floor(i / TEAM) }));
});
const seedSeconds = (performance.now() - seedStart) / 1000;
const { call } = server;

interface StepResult {
  users: number;
  sends: number[];
  reads: number[];
  deliveries: number[];
  errors: string[];
  serverCpu: number;
  generatorCpu: number;
  machineBusy: number;
  registerSeconds: number;
}

async function step(n: number): Promise<StepResult> {
  const errors: string[] = [];
  const sends: number[] = [];
  const reads: number[] = [];
  const deliveries: number[] = [];
  const fail = (what: string) => {
    if (errors.length < 5) errors.push(what);
    else errors.push('');
  };
  const registerStart = performance.now();
  const queues = await inBatches(n, 100, async (i) => {
    const u = users[i];
    const res = await call('POST', '/register', u.auth, { event_types: ['message'], fetch_event_types: ['message'] });
    if (res.status !== 200) throw new Error(`register: ${JSON.stringify(res.body)}`);
    return { u, id: res.body.queue_id as string, last: res.body.last_event_id as number };
  });
  const registerSeconds = (performance.now() - registerStart) / 1000;

  let running = true;
  const timers: NodeJS.Timeout[] = [];
  const polls = queues.map(async (q) => {
    while (running) {
      try {
        const res = await call('GET', '/events', q.u.auth, { queue_id: q.id, last_event_id: q.last });
        if (!running) break;
        if (res.status !== 200) {
          fail(`GET /events ${res.status} ${res.body.msg}`);
          break;
        }
        const now = performance.now();
        for (const e of res.body.events) {
          q.last = e.id;
          const sentAt = /sent at (\d+)/.exec(e.message?.content ?? '');
          if (sentAt && e.message.sender_id !== q.u.id) deliveries.push(now - Number(sentAt[1]) / 1000);
        }
      } catch (e) {
        if (running) fail(`GET /events ${(e as Error).message}`);
        break;
      }
    }
  });
  // Sends and reads under way, awaited before the step ends (and the server with it).
  const inFlight = new Set<Promise<void>>();
  const start = (act: () => Promise<void>) => {
    const p = act().finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  const every = (period: number, act: () => Promise<void>) => {
    timers.push(
      setTimeout(() => {
        start(act);
        timers.push(setInterval(() => start(act), period));
      }, Math.random() * period),
    );
  };
  for (const q of queues) {
    every(SEND_EVERY_MS, async () => {
      const t0 = performance.now();
      const res = await call('POST', '/messages', q.u.auth, {
        type: 'stream',
        to: `team ${q.u.team}`,
        topic: `topic ${Math.floor(Math.random() * 5)}`,
        content: `a message from a simulated user, sent at ${Math.round(t0 * 1000)}`,
      }).catch((e: Error) => ({ status: 0, body: { msg: e.message } }));
      if (res.status === 200) sends.push(performance.now() - t0);
      else fail(`POST /messages ${res.status} ${res.body.msg}`);
    });
    every(READ_EVERY_MS, async () => {
      const t0 = performance.now();
      const res = await call('GET', '/messages', q.u.auth, {
        anchor: 'newest',
        num_before: 50,
        num_after: 0,
        narrow: [{ operator: 'channel', operand: `team ${q.u.team}` }],
      }).catch((e: Error) => ({ status: 0, body: { msg: e.message } }));
      if (res.status === 200) reads.push(performance.now() - t0);
      else fail(`GET /messages ${res.status} ${res.body.msg}`);
    });
  }
  const cpuStart = cpuTicks(server.pid);
  const ownStart = process.cpuUsage();
  const machineStart = machineTicks();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const serverCpu = (cpuTicks(server.pid) - cpuStart) / 100 / SECONDS;
  const own = process.cpuUsage(ownStart);
  // Whether the step measured the server or the machine: the load generator's own CPU, and
  // how busy all cores were (a saturated machine queues requests in every process).
  const generatorCpu = (own.user + own.system) / 1e6 / SECONDS;
  const machine = machineTicks();
  const machineBusy = (machine.busy - machineStart.busy) / (machine.total - machineStart.total);
  running = false;
  for (const t of timers) clearTimeout(t);
  // Deleting a queue ends its parked poll.
  await inBatches(queues.length, 100, (i) => call('DELETE', '/events', queues[i].u.auth, { queue_id: queues[i].id }).catch(() => undefined));
  // A poll the deletion did not reach stays parked until the (long) heartbeat: wait a bounded time.
  await Promise.race([Promise.all([...polls, ...inFlight]), new Promise((r) => setTimeout(r, 30_000))]);
  return { users: n, sends, reads, deliveries, errors, serverCpu, generatorCpu, machineBusy, registerSeconds };
}

/** All cores' busy and total clock ticks so far (/proc/stat). */
function machineTicks(): { busy: number; total: number } {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const ticks = fields.map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  // idle and iowait
  return { busy: total - ticks[3]! - (ticks[4] ?? 0), total };
}

const fmt = (xs: number[], q: number) => (xs.length ? `${quantile(xs, q).toFixed(0)} ms` : '-');
const lines = [
  `workload benchmark: ${server.dbKind}; node ${process.version}; ${new Date().toISOString()}; load average ${loadAverage()} at the start`,
  `each user: a parked long-poll, a send to a channel of ${TEAM} every 60 s, the newest 50 of it read every 30 s; ${SECONDS} s per step (seeded in ${seedSeconds.toFixed(0)} s)`,
];
console.log(lines.join('\n'));
let held = 0;
try {
  // Warm: the first send and read load what they need once (rendering, plans).
  await call('POST', '/messages', users[0].auth, { type: 'stream', to: 'team 0', topic: 'warm', content: 'warm' });
  await call('GET', '/messages', users[0].auth, { anchor: 'newest', num_before: 50, num_after: 0, narrow: [{ operator: 'channel', operand: 'team 0' }] });
  for (const n of STEPS) {
    const r = await step(n);
    const holds = r.errors.length === 0 && r.sends.length > 0 && quantile(r.sends, 0.99) < SEND_P99_GOAL_MS;
    const line =
      `  ${String(n).padStart(6)} users: ${holds ? 'holds' : 'FAILS'}; sends ${r.sends.length} p50 ${fmt(r.sends, 0.5)} p99 ${fmt(r.sends, 0.99)};` +
      ` reads ${r.reads.length} p50 ${fmt(r.reads, 0.5)} p99 ${fmt(r.reads, 0.99)}; delivery p99 ${fmt(r.deliveries, 0.99)};` +
      ` server CPU ${r.serverCpu.toFixed(2)} cores, load generator ${r.generatorCpu.toFixed(2)}, all cores ${(r.machineBusy * 100).toFixed(0)}% busy;` +
      ` ${r.errors.length} errors${r.errors.length ? ` (${r.errors.filter(Boolean).join('; ')})` : ''};` +
      ` registered in ${r.registerSeconds.toFixed(1)} s`;
    console.log(line);
    lines.push(line);
    if (!holds) break;
    held = n;
  }
} finally {
  await server.close();
}
const summary = `[table] simulated active users (send p99 < ${SEND_P99_GOAL_MS} ms, no errors), largest step that held: ${held} of steps ${STEPS.join(', ')}   goal >= ${GOAL_USERS}: ${held >= GOAL_USERS ? 'met' : 'NOT met'}`;
console.log(summary);
lines.push(summary);
writeResults('workload', server.dbKind, lines);
