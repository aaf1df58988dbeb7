// The message retention policy (the reference's zerver/lib/retention.py):
// a daily pass archives and deletes messages older than their policy allows,
// in bounded batches, one transaction per batch (archive rows, delete the
// messages, emit `delete_message`), then forgets archives older than the grace
// period. An organization's `message_retention_days` covers its direct messages
// and the channels that follow the organization's default; a channel's own
// value overrides it; -1 keeps forever. Only one pass runs at a time across
// processes (a PostgreSQL advisory lock; PGlite has one process). The pass also
// deletes uploads that no message ever linked (uploads/cleanup.ts).
//
// Uploads: a file whose last linking message expires leaves the live tables
// with it (its owner gets `attachment` remove) and is archived in the same
// transaction; its bytes stay in storage until that archive is forgotten, so a
// restore within the grace period gives back a working file.

import { sql, type RawBuilder } from 'kysely';
import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { Channel } from '../channels/tables.ts';
import type { Message } from '../messages/tables.ts';
import { type ActionContext, transact, transactAs, type Tx } from '../db/transact.ts';
import { settingsOf } from '../realm/queries.ts';
import { deleteMessages } from '../messages/delete.ts';
import { intArray } from '../messages/state-support.ts';
import { attachmentKeys } from '../uploads/actions.ts';
import { deleteUnclaimedUploads } from '../uploads/cleanup.ts';
import { notifyAttachment } from '../uploads/events.ts';
import { formatAttachment, UNLINKED } from '../uploads/queries.ts';
import type { Attachment } from '../uploads/tables.ts';
import { ARCHIVE_KIND } from './tables.ts';

export const UNLIMITED = -1;
/** Messages per archive transaction (the reference's MESSAGE_BATCH_SIZE). */
export const BATCH_SIZE = 1000;
const DAY_MS = 86_400_000;
/** The tables whose rows hang off a message and go (and come back) with it. */
const MESSAGE_ROWS = ['user_messages', 'reactions', 'attachment_messages', 'submessages', 'onboarding_messages'] as const;

export interface PassOptions {
  now?: Date;
  batchSize?: number;
}

export interface PassResult {
  archived: number;
  vacuumed: number;
  /** Uploads no message ever linked, deleted after UNCLAIMED_UPLOADS_DAYS. */
  unclaimed: number;
}

/** One pass over every organization; null when another pass holds the lock. */
export async function runRetentionPass(svc: Services, opts: PassOptions = {}): Promise<PassResult | null> {
  const now = opts.now ?? new Date();
  const batchSize = opts.batchSize ?? BATCH_SIZE;
  return withPassLock(svc, async () => {
    let archived = 0;
    for (const realm of await svc.db.selectFrom('realms').selectAll().orderBy('id').execute()) {
      const realmDays = retentionDays(settingsOf(realm).message_retention_days);
      for (const channel of await svc.db.selectFrom('channels').selectAll().where('realm_id', '=', realm.id).orderBy('id').execute()) {
        const days = channel.message_retention_days ?? realmDays;
        if (days !== UNLIMITED) archived += await archiveExpired(svc, realm, channel, cutoff(now, days), batchSize);
      }
      if (realmDays !== UNLIMITED) archived += await archiveExpired(svc, realm, null, cutoff(now, realmDays), batchSize);
    }
    svc.metrics.retentionDeleted.inc(archived);
    const vacuumed = await vacuum(svc, new Date(now.getTime() - svc.config.retention.vacuumDays * DAY_MS));
    const unclaimed = await deleteUnclaimedUploads(svc, now, svc.config.retention.unclaimedUploadsDays ?? 0, batchSize);
    if (archived > 0 || vacuumed > 0 || unclaimed > 0) svc.log.info({ archived, vacuumed, unclaimed }, 'retention pass');
    return { archived, vacuumed, unclaimed };
  });
}

function retentionDays(value: unknown): number {
  const n = Number(value ?? UNLIMITED);
  return Number.isInteger(n) && n > 0 ? n : UNLIMITED;
}

const cutoff = (now: Date, days: number) => new Date(now.getTime() - days * DAY_MS);

/** Archives a conversation's messages sent before `before` (a channel's, or all direct messages), batch by batch. */
async function archiveExpired(svc: Services, realm: Realm, channel: Channel | null, before: Date, batchSize: number): Promise<number> {
  let total = 0;
  for (;;) {
    const count = await transactAs(svc, realm, null, async (ctx) => {
      const { tx } = ctx;
      let q = tx.selectFrom('messages').selectAll().where('realm_id', '=', realm.id).where('date_sent', '<', before);
      q = channel ? q.where('channel_id', '=', channel.id) : q.where('channel_id', 'is', null);
      const batch = (await q.orderBy('id').limit(batchSize).forUpdate().skipLocked().execute()) as Message[];
      if (batch.length === 0) return 0;
      const ids = batch.map((m) => m.id);
      const archive = await archiveRows(tx, realm.id, ARCHIVE_KIND.RETENTION, ids);
      const linked = (
        await tx
          .selectFrom('attachment_messages')
          .select('attachment_id')
          .distinct()
          .where('message_id', '=', sql<number>`any(${intArray(ids)})`)
          .execute()
      ).map((r) => r.attachment_id);
      // Each delete_message event names one topic, as a user's delete does.
      for (const group of groupBy(batch, (m) => (channel ? m.topic : ''))) await deleteMessages(ctx, group, channel);
      await archiveOrphanedFiles(ctx, archive, linked);
      return batch.length;
    });
    total += count;
    if (count < batchSize) return total;
  }
}

/** Copies messages and their rows into a new archive transaction (before they are deleted). */
export async function archiveRows(tx: Tx, realmId: number, kind: number, ids: number[]): Promise<number> {
  const { id } = await tx.insertInto('archive_transactions').values({ realm_id: realmId, kind }).returning('id').executeTakeFirstOrThrow();
  const idList = sql`any(${intArray(ids)})`;
  await sql`insert into archived_messages (realm_id, transaction_id, message_id, channel_id, data)
    select realm_id, ${id}, id, channel_id, to_jsonb(m) - 'search_tsv' from messages m where realm_id = ${realmId} and id = ${idList}
    on conflict (message_id) do update set transaction_id = excluded.transaction_id, data = excluded.data`.execute(tx);
  for (const table of MESSAGE_ROWS) {
    await sql`insert into archived_message_rows (realm_id, transaction_id, message_id, table_name, data)
      select realm_id, ${id}, message_id, ${table}, to_jsonb(r) from ${sql.table(table)} r where message_id = ${idList}`.execute(tx);
  }
  return id;
}

/** Files among `candidates` that no message links any more: archived, then removed from the live tables. */
async function archiveOrphanedFiles(ctx: ActionContext<unknown>, transactionId: number, candidates: number[]): Promise<void> {
  if (candidates.length === 0) return;
  const { tx } = ctx;
  const realmId = ctx.realm.id;
  const orphans = await tx
    .selectFrom('attachments as a')
    .selectAll('a')
    .where('a.realm_id', '=', realmId)
    .where('a.id', '=', sql<number>`any(${intArray(candidates)})`)
    .where(UNLINKED)
    .execute();
  if (orphans.length === 0) return;
  const ids = orphans.map((a) => a.id);
  await sql`insert into archived_attachments (realm_id, transaction_id, attachment_id, data)
    select realm_id, ${transactionId}, id, to_jsonb(a) from attachments a where realm_id = ${realmId} and id = any(${intArray(ids)})
    on conflict (attachment_id) do update set transaction_id = excluded.transaction_id, data = excluded.data`.execute(tx);
  await tx
    .deleteFrom('attachments')
    .where('realm_id', '=', realmId)
    .where('id', '=', sql<number>`any(${intArray(ids)})`)
    .execute();
  // The owner's uploads list and quota change, as when they delete a file.
  for (const a of orphans) await notifyAttachment(ctx, a.owner_id, 'remove', { id: a.id });
}

function groupBy<T>(items: T[], key: (item: T) => string): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    groups.set(k, [...(groups.get(k) ?? []), item]);
  }
  return [...groups.values()];
}

/** Forgets archives made before `before`, a hundred transactions at a time; their files' bytes go after each commit. */
async function vacuum(svc: Services, before: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const files = await transact(svc, async (tx) => {
      const ids = (await tx.selectFrom('archive_transactions').select('id').where('created_at', '<', before).orderBy('id').limit(100).execute()).map(
        (r) => r.id,
      );
      if (ids.length === 0) return null;
      const archived = await tx.selectFrom('archived_attachments').select('data').where('transaction_id', 'in', ids).execute();
      await tx.deleteFrom('archive_transactions').where('id', 'in', ids).execute();
      const rows = archived.map((a) => a.data as Attachment);
      // A path in use again (never, today: restored rows leave the archive) keeps its bytes.
      const live =
        rows.length === 0
          ? []
          : await tx
              .selectFrom('attachments')
              .select('path_id')
              .where(
                'path_id',
                'in',
                rows.map((r) => r.path_id),
              )
              .execute();
      const keep = new Set(live.map((r) => r.path_id));
      return { count: ids.length, gone: rows.filter((r) => !keep.has(r.path_id)) };
    });
    if (files === null) return total;
    total += files.count;
    for (const row of files.gone) for (const key of attachmentKeys(row)) await svc.storage.delete(key);
  }
}

/**
 * Puts back what the retention policy archived in an organization (optionally
 * one channel's) and not yet forgotten; returns the number of messages. Like
 * the reference, no events: clients see the messages when they next fetch.
 */
export async function restoreArchived(svc: Services, realm: Realm, channelId?: number): Promise<number> {
  let q = svc.db
    .selectFrom('archive_transactions as t')
    .select('t.id')
    .distinct()
    .where('t.realm_id', '=', realm.id)
    .where('t.kind', '=', ARCHIVE_KIND.RETENTION)
    .where('t.restored', '=', false);
  if (channelId !== undefined) q = q.innerJoin('archived_messages as a', 'a.transaction_id', 't.id').where('a.channel_id', '=', channelId);
  let restored = 0;
  for (const { id } of await q.orderBy('t.id').execute()) {
    restored += await transactAs(svc, realm, null, async (ctx) => {
      const { tx } = ctx;
      const n = await restoreRows(tx, 'messages', sql`select data from archived_messages where transaction_id = ${id}`);
      const files = await restoreFiles(tx, realm.id, id);
      for (const table of MESSAGE_ROWS) {
        // A link comes back only with its file (one archived and forgotten before stays away).
        const linkable = table === 'attachment_messages' ? sql`and exists (select 1 from attachments a where a.id = (r.data->>'attachment_id')::int)` : sql``;
        await restoreRows(tx, table, sql`select data from archived_message_rows r where transaction_id = ${id} and table_name = ${table} ${linkable}`);
      }
      // Told once their links are back, so the `messages` they list are right.
      for (const row of files) await notifyAttachment(ctx, row.owner_id, 'add', await formatAttachment(tx, row));
      await tx.deleteFrom('archived_messages').where('transaction_id', '=', id).execute();
      await tx.deleteFrom('archived_message_rows').where('transaction_id', '=', id).execute();
      await tx.updateTable('archive_transactions').set({ restored: true }).where('id', '=', id).execute();
      return n;
    });
  }
  return restored;
}

/**
 * Brings back the archived files this archive transaction links (wherever they
 * were archived: a later batch may have taken a file's last link) and those it
 * archived itself. The caller tells their owners (`attachment` add).
 */
async function restoreFiles(tx: Tx, realmId: number, transactionId: number): Promise<Attachment[]> {
  const source = sql`select data from archived_attachments where realm_id = ${realmId} and (transaction_id = ${transactionId} or attachment_id in
    (select (data->>'attachment_id')::int from archived_message_rows where transaction_id = ${transactionId} and table_name = 'attachment_messages'))`;
  const ids = (await sql<{ id: number }>`select (data->>'id')::int as id from (${source}) s`.execute(tx)).rows.map((r) => r.id);
  if (ids.length === 0) return [];
  await restoreRows(tx, 'attachments', source);
  await tx
    .deleteFrom('archived_attachments')
    .where('attachment_id', '=', sql<number>`any(${intArray(ids)})`)
    .execute();
  return tx
    .selectFrom('attachments')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', sql<number>`any(${intArray(ids)})`)
    .execute();
}

/** Inserts rows kept as JSON back into `table`, every stored column (generated ones are computed again). */
async function restoreRows(tx: Tx, table: string, source: RawBuilder<unknown>): Promise<number> {
  const columns = await sql<{ name: string }>`select column_name as name from information_schema.columns
    where table_schema = current_schema() and table_name = ${table} and is_generated = 'NEVER' order by ordinal_position`.execute(tx);
  const names = columns.rows.map((c) => sql.id(c.name));
  const picked = columns.rows.map((c) => sql`(r).${sql.id(c.name)}`);
  const result = await sql`insert into ${sql.table(table)} (${sql.join(names)})
    select ${sql.join(picked)} from (select jsonb_populate_record(null::${sql.table(table)}, s.data) as r from (${source}) s) x
    on conflict do nothing`.execute(tx);
  return Number(result.numAffectedRows ?? 0);
}

// 'CONF' and 1: this pass's advisory lock, the same in every process.
const LOCK = [0x434f4e46, 1] as const;
const running = new WeakSet<object>();

/** Runs `work` unless a pass runs already, here or (PostgreSQL) in another process. */
async function withPassLock<T>(svc: Services, work: () => Promise<T>): Promise<T | null> {
  if (running.has(svc.db)) return null;
  running.add(svc.db);
  try {
    // PGlite has one connection and one process: the in-process guard is the lock.
    if (svc.dbKind !== 'postgres') return await work();
    return await svc.db.connection().execute(async (conn) => {
      const { rows } = await sql<{ got: boolean }>`select pg_try_advisory_lock(${LOCK[0]}, ${LOCK[1]}) as got`.execute(conn);
      if (!rows[0].got) return null;
      try {
        return await work();
      } finally {
        await sql`select pg_advisory_unlock(${LOCK[0]}, ${LOCK[1]})`.execute(conn);
      }
    });
  } finally {
    running.delete(svc.db);
  }
}

export interface RetentionJob {
  stop(): Promise<void>;
}

/** The daily job: a first pass a minute after start (sooner if the interval is shorter), then every interval; 0 = off. */
export function startRetention(svc: Services, intervalMs: number): RetentionJob {
  let stopped = false;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    running = runRetentionPass(svc)
      .then(
        () => {},
        (err) => svc.log.error({ err }, 'retention pass failed'),
      )
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, intervalMs).unref();
      });
  };
  // An interval of 0 turns the job off (tests run passes themselves).
  if (intervalMs > 0) timer = setTimeout(tick, Math.min(intervalMs, 60_000)).unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
