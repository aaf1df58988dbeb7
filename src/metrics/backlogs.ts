// Backlogs read at scrape time: work that is due and not yet done.

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
