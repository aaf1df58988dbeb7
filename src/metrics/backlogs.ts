// Backlogs read at scrape time: work that is due and not yet done.

import { sql } from 'kysely';
import type { Executor } from '../db/schema.ts';

/** Scheduled messages and reminders due at `now`, neither delivered nor failed. */
export async function schedulerBacklog(db: Executor, now: Date): Promise<number> {
  const row = await db
    .selectFrom('scheduled_messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('delivered', '=', false)
    .where('failed', '=', false)
    .where('scheduled_at', '<=', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export const JOB_STATES = ['due', 'waiting', 'running', 'failed'] as const;
export type JobState = (typeof JOB_STATES)[number];

/**
 * The job table by kind and state: due (may run now), waiting (a retry's
 * back-off), running (leased to a worker), failed (given up, kept for the
 * operator). Kinds outside `kinds` count as "other", so a label is always one
 * of our fixed words.
 */
export async function jobBacklog(db: Executor, now: Date, kinds: readonly string[]): Promise<{ kind: string; state: JobState; count: number }[]> {
  const { rows } = await sql<{ kind: string; state: JobState; n: number }>`select kind, state, count(*)::int as n from (
      select kind, case when failed_at is not null then 'failed' when locked_until > ${now} then 'running'
        when run_after <= ${now} then 'due' else 'waiting' end as state from jobs) j
    group by kind, state`.execute(db);
  const counts = new Map<string, number>();
  for (const k of [...kinds, 'other']) for (const s of JOB_STATES) counts.set(`${k} ${s}`, 0);
  for (const r of rows) {
    const key = `${kinds.includes(r.kind) ? r.kind : 'other'} ${r.state}`;
    counts.set(key, counts.get(key)! + Number(r.n));
  }
  return [...counts].map(([key, count]) => {
    const [kind, s] = key.split(' ');
    return { kind, state: s as JobState, count };
  });
}
