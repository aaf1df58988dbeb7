// Messages benchmark, on one database (embedded PGlite, or DATABASE_URL):
//
// 1. send throughput to a channel of 50 subscribers, each with a live queue,
//    from one sender in turn and from 10 senders at once;
// 2. latency from a send to its event in all 50 queues (p50, p99);
// 3. GET /messages latency for 100 messages: the newest of one channel, and around
//    anchors spread over the history, narrowed to that channel and to the caller's
//    own history, over a history of at least 1,000,000 messages.
//
// Beside each figure, the same work done by bare SQL on the same database, and
// the ratio. Requests go through the whole HTTP stack without sockets (injected into the
// server's request listener: the lean GET /events, else Fastify's routing, authentication,
// parameters, serialization).
//
//   node bench/messages.ts [--history 1000000] [--sends 300] [--rounds 30] [--only-big | --only-fetch | --only-sends]
//
// --only-sends: the 50-subscriber sends from 10 senders alone, with the CPU per send of this
// process and (PostgreSQL) of the database's backends: for A/B pairs of that send.
// --only-big: the 5,000-subscriber rows alone (no 50-subscriber sends, no history, nothing
// written to bench/results/): for A/B pairs of that send.
// --only-fetch: the GET /messages rows alone, with this process's CPU per request (no sends,
// nothing written to bench/results/): for A/B pairs of the fetch.

import { parseArgs } from 'node:util';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { createUserAsOperator } from '../src/users/actions.ts';
import { ROLE } from '../src/users/roles.ts';
import { benchServer, cpuTicks, loadAverage, ms, quantile, seedMembers, startProfile, timed } from './support.ts';
import { injectRequest } from '../test/support/inject.ts';
import { recountSubscribers } from '../src/channels/subscriber-counts.ts';
import { FORMATTED_COLUMNS as MESSAGE_COLUMNS } from '../src/messages/format.ts';
import type { Realm } from '../src/realm/tables.ts';

const { values } = parseArgs({
  options: {
    history: { type: 'string', default: '1000000' },
    sends: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '30' },
    'only-big': { type: 'boolean', default: false },
    'only-fetch': { type: 'boolean', default: false },
    'only-sends': { type: 'boolean', default: false },
  },
});
const ONLY_BIG = values['only-big'];
const ONLY_FETCH = values['only-fetch'];
const ONLY_SENDS = values['only-sends'];
/** GET /messages requests timed per row. */
const ROUNDS = Number(values.rounds);
const HISTORY = Number(values.history);
const SENDS = ONLY_BIG ? 0 : Number(values.sends);
/** One sender in turn: with --only-sends, a warm-up only. */
const SEQUENTIAL = ONLY_SENDS ? Math.min(SENDS, 30) : SENDS;
const SUBSCRIBERS = 50;
const SENDERS = 10;
const BIG_CHANNEL = 5000;
const BIG_SENDS = 30;
/** Of the big channel's members, how many are active (the rest long-term idle) in its second row. */
const BIG_ACTIVE = 250;
const root = new URL('..', import.meta.url).pathname;

const bench = await benchServer('messages');
const { server, databaseUrl } = bench;
const { svc, app } = server;
const db = svc.db;

interface Caller {
  id: number;
  auth: string;
}

/**
 * On PostgreSQL, the share of the server's busy connections that wait on a lock while
 * `run` runs (sampled every 5 ms from pg_stat_activity): sends that queue behind each other.
 */
async function lockWaits<T>(run: () => Promise<T>): Promise<[T, number | undefined]> {
  if (!databaseUrl) return [await run(), undefined];
  const probe = new pg.Client({ connectionString: databaseUrl });
  await probe.connect();
  let busy = 0;
  let waiting = 0;
  let done = false;
  const sampling = (async () => {
    while (!done) {
      const { rows } = await probe.query(
        `select count(*) filter (where state = 'active')::integer as busy, count(*) filter (where state = 'active' and wait_event_type = 'Lock')::integer as waiting
         from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
      );
      busy += rows[0].busy;
      waiting += rows[0].waiting;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  try {
    return [await run(), busy === 0 ? 0 : waiting / busy];
  } finally {
    done = true;
    await sampling;
    await probe.end();
  }
}

/** The database's backends (PostgreSQL): their process ids, read from pg_stat_activity. */
async function backendPids(): Promise<number[]> {
  if (!databaseUrl) return [];
  const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database()`.execute(db);
  return rows.map((r) => r.pid);
}

/**
 * `run`'s rate (of `n` operations) and CPU per operation in ms: this process's (on PGlite the
 * database's too) and, on PostgreSQL, the backends' (from /proc: the server is on this machine).
 */
async function cpuPerCall(run: () => Promise<number>, n: number): Promise<[{ rate: number; ms: number }, number | undefined]> {
  const pids = await backendPids();
  const ticks = (ps: number[]) => ps.reduce((sum, pid) => sum + cpuTicks(pid), 0);
  const before = process.cpuUsage();
  const backendsBefore = ticks(pids);
  const rate = await run();
  const used = process.cpuUsage(before);
  // Connections the run opened started at 0 ticks; those it closed are lost (the pool keeps them).
  const after = await backendPids();
  const backendMs = databaseUrl ? ((ticks(after) - backendsBefore) * 10) / n : undefined;
  return [{ rate, ms: (used.user + used.system) / 1000 / n }, backendMs];
}

/**
 * GET /messages as a socket would see it: the answer's bytes, not decoded or parsed (as
 * bench/register.ts reads register's). The client's JSON.parse of 70 kB is the client's work;
 * bare SQL's rows are parsed by its driver, which both sides pay.
 */
async function fetchBytes(c: Caller, params: Record<string, unknown>): Promise<number> {
  const res = await injectRequest(app, { method: 'GET', url: `/api/v1/messages?${formOf(params)}`, headers: { authorization: c.auth }, payloadAsStream: true });
  let bytes = 0;
  for await (const chunk of res.stream()) bytes += (chunk as Buffer).length;
  if (res.statusCode !== 200) throw new Error(`GET /messages: ${res.statusCode}`);
  return bytes;
}

/** Parameters as a client sends them: strings as they are, anything else as JSON. */
function formOf(params: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  return form.toString();
}

async function call(c: Caller, method: 'GET' | 'POST' | 'DELETE', url: string, params: Record<string, unknown>) {
  const body = formOf(params);
  const res = await injectRequest(app, {
    method,
    url: method === 'GET' ? `/api/v1${url}?${body}` : `/api/v1${url}`,
    payload: method === 'GET' ? undefined : body,
    headers: { authorization: c.auth, ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
  });
  if (res.statusCode !== 200) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return JSON.parse(res.body);
}

const row = (name: string, api: number[], bare: number[]) =>
  `${name.padEnd(36)} p50 ${ms(quantile(api, 0.5)).padStart(10)}  p99 ${ms(quantile(api, 0.99)).padStart(10)}   bare SQL p50 ${ms(quantile(bare, 0.5)).padStart(9)}   ratio ${(quantile(api, 0.5) / quantile(bare, 0.5)).toFixed(1)}x`;

/** The CPU time of this process per round of `run` (ms; on PGlite the database's too). */
async function withCpu(run: () => Promise<number[]>): Promise<[number[], number]> {
  const start = process.cpuUsage();
  const times = await run();
  const used = process.cpuUsage(start);
  return [times, (used.user + used.system) / 1000 / (times.length + 1)];
}

/**
 * 3: a history of HISTORY messages in channel `history`, written in bulk (outside the
 * timings), then GET /messages over it and the bare SQL that reads the same rows.
 */
async function historyFetches(realm: Realm, sender: Caller, callers: Caller[], channels: Record<string, number>) {
  const fillStart = performance.now();
  const historyRecipient = (
    await db
      .insertInto('recipients')
      .values({ realm_id: realm.id, channel_id: channels.history, dm_key: null, dm_user_ids: null })
      .onConflict((oc) => oc.column('channel_id').doUpdateSet({ realm_id: realm.id }))
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
  const BATCH = 100_000;
  for (let start = 0; start < HISTORY; start += BATCH) {
    const n = Math.min(BATCH, HISTORY - start);
    await sql`
      insert into messages (realm_id, sender_id, recipient_id, channel_id, topic, content, rendered_content, date_sent, client)
      select ${realm.id}::integer, ${callers[1].id}::integer, ${historyRecipient}::integer, ${channels.history}::integer, 'topic ' || (g % 100),
             'history message ' || g || ' about elephants and castles', '<p>history message ' || g || '</p>',
             now() - make_interval(secs => ${HISTORY}::integer - g), 'bench'
      from generate_series(${start}::integer, ${start + n - 1}::integer) g`.execute(db);
  }
  // The caller received every one of them: their own history is a million messages long.
  await sql`insert into user_messages (realm_id, user_id, message_id, flags)
            select ${realm.id}::integer, ${sender.id}::integer, id, 1 from messages where channel_id = ${channels.history}::integer
            on conflict do nothing`.execute(db);
  await sql`analyze`.execute(db);
  const fillSeconds = (performance.now() - fillStart) / 1000;
  const total = Number((await sql<{ n: number }>`select count(*)::integer as n from messages`.execute(db)).rows[0].n);

  const timeIt = (fn: () => Promise<unknown>) => timed(ROUNDS, fn);
  // Anchors spread over the history, not just its newest end.
  const anchors = Array.from({ length: ROUNDS + 1 }, (_, i) => Math.floor(((i + 1) / (ROUNDS + 2)) * total));
  const newest = { anchor: 'newest', num_before: 100, num_after: 0, narrow: [['channel', 'history']] };
  // What is timed below as bytes, parsed once: the window is the newest 100 of the channel.
  const { messages } = await call(sender, 'GET', '/messages', newest);
  const newestId = (await sql<{ id: number }>`select max(id)::integer as id from messages where channel_id = ${channels.history}`.execute(db)).rows[0].id;
  if (messages.length !== 100 || messages[99].id !== newestId) {
    throw new Error('GET /messages did not answer the newest 100 of the channel');
  }
  let k = 0;
  const apiChannel = await timeIt(() =>
    fetchBytes(sender, { anchor: String(anchors[k++ % anchors.length]), num_before: 100, num_after: 0, narrow: [['channel', 'history']] }),
  );
  k = 0;
  const apiHistory = await timeIt(() => fetchBytes(sender, { anchor: String(anchors[k++ % anchors.length]), num_before: 100, num_after: 0, narrow: [] }));
  const [apiNewest, apiNewestCpu] = await withCpu(() => timeIt(() => fetchBytes(sender, newest)));
  // The same with the answer decoded and parsed by the client, as before 2026-12-07's evening.
  const apiNewestParsed = await timeIt(() => call(sender, 'GET', '/messages', newest));
  k = 0;
  // The columns a message object is made of (not the stored search vector).
  const columns = sql.raw(MESSAGE_COLUMNS.map((c) => `m.${c}`).join(', '));
  const [sqlNewest, sqlNewestCpu] = await withCpu(() =>
    timeIt(() =>
      sql`select ${columns}, um.flags, u.full_name, u.email from messages m
        left join user_messages um on um.message_id = m.id and um.user_id = ${sender.id}
        join users u on u.id = m.sender_id
        where m.channel_id = ${channels.history} order by m.id desc limit 100`.execute(db),
    ),
  );
  const sqlChannel = await timeIt(() =>
    sql`select ${columns}, um.flags, u.full_name, u.email from messages m
        left join user_messages um on um.message_id = m.id and um.user_id = ${sender.id}
        join users u on u.id = m.sender_id
        where m.channel_id = ${channels.history} and m.id < ${anchors[k++ % anchors.length]} order by m.id desc limit 100`.execute(db),
  );
  k = 0;
  // The bound on both ids lets either index start at the anchor (PostgreSQL does not carry ranges across joins).
  const sqlHistory = await timeIt(() => {
    const anchor = anchors[k++ % anchors.length];
    return sql`select ${columns}, um.flags, u.full_name, u.email from user_messages um
        join messages m on m.id = um.message_id join users u on u.id = m.sender_id
        where um.user_id = ${sender.id} and um.message_id < ${anchor} and m.id < ${anchor} order by um.message_id desc limit 100`.execute(db);
  });

  return { fillSeconds, total, apiNewest, apiNewestCpu, apiNewestParsed, apiChannel, apiHistory, sqlNewest, sqlNewestCpu, sqlChannel, sqlHistory };
}

try {
  const realm = await db.selectFrom('realms').selectAll().executeTakeFirstOrThrow();
  const callers: Caller[] = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const user = await createUserAsOperator(svc, realm, { email: `u${i}@bench.example`, fullName: `Bench User ${i}`, password: null, role: ROLE.MEMBER });
    callers.push({ id: user.id, auth: `Basic ${Buffer.from(`${user.delivery_email}:${user.api_key}`).toString('base64')}` });
  }
  const [sender] = callers;
  await call(sender, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'live' }, { name: 'history' }], principals: callers.map((c) => c.id) });
  const channels = Object.fromEntries((await db.selectFrom('channels').select(['id', 'name']).execute()).map((c) => [c.name, c.id])) as Record<string, number>;

  if (ONLY_FETCH) {
    const f = await historyFetches(realm, sender, callers, channels);
    console.log(`${svc.dbKind}, GET /messages, ${ROUNDS} rounds, history of ${f.total}; load average ${loadAverage()}
  ${row('the newest of one channel', f.apiNewest, f.sqlNewest)}
  ${row('  the same, parsed by the client', f.apiNewestParsed, f.sqlNewest)}
  ${row('narrow to one channel', f.apiChannel, f.sqlChannel)}
  ${row("the caller's history (no narrow)", f.apiHistory, f.sqlHistory)}
  CPU of this process per request, newest${svc.dbKind === 'pglite' ? ' (database included)' : ''}: API ${f.apiNewestCpu.toFixed(3)} ms, bare ${f.sqlNewestCpu.toFixed(3)} ms`);
    await bench.close();
    process.exit(0);
  }

  // ---- 1 and 2: sends to a channel of 50 subscribers with 50 live queues.
  const queues = await Promise.all(
    callers.map(async (c) => ({
      c,
      id: (await call(c, 'POST', '/register', { event_types: ['message'], fetch_event_types: [] })).queue_id as string,
      last: -1,
    })),
  );
  const latencies: number[] = [];
  const sendStart = performance.now();
  for (let i = 0; i < SEQUENTIAL; i++) {
    const polls = queues.map((q) =>
      call(q.c, 'GET', '/events', { queue_id: q.id, last_event_id: q.last }).then((r) => {
        q.last = r.events[r.events.length - 1].id;
        return performance.now();
      }),
    );
    const t0 = performance.now();
    await call(sender, 'POST', '/messages', { type: 'stream', to: 'live', topic: `t${i % 10}`, content: `message ${i} with **some** text` });
    latencies.push(Math.max(...(await Promise.all(polls))) - t0);
  }
  const sendSeconds = (performance.now() - sendStart) / 1000;
  const apiSendRate = SEQUENTIAL / sendSeconds;

  // The same writes in bare SQL: a message and its 50 copies, one transaction each.
  const recipient = (await db.selectFrom('recipients').select('id').where('channel_id', '=', channels.live).executeTakeFirstOrThrow()).id;
  const bareSend = (from: Caller, i: number, to = { channel: channels.live, recipient, users: callers.map((c) => c.id) }) =>
    db.transaction().execute(async (tx) => {
      const m = await tx
        .insertInto('messages')
        .values({
          realm_id: realm.id,
          sender_id: from.id,
          recipient_id: to.recipient,
          channel_id: to.channel,
          topic: `t${i % 10}`,
          content: `message ${i}`,
          rendered_content: `<p>message ${i}</p>`,
          date_sent: new Date(),
          client: 'bench',
          last_edit_at: null,
          last_moved_at: null,
          edit_history: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      // One array parameter, not four per row: the cheapest way to write the copies.
      await sql`insert into user_messages (realm_id, user_id, message_id, flags)
                select ${realm.id}::integer, u, ${m.id}::integer, 0 from unnest(${to.users}::integer[]) u`.execute(tx);
    });
  const sqlStart = performance.now();
  // Each commit is the floor of a send's latency: the event leaves once the rows are in.
  const sqlLatencies: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t0 = performance.now();
    await bareSend(sender, i);
    sqlLatencies.push(performance.now() - t0);
  }
  const sqlSendRate = SEQUENTIAL / ((performance.now() - sqlStart) / 1000);

  // The same with 10 senders at once (the queues stay live; no poll is parked): sends to one
  // channel must not wait on each other, beside 10 concurrent bare transactions.
  const concurrently = async (each: (sender: Caller, i: number) => Promise<unknown>, n = SENDS) => {
    const t = performance.now();
    await Promise.all(
      callers.slice(0, SENDERS).map(async (c, k) => {
        for (let i = k; i < n; i += SENDERS) await each(c, i);
      }),
    );
    return n / ((performance.now() - t) / 1000);
  };
  const sendConcurrently = (n = SENDS) =>
    concurrently((c, i) => call(c, 'POST', '/messages', { type: 'stream', to: 'live', topic: `t${i % 10}`, content: `message ${i} with **some** text` }), n);
  if (ONLY_SENDS) {
    // Warm: the JIT, the statements' plans, the pool's connections.
    await sendConcurrently();
    await concurrently((c, i) => bareSend(c, i));
    // Blocks of API and bare sends in turn: the machine's load weighs on both alike. The least
    // disturbed block (the minimum) is the steadiest figure on a shared machine, the median beside it.
    const BLOCK = 50;
    const api: { rate: number; ms: number; db: number }[] = [];
    const bare: typeof api = [];
    const profile = process.env.BENCH_PROFILE ? await startProfile() : null;
    for (let done = 0; done < SENDS; done += BLOCK) {
      for (const [into, run] of [
        [api, () => sendConcurrently(BLOCK)],
        [bare, () => concurrently((c, i) => bareSend(c, i), BLOCK)],
      ] as const) {
        const [{ rate, ms }, db] = await cpuPerCall(run, BLOCK);
        into.push({ rate, ms, db: db ?? 0 });
      }
    }
    await profile?.stop(process.env.BENCH_PROFILE!);
    const figures = (xs: typeof api) => {
      const at = (key: 'rate' | 'ms' | 'db', q: number) =>
        quantile(
          xs.map((x) => x[key]),
          q,
        ).toFixed(2);
      const total = (q: number) =>
        quantile(
          xs.map((x) => x.ms + x.db),
          q,
        ).toFixed(2);
      return (
        `${at('rate', 0.5)} messages/s (median); CPU per send, median (min): this process ${at('ms', 0.5)} (${at('ms', 0)}) ms` +
        (databaseUrl ? `, database backends ${at('db', 0.5)} (${at('db', 0)}) ms, both ${total(0.5)} (${total(0)}) ms` : '')
      );
    };
    console.log(`${svc.dbKind}, ${SENDERS} senders, ${SENDS} sends in blocks of ${BLOCK}; load average ${loadAverage()}
  API: ${figures(api)}
  bare SQL: ${figures(bare)}`);
    await bench.close();
    process.exit(0);
  }
  const [apiConcurrentRate, lockShare] = await lockWaits(() => sendConcurrently());
  const sqlConcurrentRate = await concurrently((c, i) => bareSend(c, i));
  for (const q of queues) await call(q.c, 'DELETE', '/events', { queue_id: q.id });

  // ---- 1b: sends to a channel of BIG_CHANNEL subscribers (no queues), one at a time.
  const big = await seedMembers(svc, realm, BIG_CHANNEL - 1, 'big');
  await call(sender, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'big' }] });
  channels.big = (await db.selectFrom('channels').select('id').where('name', '=', 'big').executeTakeFirstOrThrow()).id;
  await sql`insert into subscriptions (realm_id, user_id, channel_id, color)
            select ${realm.id}::integer, u, ${channels.big}::integer, '#76ce90' from unnest(${big.map((b) => b.id)}::integer[]) u`.execute(db);
  await recountSubscribers(db, realm.id);
  await sql`analyze`.execute(db);
  const bigSubscribers = (await db.selectFrom('subscriptions').select('user_id').where('channel_id', '=', channels.big).execute()).map((r) => r.user_id);
  let b = 0;
  // CPU of this process per send (on PGlite the database's too): what the load of the machine does not move.
  const cpuPerSend = async (run: () => Promise<number[]>) => {
    const before = process.cpuUsage();
    const times = await run();
    const used = process.cpuUsage(before);
    return { times, cpuMs: (used.user + used.system) / 1000 / (BIG_SENDS + 1) };
  };
  const { times: apiBig, cpuMs: cpuBig } = await cpuPerSend(() =>
    timed(BIG_SENDS, () => call(sender, 'POST', '/messages', { type: 'stream', to: 'big', topic: `t${b % 10}`, content: `message ${b++} with **some** text` })),
  );
  const bigRecipient = (await db.selectFrom('recipients').select('id').where('channel_id', '=', channels.big).executeTakeFirstOrThrow()).id;
  const sqlBig = await timed(BIG_SENDS, () => bareSend(sender, b++, { channel: channels.big, recipient: bigRecipient, users: bigSubscribers }));

  // ---- 1c: the same channel as a large organization's usually is (the reference's case for soft
  // deactivation): most members away for weeks, long-term idle; only BIG_ACTIVE of them active.
  const idleMembers = big.slice(BIG_ACTIVE - 1).map((m) => m.id);
  await sql`update users set long_term_idle = true, last_active_message_id = (select max(id) from messages)
            where id = any(${idleMembers}::integer[])`.execute(db);
  const idleSet = new Set(idleMembers);
  const activeSubscribers = bigSubscribers.filter((id) => !idleSet.has(id));
  const { times: apiIdle, cpuMs: cpuIdle } = await cpuPerSend(() =>
    timed(BIG_SENDS, () => call(sender, 'POST', '/messages', { type: 'stream', to: 'big', topic: `t${b % 10}`, content: `message ${b++} with **some** text` })),
  );
  // What the send writes now: the message and the active members' copies.
  const sqlIdle = await timed(BIG_SENDS, () => bareSend(sender, b++, { channel: channels.big, recipient: bigRecipient, users: activeSubscribers }));
  if (ONLY_BIG) {
    const [all, idle] = [
      [apiBig, sqlBig],
      [apiIdle, sqlIdle],
    ].map(([api, bare]) => `p50 ${ms(quantile(api, 0.5))} p99 ${ms(quantile(api, 0.99))} bare p50 ${ms(quantile(bare, 0.5))}`);
    console.log(`${svc.dbKind}, ${BIG_CHANNEL} subscribers; load average ${loadAverage()}
  all active: ${all}; CPU per send ${cpuBig.toFixed(1)} ms
  ${BIG_ACTIVE} active, ${idleMembers.length} long-term idle: ${idle}; CPU per send ${cpuIdle.toFixed(1)} ms`);
    await bench.close();
    process.exit(0);
  }

  const { fillSeconds, total, apiNewest, apiNewestParsed, apiChannel, apiHistory, sqlNewest, sqlChannel, sqlHistory } = await historyFetches(
    realm,
    sender,
    callers,
    channels,
  );
  const lines = [
    `messages benchmark: ${svc.dbKind}; node ${process.version}; ${new Date().toISOString()}; load average ${loadAverage()} at the end`,
    `send to a channel of ${SUBSCRIBERS} subscribers with ${SUBSCRIBERS} live queues, ${SENDS} sends:`,
    `  API ${apiSendRate.toFixed(1)} messages/s   bare SQL (message + ${SUBSCRIBERS} copies) ${sqlSendRate.toFixed(1)} messages/s   ratio ${(sqlSendRate / apiSendRate).toFixed(1)}x`,
    `send -> event in all ${SUBSCRIBERS} queues: p50 ${ms(quantile(latencies, 0.5))}   p99 ${ms(quantile(latencies, 0.99))}` +
      `   bare SQL (commit of message + copies) p50 ${ms(quantile(sqlLatencies, 0.5))}   p99 ${ms(quantile(sqlLatencies, 0.99))}` +
      `   ratio ${(quantile(latencies, 0.5) / quantile(sqlLatencies, 0.5)).toFixed(1)}x`,
    `  ${SENDERS} senders at once: API ${apiConcurrentRate.toFixed(1)} messages/s   bare SQL (${SENDERS} transactions at once) ${sqlConcurrentRate.toFixed(1)} messages/s   ratio ${(sqlConcurrentRate / apiConcurrentRate).toFixed(1)}x` +
      (lockShare === undefined ? '' : `   busy connections waiting on a lock: ${(lockShare * 100).toFixed(0)}%`),
    `send to a channel of ${BIG_CHANNEL} subscribers (no queues), ${BIG_SENDS} sends one at a time:`,
    `  ${row('all active (the worst case)', apiBig, sqlBig).replace('bare SQL', `bare SQL (message + ${BIG_CHANNEL} copies)`)}`,
    `  ${row(`${BIG_ACTIVE} active, ${idleMembers.length} long-term idle`, apiIdle, sqlIdle).replace('bare SQL', `bare SQL (message + ${activeSubscribers.length} copies)`)}`,
    `    (the second models a large organization's channel: most members away for weeks get a copy when they return)`,
    `  CPU per send (this process${svc.dbKind === 'pglite' ? ', database included' : ''}): all active ${cpuBig.toFixed(1)} ms, ${BIG_ACTIVE} active ${cpuIdle.toFixed(1)} ms`,
    `GET /messages, 100 messages, history of ${total} messages (written in ${fillSeconds.toFixed(0)} s):`,
    `  ${row('the newest of one channel', apiNewest, sqlNewest)}`,
    `  ${row('  the same, parsed by the client', apiNewestParsed, sqlNewest)}`,
    `  ${row('narrow to one channel', apiChannel, sqlChannel)}`,
    `  ${row("the caller's history (no narrow)", apiHistory, sqlHistory)}`,
  ];
  const newestRatio = quantile(apiNewest, 0.5) / quantile(sqlNewest, 0.5);
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  lines.push(
    `[table] send to a ${SUBSCRIBERS}-subscriber channel with ${SUBSCRIBERS} live queues, ${SENDERS} senders: ${apiConcurrentRate.toFixed(1)} msg/s, bare ${sqlConcurrentRate.toFixed(1)} msg/s, ${((apiConcurrentRate / sqlConcurrentRate) * 100).toFixed(0)}% of bare   goal >= 50%: ${verdict(apiConcurrentRate >= sqlConcurrentRate / 2)}`,
    `[table] send -> event in all ${SUBSCRIBERS} queues p99: ${ms(quantile(latencies, 0.99))}, bare commit p99 ${ms(quantile(sqlLatencies, 0.99))}, ${(quantile(latencies, 0.99) / quantile(sqlLatencies, 0.99)).toFixed(1)}x   goal < 20 ms: ${verdict(quantile(latencies, 0.99) < 20)}`,
    `[table] GET /messages, newest 100 of a channel, ${total} messages, p50: ${ms(quantile(apiNewest, 0.5))}, bare ${ms(quantile(sqlNewest, 0.5))}, ${newestRatio.toFixed(1)}x   goal <= 1.3x: ${verdict(newestRatio <= 1.3)}`,
    `[table] send to a ${BIG_CHANNEL}-subscriber channel, all active, p50: ${ms(quantile(apiBig, 0.5))}, bare ${ms(quantile(sqlBig, 0.5))}, ${(quantile(apiBig, 0.5) / quantile(sqlBig, 0.5)).toFixed(1)}x   goal < 40 ms: ${verdict(quantile(apiBig, 0.5) < 40)}`,
    `[table] send to a ${BIG_CHANNEL}-subscriber channel, ${BIG_ACTIVE} active and ${idleMembers.length} long-term idle (a large organization's channel), p50: ${ms(quantile(apiIdle, 0.5))}, bare ${ms(quantile(sqlIdle, 0.5))}, ${(quantile(apiIdle, 0.5) / quantile(sqlIdle, 0.5)).toFixed(1)}x   goal < 40 ms: ${verdict(quantile(apiIdle, 0.5) < 40)}`,
  );
  console.log(lines.join('\n'));
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, `bench/results/messages-${svc.dbKind}.txt`), `${lines.join('\n')}\n`);
} finally {
  await bench.close();
}
