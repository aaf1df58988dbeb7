// Register's `scheduled_messages` and `reminders`: the user's undelivered ones
// (failed included), by delivery time, kept current by their events.

import { once, type RegisterContext, type StateSection } from '../events/state.ts';
import { DELIVERY, type ScheduledMessage } from './tables.ts';
import { listPending } from './queries.ts';
import { formatReminder, formatScheduledMessage, type ApiReminder, type ApiScheduledMessage } from './format.ts';

type Keyed = { scheduled_delivery_timestamp: number };

/** Adds, replaces or removes entries by id, keeping the list in delivery order. */
function applyTo<T extends Keyed>(list: T[], idOf: (x: T) => number, added: T[], removedId: unknown): T[] {
  const replaced = new Set(added.map(idOf));
  return [...list.filter((x) => !replaced.has(idOf(x)) && idOf(x) !== removedId), ...added].sort(
    (a, b) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp || idOf(a) - idOf(b),
  );
}

/** The caller's undelivered rows of one type; both sections' in one read per register call. */
async function pending(ctx: RegisterContext, deliveryType: number): Promise<ScheduledMessage[]> {
  const rows = await once(ctx, 'scheduled_messages:pending', () => listPending(ctx.svc.db, ctx.user!.id));
  return rows.filter((r) => r.delivery_type === deliveryType);
}

export const scheduledMessagesSection: StateSection<{ scheduled_messages: ApiScheduledMessage[] }> = {
  types: ['scheduled_messages'],
  async fetch(ctx) {
    if (!ctx.user) return { scheduled_messages: [] };
    return { scheduled_messages: (await pending(ctx, DELIVERY.SEND_LATER)).map(formatScheduledMessage) };
  },
  apply(state, event) {
    if (event.type !== 'scheduled_messages') return;
    const added = event.op === 'add' ? event.scheduled_messages : event.op === 'update' ? [event.scheduled_message] : [];
    const removed = event.op === 'remove' ? event.scheduled_message_id : undefined;
    state.scheduled_messages = applyTo(state.scheduled_messages, (m) => m.scheduled_message_id, added, removed);
  },
};

export const remindersSection: StateSection<{ reminders: ApiReminder[] }> = {
  types: ['reminders'],
  async fetch(ctx) {
    if (!ctx.user) return { reminders: [] };
    return { reminders: (await pending(ctx, DELIVERY.REMIND)).map(formatReminder) };
  },
  apply(state, event) {
    if (event.type !== 'reminders') return;
    const added = event.op === 'add' ? event.reminders : [];
    state.reminders = applyTo(state.reminders, (m) => m.reminder_id, added, event.op === 'remove' ? event.reminder_id : undefined);
  },
};
