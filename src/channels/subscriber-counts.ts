// Each channel's stored `subscriber_count`: its active subscriptions of active users.
// Every change of who that is (subscribing, unsubscribing, a user's deactivation or
// reactivation, an import) changes it in the same transaction, before anything
// formats the channel, so that readers (register, GET /streams, events) read one
// column instead of counting an organization's subscriptions.
//
// Concurrent changes end as if one ran after the other:
// - a subscription change locks its users' rows (lockActiveUsers) before counting
//   them, and a (de)activation updates the user's row before reading the user's
//   subscriptions: whichever comes second waits for the first's commit, then sees it;
// - two subscription changes write only the rows they changed (`active` flips once);
// - channel rows are locked in id order, so changes of several channels queue
//   rather than deadlock (a deadlock left elsewhere is retried by transact()).

import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../db/schema.ts';
import type { Tx } from '../db/transact.ts';
import { inIds, intArray } from '../db/ids.ts';

/** The active users among `userIds`, their rows locked until commit: a concurrent (de)activation waits. */
export async function lockActiveUsers(tx: Tx, userIds: readonly number[]): Promise<Set<number>> {
  const ids = [...new Set(userIds)].sort((a, b) => a - b);
  if (ids.length === 0) return new Set();
  const rows = await tx.selectFrom('users').select(['id', 'is_active']).where(inIds('id', ids)).orderBy('id').forShare().execute();
  return new Set(rows.filter((r) => r.is_active).map((r) => r.id));
}

/** Adds each channel's delta (subscribers gained, or lost when negative). */
export async function addToSubscriberCounts(tx: Tx, deltas: ReadonlyMap<number, number>): Promise<void> {
  const changed = [...deltas].filter(([, n]) => n !== 0);
  if (changed.length === 0) return;
  const ids = changed.map(([id]) => id);
  const ns = changed.map(([, n]) => n);
  await addCounts(tx, sql`select * from unnest(${intArray(ids)}, ${ns}::int[]) as d(id, n)`);
}

/** A user (de)activated, their row already updated in this transaction: their active subscriptions count again, or no longer. */
export async function countUserActivity(tx: Tx, userId: number, active: boolean): Promise<void> {
  await addCounts(tx, sql`select channel_id as id, ${active ? 1 : -1}::integer as n from subscriptions where user_id = ${userId} and active`);
}

/** `deltas` = rows (id, n), at most one per channel; the channel rows locked in id order first. */
async function addCounts(tx: Tx, deltas: RawBuilder<unknown>): Promise<void> {
  await sql`
    with d as (${deltas}),
    locked as (select c.id from channels c join d on d.id = c.id order by c.id for no key update of c)
    update channels c set subscriber_count = c.subscriber_count + d.n
    from d where d.id = c.id and c.id in (select id from locked)`.execute(tx);
}

/** Every channel of an organization counted again (an import, or rows written by raw SQL). */
export async function recountSubscribers(db: Executor, realmId: number): Promise<void> {
  await sql`
    update channels c set subscriber_count = coalesce((
      select count(*)::integer from subscriptions s join users u on u.id = s.user_id
      where s.channel_id = c.id and s.active and u.is_active), 0)
    where c.realm_id = ${realmId}`.execute(db);
}
