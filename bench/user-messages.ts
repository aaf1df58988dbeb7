// What each constraint and index of user_messages costs a channel send, in bare SQL on
// one database (embedded PGlite, or DATABASE_URL):
//
// A message and its 5,000 copies in one transaction, into copies of user_messages as it
// was to migration 0205 (two row-level foreign keys) and as 0206 made it (the same
// checks once per statement), and of the former less one foreign key or one index
// (percentages against it), interleaved round by round so that the
// machine's load falls on every variant alike. Timed: the wall time, and the CPU of
// whoever ran the SQL (on PGlite this process; on PostgreSQL the backend, from
// /proc/<pid>/schedstat, so the server must run on this machine).
//
// Then 10 senders at once to one channel of 50 members: does the foreign key to users
// (a FOR KEY SHARE lock on each recipient's row) make them wait, and how many
// MultiXacts does it create (PostgreSQL)?
//
//   node bench/user-messages.ts [--rounds 20] [--copies 5000]

import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../src/db/schema.ts';
import { benchServer, loadAverage, ms, quantile, seedMembers } from './support.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '20' }, copies: { type: 'string', default: '5000' } } });
const ROUNDS = Number(values.rounds);
const COPIES = Number(values.copies);
const SENDERS = 10;
const SMALL = 50;

const FK_USERS = 'foreign key (realm_id, user_id) references users (realm_id, id)';
const FK_MESSAGES = 'foreign key (realm_id, message_id) references messages (realm_id, id) on delete cascade';
const INDEXES: Record<string, string> = {
  message: '(message_id)',
  unread: '(user_id, message_id) where (flags & 1) = 0',
  starred: '(user_id, message_id) where (flags & 2) <> 0',
  mentioned: '(user_id, message_id) where (flags & 60) <> 0',
};

interface Variant {
  name: string;
  fks: string[];
  indexes: string[];
  /** The foreign keys checked once per statement instead, as user_messages is since migration 0206. */
  statementChecks?: boolean;
}
const ALL_INDEXES = Object.keys(INDEXES);
const VARIANTS: Variant[] = [
  { name: 'row-level FKs (to 0205)', fks: [FK_USERS, FK_MESSAGES], indexes: ALL_INDEXES },
  { name: 'without FK to users', fks: [FK_MESSAGES], indexes: ALL_INDEXES },
  { name: 'without FK to messages', fks: [FK_USERS], indexes: ALL_INDEXES },
  { name: 'without either FK', fks: [], indexes: ALL_INDEXES },
  ...ALL_INDEXES.map((i) => ({ name: `without index ${i}`, fks: [FK_USERS, FK_MESSAGES], indexes: ALL_INDEXES.filter((x) => x !== i) })),
  { name: 'primary key alone', fks: [], indexes: [] },
  { name: 'statement checks (0206)', fks: [], indexes: ALL_INDEXES, statementChecks: true },
];

const bench = await benchServer('user_messages');
const db = bench.server.svc.db as Kysely<Database>;
const postgres = bench.databaseUrl !== undefined;

/** CPU (ms) spent so far by whoever runs `tx`'s statements. */
async function cpuNow(tx: Kysely<Database>): Promise<number> {
  if (!postgres) {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  }
  const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx)).rows[0].pid;
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

try {
  const realm = await db.selectFrom('realms').selectAll().executeTakeFirstOrThrow();
  const members = await seedMembers(bench.server.svc, realm, COPIES, 'um');
  const userIds = members.map((m) => m.id);
  const sender = userIds[0];
  const recipient = (
    await db.selectFrom('recipients').select('id').where('realm_id', '=', realm.id).where('channel_id', 'is not', null).executeTakeFirstOrThrow()
  ).id;
  const channel = (await db.selectFrom('recipients').select('channel_id').where('id', '=', recipient).executeTakeFirstOrThrow()).channel_id!;

  const tables = VARIANTS.map((v, k) => ({ ...v, table: `um_variant_${k}` }));
  for (const t of tables) {
    await sql
      .raw(
        `create table ${t.table} (realm_id integer not null, user_id integer not null, message_id integer not null, flags integer not null default 0,
           primary key (user_id, message_id)${t.fks.map((f) => `, ${f}`).join('')})`,
      )
      .execute(db);
    for (const i of t.indexes) await sql.raw(`create index ${t.table}_${i} on ${t.table} ${INDEXES[i]}`).execute(db);
    if (t.statementChecks) {
      await sql
        .raw(
          `create trigger ${t.table}_refs after insert on ${t.table} referencing new table as new_rows for each statement execute function user_messages_check_references()`,
        )
        .execute(db);
    }
  }
  await sql`analyze`.execute(db);

  /** One send: a message and a copy for each of `users`, into `table`; wall and CPU in ms. */
  const send = async (table: string, users: number[]) => {
    const t0 = performance.now();
    let cpu = 0;
    await db.transaction().execute(async (tx) => {
      const c0 = await cpuNow(tx);
      const m = await sql<{
        id: number;
      }>`insert into messages (realm_id, sender_id, recipient_id, channel_id, topic, content, rendered_content, date_sent, client)
        values (${realm.id}, ${sender}, ${recipient}, ${channel}, 'cost', 'message', '<p>message</p>', now(), 'bench') returning id`.execute(tx);
      await sql`insert into ${sql.table(table)} (realm_id, user_id, message_id, flags)
                select ${realm.id}::integer, u, ${m.rows[0].id}::integer, 0 from unnest(${users}::integer[]) u`.execute(tx);
      cpu = (await cpuNow(tx)) - c0;
    });
    return { wall: performance.now() - t0, cpu };
  };

  const results = new Map(tables.map((t) => [t.name, { wall: [] as number[], cpu: [] as number[] }]));
  for (const t of tables) await send(t.table, userIds); // warm up
  for (let r = 0; r < ROUNDS; r++) {
    // A different order each round: no variant always follows the same one.
    const order = [...tables].sort(() => Math.random() - 0.5);
    for (const t of order) {
      const { wall, cpu } = await send(t.table, userIds);
      results.get(t.name)!.wall.push(wall);
      results.get(t.name)!.cpu.push(cpu);
    }
  }
  const base = quantile(results.get(VARIANTS[0].name)!.cpu, 0.5);
  const lines = [
    `user_messages cost: ${postgres ? 'postgres' : 'pglite'}; node ${process.version}; ${new Date().toISOString()}; load average ${loadAverage()} at the end`,
    `a message and ${COPIES} copies per transaction, ${ROUNDS} rounds, interleaved; CPU of ${postgres ? 'the backend' : 'this process (PGlite included)'}:`,
    ...tables.map((t) => {
      const r = results.get(t.name)!;
      const cpu = quantile(r.cpu, 0.5);
      return `  ${t.name.padEnd(26)} wall p50 ${ms(quantile(r.wall, 0.5)).padStart(10)}   CPU p50 ${ms(cpu).padStart(10)}  (${(((cpu - base) / base) * 100).toFixed(0).padStart(4)}%)`;
    }),
  ];

  // 10 senders at once to a channel of 50: the FK to users key-share-locks the same 50 rows.
  const small = userIds.slice(0, SMALL);
  const multixacts = async () => {
    if (!postgres) return 0;
    await sql`checkpoint`.execute(db);
    return Number((await sql<{ id: string }>`select next_multixact_id::text as id from pg_control_checkpoint()`.execute(db)).rows[0].id);
  };
  for (const t of [tables[0], tables[1], tables[tables.length - 1]]) {
    const sends = 300;
    const m0 = await multixacts();
    const start = performance.now();
    await Promise.all(
      Array.from({ length: SENDERS }, async (_, k) => {
        for (let i = k; i < sends; i += SENDERS) await send(t.table, small);
      }),
    );
    const rate = sends / ((performance.now() - start) / 1000);
    const m1 = await multixacts();
    lines.push(
      `  ${SENDERS} senders, ${SMALL} copies each, ${t.name.padEnd(22)}: ${rate.toFixed(0)} sends/s${postgres ? `, ${m1 - m0} MultiXacts created` : ''}`,
    );
  }
  console.log(lines.join('\n'));
} finally {
  await bench.close();
}
