// The scheduler: sends each due scheduled message and reminder exactly once.
//
// A pass claims one due row at a time with FOR NO KEY UPDATE SKIP LOCKED, sends
// it through the send path and marks it delivered in that same transaction: a
// crash either commits both or neither, and concurrent passes (in this process
// or another) never claim the same row. A row whose send is refused is marked
// failed in a second transaction, and its author told, as the reference does.
// The server runs a pass every SCHEDULER_INTERVAL_MS; tests call deliverDue.

import type { Services } from '../services.ts';
import type { ActionContext, PassContext, Tx } from '../db/transact.ts';
import type { User } from '../users/tables.ts';
import { transact } from '../db/transact.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import { getUser } from '../users/queries.ts';
import { channelViewer } from '../channels/access.ts';
import { sendWithin } from '../messages/send/send.ts';
import { sendNotices } from '../notification_bot/index.ts';
import { DELIVERY, type ScheduledMessage } from './tables.ts';
import { formatScheduledMessage } from './format.ts';
import { sendRequestOf } from './actions.ts';
import { reminderContent } from './reminder-content.ts';
import { deliveryFailedNotice } from './notices.ts';
import { startPeriodic, type Periodic } from '../jobs/periodic.ts';
import { canSee } from '../messages/access.ts';
import type { RemindersEvent, ScheduledMessagesEvent } from './actions.ts';

/** A scheduled message more than this late is not sent (reminders are: they reach only their author). */
export const LATE_CUTOFF_MS = 10 * 60_000;

/** Failures the author is not told of: nobody could read the notice. */
const UNTOLD = new Set(['REALM_DEACTIVATED', 'USER_DEACTIVATED']);

/** One pass: delivers every row due at `now`; returns how many this pass claimed. */
export async function deliverDue(svc: Services, now = new Date()): Promise<number> {
  const claimed: number[] = [];
  for (;;) {
    const attempt: { row?: ScheduledMessage } = {};
    try {
      await transact(svc, async (tx, emit) => {
        attempt.row = await claimNext(tx, now, claimed);
        if (!attempt.row) return;
        claimed.push(attempt.row.id);
        await deliver({ svc, tx, emit }, attempt.row, now);
      });
    } catch (err) {
      // Nothing claimed: the database itself failed; the next pass tries again.
      if (!attempt.row) throw err;
      await markFailed(svc, attempt.row, err);
    }
    if (!attempt.row) return claimed.length;
  }
}

/** The next due row no other pass holds (and this pass has not tried), locked. */
function claimNext(tx: Tx, now: Date, tried: number[]): Promise<ScheduledMessage | undefined> {
  let q = tx.selectFrom('scheduled_messages').selectAll().where('delivered', '=', false).where('failed', '=', false).where('scheduled_at', '<=', now);
  if (tried.length > 0) q = q.where('id', 'not in', tried);
  return q.orderBy('scheduled_at').orderBy('id').limit(1).forNoKeyUpdate().skipLocked().executeTakeFirst();
}

async function deliver(pass: PassContext, row: ScheduledMessage, now: Date): Promise<void> {
  const { tx, emit } = pass;
  // Checked again: the organization or the author may have gone since it was scheduled.
  const realm = await tx.selectFrom('realms').selectAll().where('id', '=', row.realm_id).executeTakeFirstOrThrow();
  if (realm.deactivated) throw new ApiError('REALM_DEACTIVATED', 'This organization has been deactivated');
  const sender = (await getUser(tx, realm.id, row.sender_id))!;
  if (!sender.is_active) throw new ApiError('USER_DEACTIVATED', 'Account is deactivated');
  let messageId: number;
  if (row.delivery_type === DELIVERY.REMIND) {
    messageId = await sendReminder({ ...pass, realm, actor: sender }, row);
  } else {
    if (now.getTime() > row.scheduled_at.getTime() + LATE_CUTOFF_MS) throw badRequest('Message could not be sent at the scheduled time.');
    // Every permission is checked again, as of now.
    messageId = (await sendWithin({ ...pass, realm, actor: sender }, sendRequestOf(row))).id;
  }
  await tx.updateTable('scheduled_messages').set({ delivered: true, delivered_message_id: messageId }).where('id', '=', row.id).execute();
  const removed: ScheduledMessagesEvent | RemindersEvent =
    row.delivery_type === DELIVERY.REMIND
      ? { type: 'reminders', op: 'remove', reminder_id: row.id }
      : { type: 'scheduled_messages', op: 'remove', scheduled_message_id: row.id };
  emit(realm.id, removed, [sender.id]);
}

/**
 * Notification Bot's direct message to the reminder's author (the actor): the message
 * as it reads now, or as it read when the reminder was set.
 */
async function sendReminder(ctx: ActionContext<Services, User>, row: ScheduledMessage): Promise<number> {
  const { svc, tx, realm, actor: user } = ctx;
  const target = await tx
    .selectFrom('messages')
    .selectAll()
    .where('realm_id', '=', realm.id)
    .where('id', '=', row.reminder_target_message_id!)
    .executeTakeFirst();
  const readable = target !== undefined && (await canSee(tx, { realm, viewer: await channelViewer(tx, realm, user) }, target));
  const content = readable ? await reminderContent(tx, svc.config, realm, target, row.reminder_note) : row.content;
  const [id] = await sendNotices({ ...ctx, actor: null }, [{ to: { user }, content }]);
  return id;
}

/** Marks a refused row failed, once, and tells its author (not for reminders: they have their own notices). */
async function markFailed(svc: Services, row: ScheduledMessage, err: unknown): Promise<void> {
  const known = err instanceof ApiError;
  if (!known) svc.log.error({ err, scheduledMessageId: row.id }, 'scheduled message failed unexpectedly');
  const failure = known ? err.message : 'Internal server error';
  await transact(svc, async (tx, emit) => {
    // Another pass may have settled it meanwhile.
    const current = await tx
      .selectFrom('scheduled_messages')
      .select('id')
      .where('id', '=', row.id)
      .where('delivered', '=', false)
      .where('failed', '=', false)
      .forNoKeyUpdate()
      .executeTakeFirst();
    if (!current) return;
    const failed = await tx
      .updateTable('scheduled_messages')
      .set({ failed: true, failure_message: failure })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (row.delivery_type === DELIVERY.REMIND || (known && UNTOLD.has(err.code))) return;
    const realm = await tx.selectFrom('realms').selectAll().where('id', '=', row.realm_id).executeTakeFirstOrThrow();
    const author = (await getUser(tx, realm.id, row.sender_id))!;
    emit(realm.id, { type: 'scheduled_messages', op: 'update', scheduled_message: formatScheduledMessage(failed) }, [author.id]);
    await sendNotices({ svc, tx, emit, realm, actor: null }, [{ to: { user: author }, content: deliveryFailedNotice(failed.scheduled_at, failure) }]);
  });
}

export type Scheduler = Periodic;

/** Runs a pass at once (catching up after a restart), then every `intervalMs`. */
export function startScheduler(svc: Services, intervalMs: number): Scheduler {
  return startPeriodic(svc.log, 'scheduler pass', () => deliverDue(svc), intervalMs);
}
