import type { Executor } from '../db/schema.ts';
import type { ScheduledMessage } from './tables.ts';

/** A user's undelivered rows (failed ones included) of one delivery type, or of all, by delivery time. */
export async function listPending(db: Executor, userId: number, deliveryType?: number): Promise<ScheduledMessage[]> {
  let q = db.selectFrom('scheduled_messages').selectAll().where('sender_id', '=', userId);
  if (deliveryType !== undefined) q = q.where('delivery_type', '=', deliveryType);
  return q.where('delivered', '=', false).orderBy('scheduled_at').orderBy('id').execute();
}

/** One of the user's own rows of a delivery type; `lock` holds it for the caller's transaction. */
export async function ownRow(db: Executor, userId: number, deliveryType: number, id: number, lock = false): Promise<ScheduledMessage | undefined> {
  let q = db.selectFrom('scheduled_messages').selectAll().where('id', '=', id).where('sender_id', '=', userId).where('delivery_type', '=', deliveryType);
  if (lock) q = q.forUpdate();
  return q.executeTakeFirst();
}
