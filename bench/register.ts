// Register benchmark, on one database (embedded PGlite, or DATABASE_URL):
//
// POST /register, as the web client calls it, for a member of an organization of
// 1,000 users (--users 10000 for the large one) with 100 channels, 20
// subscriptions per user, and a history in which the caller has unread messages.
//
// Beside it, bare SQL on the same database: the reads register cannot do without
// (the users, the caller's channels and subscriptions, the caller's unread
// messages), with no server in between, and the ratio. Requests go through the
// whole HTTP stack (Fastify's inject), without sockets.
//
//   node bench/register.ts [--users 1000] [--rounds 30]

import { parseArgs } from 'node:util';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createUserAsOperator } from '../src/users/actions.ts';
import { ROLE } from '../src/users/roles.ts';
import { recountSubscribers } from '../src/channels/subscriber-counts.ts';
import { benchServer, loadAverage, ms, quantile, timed } from './support.ts';
// What the web client sends.
import { REGISTER_PARAMS } from '../web/src/events.ts';

const { values } = parseArgs({ options: { users: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '30' } } });
const USERS = Number(values.users);
const ROUNDS = Number(values.rounds);
const CHANNELS = 100;
const SUBSCRIPTIONS_PER_USER = 20;
const HISTORY = 20_000;
/** Of the caller's messages, one in this many is unread. */
const UNREAD_EVERY = 20;
const root = new URL('..', import.meta.url).pathname;

const bench = await benchServer('register');
const { server } = bench;
const { svc, app } = server;
const db = svc.db;

/**
 * One call; the answer's bytes as the server wrote them. Not decoded into one string: that is
 * the client's work, as parsing is, and it cost about 3 ms per 644 KiB answer here
 * (light-my-request's default joins the chunks and decodes them: two passes over the answer).
 * It still copies each chunk the server writes once, as a socket would.
 */
async function call(auth: string, url: string, params: Record<string, unknown>) {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  const res = await app.inject({
    method: 'POST',
    url: `/api/v1${url}`,
    payload: form.toString(),
    headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
    payloadAsStream: true,
  });
  const chunks: Buffer[] = [];
  for await (const chunk of res.stream()) chunks.push(chunk as Buffer);
  const bytes = chunks.reduce((n, c) => n + c.length, 0);
  // The envelope and queue_id come first: the head of the answer is enough to find them.
  const first = chunks[0] ?? Buffer.alloc(0);
  const head = (first.length >= 4096 ? first : Buffer.concat(chunks)).toString('utf8', 0, 4096);
  if (res.statusCode !== 200) throw new Error(`POST ${url}: ${res.statusCode} ${Buffer.concat(chunks).toString()}`);
  return { head, bytes };
}

try {
  const seedStart = performance.now();
  const realm = await db.selectFrom('realms').selectAll().executeTakeFirstOrThrow();
  // The caller and a template, made by the action the API uses; the rest are copies of the template.
  const caller = await createUserAsOperator(svc, realm, { email: 'caller@bench.example', fullName: 'Bench Caller', password: null, role: ROLE.MEMBER });
  const template = await createUserAsOperator(svc, realm, { email: 'u0@bench.example', fullName: 'Bench User 0', password: null, role: ROLE.MEMBER });
  const auth = `Basic ${Buffer.from(`${caller.delivery_email}:${caller.api_key}`).toString('base64')}`;
  const existing = Number((await sql<{ n: number }>`select count(*)::integer as n from users where realm_id = ${realm.id}`.execute(db)).rows[0].n);
  await sql`
    insert into users (realm_id, email, delivery_email, full_name, role, api_key, timezone, settings, date_joined)
    select u.realm_id, 'u' || g || '@bench.example', 'u' || g || '@bench.example', 'Bench User ' || g, u.role,
           md5(random()::text) || g, 'Europe/Paris', u.settings, now()
    from users u, generate_series(1, ${Math.max(0, USERS - existing)}::integer) g where u.id = ${template.id}`.execute(db);
  await sql`
    insert into user_group_members (realm_id, group_id, user_id)
    select m.realm_id, m.group_id, u.id from user_group_members m, users u
    where m.user_id = ${template.id} and u.realm_id = ${realm.id} and u.email like 'u%@bench.example' and u.id <> ${template.id}`.execute(db);

  for (let i = 0; i < CHANNELS; i++) {
    await call(auth, '/channels/create', { name: `channel ${i}`, description: `Channel number ${i}`, subscribers: [caller.id] });
  }
  const channels = await db.selectFrom('channels').select('id').where('realm_id', '=', realm.id).orderBy('id').execute();
  // Each user in SUBSCRIPTIONS_PER_USER channels, spread round the list (the caller too, not in all).
  await sql`delete from subscriptions where realm_id = ${realm.id}`.execute(db);
  await sql`
    insert into subscriptions (realm_id, user_id, channel_id, color)
    select ${realm.id}::integer, u.id, c.id, '#76ce90'
    from users u cross join generate_series(0, ${SUBSCRIPTIONS_PER_USER - 1}::integer) k
    join (select id, row_number() over (order by id) - 1 as n from channels where realm_id = ${realm.id}) c
      on c.n = (u.id + k * 5) % ${channels.length}
    where u.realm_id = ${realm.id}
    on conflict do nothing`.execute(db);
  await recountSubscribers(db, realm.id);

  // A history in the caller's channels, every message received by the caller; some unread.
  const callerChannels = await db
    .selectFrom('subscriptions')
    .innerJoin('recipients', 'recipients.channel_id', 'subscriptions.channel_id')
    .select(['subscriptions.channel_id', 'recipients.id as recipient_id'])
    .where('user_id', '=', caller.id)
    .execute();
  const values = callerChannels.map((c) => sql`(${c.channel_id}::integer, ${c.recipient_id}::integer)`);
  await sql`
    insert into messages (realm_id, sender_id, recipient_id, channel_id, topic, content, rendered_content, date_sent, client)
    select ${realm.id}::integer, ${template.id}::integer, c.recipient_id, c.channel_id, 'topic ' || (g % 30),
           'message ' || g, '<p>message ' || g || '</p>', now() - make_interval(secs => ${HISTORY}::integer - g), 'bench'
    from generate_series(1, ${HISTORY}::integer) g
    join (select *, row_number() over () - 1 as n from (values ${sql.join(values)}) v(channel_id, recipient_id)) c on c.n = g % ${values.length}`.execute(db);
  await sql`
    insert into user_messages (realm_id, user_id, message_id, flags)
    select ${realm.id}::integer, ${caller.id}::integer, id, case when id % ${UNREAD_EVERY} = 0 then 0 else 1 end from messages
    where realm_id = ${realm.id} and client = 'bench'
    on conflict do nothing`.execute(db);
  await sql`analyze`.execute(db);
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const counts = (
    await sql<{ users: number; subs: number; unread: number }>`
    select (select count(*)::integer from users where realm_id = ${realm.id}) as users,
           (select count(*)::integer from subscriptions where realm_id = ${realm.id}) as subs,
           (select count(*)::integer from user_messages where user_id = ${caller.id} and flags & 1 = 0) as unread`.execute(db)
  ).rows[0];

  const timeIt = (fn: () => Promise<unknown>) => timed(ROUNDS, fn);
  let bytes = 0;
  // Timed: the server's answer, as bytes. Parsing 644 KiB of JSON is the client's work, and
  // the queues are deleted after the rounds, not inside them.
  const queueIds: string[] = [];
  // CPU of this process per register (with PGlite, the database's work too): the figure to
  // compare on a shared machine, where wall times follow the load.
  const cpuStart = process.cpuUsage();
  const api = await timeIt(async () => {
    const r = await call(auth, '/register', REGISTER_PARAMS);
    bytes = r.bytes;
    queueIds.push(/"queue_id":"([^"]+)"/.exec(r.head)![1]!);
  });
  const cpu = process.cpuUsage(cpuStart);
  const cpuPerRegister = (cpu.user + cpu.system) / 1000 / (ROUNDS + 1);
  for (const id of queueIds) {
    await app.inject({ method: 'DELETE', url: `/api/v1/events?queue_id=${encodeURIComponent(id)}`, headers: { authorization: auth } });
  }
  // The floor: the rows no register can skip, read as directly as SQL allows.
  const bare = await timeIt(async () => {
    await sql`select id, email, full_name, role, is_active, is_bot, avatar_source, avatar_version, date_joined, timezone from users where realm_id = ${realm.id}`.execute(
      db,
    );
    await sql`select c.*, s.color, s.is_muted, s.pin_to_top from subscriptions s join channels c on c.id = s.channel_id where s.user_id = ${caller.id} and s.active`.execute(
      db,
    );
    await sql`select um.message_id, m.channel_id, m.topic, m.sender_id from user_messages um join messages m on m.id = um.message_id
              where um.user_id = ${caller.id} and um.flags & 1 = 0 order by um.message_id desc limit 50000`.execute(db);
  });

  const lines = [
    `register benchmark: ${svc.dbKind}; node ${process.version}; ${new Date().toISOString()}; load average ${loadAverage()} at the end`,
    `organization: ${counts.users} users, ${channels.length} channels, ${counts.subs} subscriptions; the caller: ${callerChannels.length} channels, ${counts.unread} unread of ${HISTORY} messages (seeded in ${seedSeconds.toFixed(0)} s)`,
    `POST /register (the web client's parameters), ${ROUNDS} rounds, ${(bytes / 1024).toFixed(0)} KiB answer:`,
    `  p50 ${ms(quantile(api, 0.5)).padStart(10)}  p99 ${ms(quantile(api, 0.99)).padStart(10)}   bare SQL (users, subscribed channels, unread) p50 ${ms(quantile(bare, 0.5)).padStart(9)}   ratio ${(quantile(api, 0.5) / quantile(bare, 0.5)).toFixed(1)}x`,
    `  CPU of this process per register: ${ms(cpuPerRegister)}${svc.dbKind === 'postgres' ? ' (the server only: PostgreSQL runs apart)' : ' (server and PGlite)'}`,
  ];
  // The goals: < 30 ms on PostgreSQL and < 100 ms on PGlite at 1,000 users; < 150 ms at 10,000.
  const goal = USERS >= 10_000 ? 150 : svc.dbKind === 'postgres' ? 30 : 100;
  const p50 = quantile(api, 0.5);
  lines.push(
    `[table] POST /register, ${counts.users} users, p50: ${ms(p50)}, bare ${ms(quantile(bare, 0.5))}, ${(p50 / quantile(bare, 0.5)).toFixed(1)}x   goal < ${goal} ms: ${p50 < goal ? 'met' : 'NOT met'}`,
  );
  console.log(lines.join('\n'));
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  const suffix = USERS === 1000 ? '' : `-${USERS}`;
  writeFileSync(join(root, `bench/results/register-${svc.dbKind}${suffix}.txt`), `${lines.join('\n')}\n`);
} finally {
  await bench.close();
}
