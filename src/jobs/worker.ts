// The job table's worker: work that must happen outside requests and must not
// be lost (outgoing webhook deliveries, link previews, emails).
//
// A job is inserted in the transaction of the change that causes it, so it
// exists exactly when that change does. A pass claims one due job at a time
// (FOR UPDATE SKIP LOCKED, in a short transaction that sets a lease and counts
// the attempt), runs it outside any transaction, and records the result in
// another short one: done jobs are deleted; failed ones wait with a growing
// backoff, and after their kind's last attempt are marked failed, with the
// kind's `giveUp` run in that same transaction. A process that dies mid-run
// leaves its lease to expire: the job runs again (at least once).

import type { Services } from '../services.ts';
import type { PassContext, Tx } from '../db/transact.ts';
import { transact } from '../db/transact.ts';
import type { Job } from './tables.ts';
import { startPeriodic, type Periodic } from './periodic.ts';

/** A failure that another attempt cannot fix: the job gives up at once. */
export class PermanentJobError extends Error {}

export interface JobKind {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** How long a claimed job is held before another pass may take it (longer than a run). */
  leaseMs: number;
  /** The wait after failed attempt `attempt` (1-based); `config` for kinds whose waits the operator sets. */
  backoffMs(attempt: number, config: Services['config']): number;
  /** Does the work; throwing means this attempt failed. */
  run(svc: Services, job: Job): Promise<void>;
  /** After the last failure, in the transaction that marks the job failed (no organization: the job names it). */
  giveUp?(ctx: PassContext, job: Job, error: string): Promise<void>;
}

export type JobKinds = Readonly<Record<string, JobKind>>;

/** Queues a job in the caller's transaction. */
export async function enqueueJob(tx: Tx, job: NewJob): Promise<void> {
  await enqueueJobs(tx, [job]);
}

/** Many jobs in few statements (a message can start thousands of users' batches). */
export async function enqueueJobs(tx: Tx, jobs: readonly NewJob[]): Promise<void> {
  // Seven parameters a row: chunks stay far below PostgreSQL's 65,535.
  for (let i = 0; i < jobs.length; i += 5000) {
    const rows = jobs.slice(i, i + 5000).map((job) => ({
      realm_id: job.realmId,
      kind: job.kind,
      payload: JSON.stringify(job.payload),
      run_after: job.runAfter ?? new Date(),
      locked_until: null,
      last_error: null,
      failed_at: null,
    }));
    await tx.insertInto('jobs').values(rows).execute();
  }
}

interface NewJob {
  realmId: number | null;
  kind: string;
  payload: Record<string, unknown>;
  runAfter?: Date;
}

/**
 * Claims the next due job of the given kinds that no other pass holds: leased
 * and its attempt counted. A job of a kind this process does not know waits
 * (for a process that does), rather than failing.
 */
async function claimNext(svc: Services, kinds: JobKinds, now: Date): Promise<{ job: Job; leaseMs: number } | undefined> {
  return svc.db.transaction().execute(async (tx) => {
    const due = await tx
      .selectFrom('jobs')
      .selectAll()
      .where('failed_at', 'is', null)
      .where('kind', 'in', Object.keys(kinds))
      .where('run_after', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .orderBy('run_after')
      .orderBy('id')
      .limit(1)
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    if (!due) return undefined;
    const leaseMs = kinds[due.kind]?.leaseMs ?? 60_000;
    const job = await tx
      .updateTable('jobs')
      .set({ locked_until: new Date(now.getTime() + leaseMs), attempts: due.attempts + 1 })
      .where('id', '=', due.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { job, leaseMs };
  });
}

async function recordFailure(svc: Services, kind: JobKind | undefined, job: Job, err: unknown, now: Date): Promise<void> {
  const error = err instanceof Error ? err.message : String(err);
  const last = !kind || err instanceof PermanentJobError || job.attempts >= kind.maxAttempts;
  if (!last) {
    await svc.db
      .updateTable('jobs')
      .set({ locked_until: null, last_error: error, run_after: new Date(now.getTime() + kind.backoffMs(job.attempts, svc.config)) })
      .where('id', '=', job.id)
      .execute();
    return;
  }
  svc.log.warn({ jobId: job.id, kind: job.kind, attempts: job.attempts, error }, 'job failed for the last time');
  await transact(svc, async (tx, emit) => {
    // Only the pass that marks it tells anyone.
    const marked = await tx
      .updateTable('jobs')
      .set({ failed_at: now, locked_until: null, last_error: error })
      .where('id', '=', job.id)
      .where('failed_at', 'is', null)
      .executeTakeFirst();
    if (marked.numUpdatedRows > 0n) await kind?.giveUp?.({ svc, tx, emit }, job, error);
  });
}

/** One pass: runs every job due at `now`; returns how many it ran. */
export async function runDueJobs(svc: Services, kinds: JobKinds, now = new Date()): Promise<number> {
  let ran = 0;
  for (;;) {
    const claimed = await claimNext(svc, kinds, now);
    if (!claimed) return ran;
    ran++;
    const { job } = claimed;
    const kind = kinds[job.kind];
    try {
      if (!kind) throw new PermanentJobError(`unknown job kind ${job.kind}`);
      await kind.run(svc, job);
      await svc.db.deleteFrom('jobs').where('id', '=', job.id).execute();
    } catch (err) {
      await recordFailure(svc, kind, job, err, now);
    }
  }
}

/** Runs a pass at once (catching up after a restart), then every `intervalMs`. */
export function startJobWorker(svc: Services, kinds: JobKinds, intervalMs: number): Periodic {
  return startPeriodic(svc.log, 'job pass', () => runDueJobs(svc, kinds), intervalMs);
}
