import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { DELIVERY } from './tables.ts';
import { listPending } from './queries.ts';
import { formatReminder, formatScheduledMessage } from './format.ts';
import { deliveryTime, scheduledType } from './validation.ts';
import { createReminder, deleteReminder, deleteScheduledMessage, editScheduledMessage, scheduleMessage } from './actions.ts';

const type = p.choice(['direct', 'private', 'stream', 'channel'] as const).map(scheduledType);
const when = p.int().map((t) => deliveryTime(t));

export function scheduledMessageRoutes(r: Router): void {
  r.route('GET', '/scheduled_messages', {}, async (ctx) => ({
    scheduled_messages: (await listPending(ctx.svc.db, ctx.user.id, DELIVERY.SEND_LATER)).map(formatScheduledMessage),
  }));

  r.route(
    'POST',
    '/scheduled_messages',
    {
      type,
      to: p.str(),
      topic: p.str().optional().alias('subject'),
      content: p.str(),
      scheduled_delivery_timestamp: when,
      read_by_sender: p.bool().optional(),
    },
    async (ctx, q) => ({
      scheduled_message_id: await scheduleMessage(ctx.svc, ctx.realm, ctx.user, {
        type: q.type,
        to: q.to,
        topic: q.topic,
        content: q.content,
        deliverAt: q.scheduled_delivery_timestamp,
        readBySender: q.read_by_sender,
        clientName: ctx.request.clientName,
      }),
    }),
  );

  r.route(
    'PATCH',
    '/scheduled_messages/{scheduled_message_id}',
    {
      type: type.optional(),
      to: p.str().optional(),
      topic: p.str().optional().alias('subject'),
      content: p.str().optional(),
      scheduled_delivery_timestamp: when.optional(),
    },
    async (ctx, q) => {
      await editScheduledMessage(ctx.svc, ctx.realm, ctx.user, q.scheduled_message_id, {
        type: q.type,
        to: q.to,
        topic: q.topic,
        content: q.content,
        deliverAt: q.scheduled_delivery_timestamp,
        clientName: ctx.request.clientName,
      });
      return {};
    },
  );

  r.route('DELETE', '/scheduled_messages/{scheduled_message_id}', {}, async (ctx, q) => {
    await deleteScheduledMessage(ctx.svc, ctx.realm, ctx.user, q.scheduled_message_id);
    return {};
  });

  r.route('GET', '/reminders', {}, async (ctx) => ({
    reminders: (await listPending(ctx.svc.db, ctx.user.id, DELIVERY.REMIND)).map(formatReminder),
  }));

  r.route('POST', '/reminders', { message_id: p.int(), scheduled_delivery_timestamp: when, note: p.str().optional() }, async (ctx, q) => ({
    reminder_id: await createReminder(ctx.svc, ctx.realm, ctx.user, {
      messageId: q.message_id,
      deliverAt: q.scheduled_delivery_timestamp,
      note: q.note,
      clientName: ctx.request.clientName,
    }),
  }));

  r.route('DELETE', '/reminders/{reminder_id}', {}, async (ctx, q) => {
    await deleteReminder(ctx.svc, ctx.realm, ctx.user, q.reminder_id);
    return {};
  });
}
