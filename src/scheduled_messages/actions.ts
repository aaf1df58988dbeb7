// Scheduled messages (POST/PATCH/DELETE /scheduled_messages) and reminders
// (POST/DELETE /reminders): each is checked as a send would be when it is
// written, kept until the scheduler delivers it (scheduler.ts), and announced
// to its author's clients through `scheduled_messages` / `reminders` events.

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { transact } from '../db/transact.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { renderMarkdown } from '../rendering/index.ts';
import { channelViewer } from '../channels/access.ts';
import { sendWithin, type SendRequest } from '../messages/send/send.ts';
import { normalizeContent, normalizeTopic } from '../messages/validation.ts';
import { DELIVERY, type ScheduledMessage } from './tables.ts';
import { formatReminder, formatScheduledMessage } from './format.ts';
import { ownRow } from './queries.ts';
import { channelIdOf, normalizeNote, userIdsOf, type ScheduledType } from './validation.ts';
import { reminderContent } from './reminder-content.ts';
import { canSee } from '../messages/access.ts';
import type { ApiReminder, ApiScheduledMessage } from './format.ts';

export type ScheduledMessagesEvent =
  | { type: 'scheduled_messages'; op: 'add'; scheduled_messages: ApiScheduledMessage[] }
  | { type: 'scheduled_messages'; op: 'update'; scheduled_message: ApiScheduledMessage }
  | { type: 'scheduled_messages'; op: 'remove'; scheduled_message_id: number };

export type RemindersEvent = { type: 'reminders'; op: 'add'; reminders: ApiReminder[] } | { type: 'reminders'; op: 'remove'; reminder_id: number };

/** What POST /messages would be asked to send this row (the scheduler sends exactly this). */
export function sendRequestOf(
  row: Pick<ScheduledMessage, 'type' | 'channel_id' | 'dm_user_ids' | 'topic' | 'content' | 'read_by_sender' | 'client'>,
): SendRequest {
  const stream = row.type === 'stream';
  return {
    type: stream ? 'stream' : 'private',
    to: stream ? String(row.channel_id) : JSON.stringify(row.dm_user_ids),
    topic: stream ? row.topic : undefined,
    content: row.content,
    read_by_sender: row.read_by_sender ?? undefined,
    clientName: row.client,
  };
}

class DryRun extends Error {}

/** Every check a send makes, in a transaction that is always rolled back. */
async function checkSendable(svc: Services, realm: Realm, sender: User, req: SendRequest): Promise<void> {
  try {
    await svc.db.transaction().execute(async (tx) => {
      await sendWithin({ svc, tx, emit: () => {}, realm, actor: sender }, req);
      throw new DryRun();
    });
  } catch (err) {
    if (!(err instanceof DryRun)) throw err;
  }
}

interface Addressed {
  type: ScheduledType;
  channel_id: number | null;
  dm_user_ids: number[] | null;
  topic: string;
  content: string;
}

/** Where a scheduled message goes and what it says, in stored form, checked as a send. */
async function address(
  svc: Services,
  realm: Realm,
  sender: User,
  a: { type: ScheduledType; to: string; topic?: string; content: string; client: string },
): Promise<Addressed> {
  const content = normalizeContent(a.content);
  let row: Addressed;
  if (a.type === 'stream') {
    if (a.topic === undefined) throw badRequest('Missing topic');
    row = { type: 'stream', channel_id: channelIdOf(a.to), dm_user_ids: null, topic: normalizeTopic(a.topic), content };
  } else {
    const ids = userIdsOf(a.to).sort((x, y) => x - y);
    const others = ids.filter((id) => id !== sender.id);
    row = { type: 'private', channel_id: null, dm_user_ids: others.length > 0 || ids.length === 0 ? others : [sender.id], topic: '', content };
  }
  await checkSendable(svc, realm, sender, sendRequestOf({ ...row, read_by_sender: null, client: a.client }));
  return row;
}

const render = async (svc: Services, realm: Realm, author: User, content: string) =>
  (await renderMarkdown(svc, { realm, content, author, onFailure: 'error' })).html;

export interface ScheduleRequest {
  type: ScheduledType;
  to: string;
  topic: string | undefined;
  content: string;
  deliverAt: Date;
  readBySender: boolean | undefined;
  clientName: string;
}

/** POST /scheduled_messages: the new scheduled message's id. */
export async function scheduleMessage(svc: Services, realm: Realm, sender: User, req: ScheduleRequest): Promise<number> {
  const row = await address(svc, realm, sender, { ...req, client: req.clientName });
  const rendered = await render(svc, realm, sender, row.content);
  return transact(svc, async (tx, emit) => {
    const created = await tx
      .insertInto('scheduled_messages')
      .values({
        ...row,
        realm_id: realm.id,
        sender_id: sender.id,
        delivery_type: DELIVERY.SEND_LATER,
        rendered_content: rendered,
        client: req.clientName,
        read_by_sender: req.readBySender ?? null,
        scheduled_at: req.deliverAt,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    emit(realm.id, { type: 'scheduled_messages', op: 'add', scheduled_messages: [formatScheduledMessage(created)] }, [sender.id]);
    return created.id;
  });
}

const noSuchScheduledMessage = () => notFound('Scheduled message does not exist');

export interface EditScheduledRequest {
  type?: ScheduledType;
  to?: string;
  topic?: string;
  content?: string;
  deliverAt?: Date;
  clientName: string;
}

/** PATCH /scheduled_messages/{id}: what changes is checked again as a send; a failed one is retried at its new time. */
export async function editScheduledMessage(svc: Services, realm: Realm, sender: User, id: number, req: EditScheduledRequest): Promise<void> {
  const { type, to, topic, content, deliverAt } = req;
  if ([type, to, topic, content, deliverAt].every((v) => v === undefined)) throw badRequest('Nothing to change');
  if (type !== undefined && to === undefined) throw badRequest('Recipient required when updating type of scheduled message.');
  if (type === 'stream' && topic === undefined) throw badRequest('Topic required when updating scheduled message type to stream.');
  const existing = await ownRow(svc.db, sender.id, DELIVERY.SEND_LATER, id);
  if (!existing) throw noSuchScheduledMessage();
  checkEditable(existing, deliverAt);

  const changes: Partial<Addressed & { rendered_content: string }> = {};
  const newType = (type ?? existing.type) as ScheduledType;
  if (type !== undefined || to !== undefined || content !== undefined || (topic !== undefined && newType === 'stream')) {
    Object.assign(
      changes,
      await address(svc, realm, sender, {
        type: newType,
        // `type` never comes without `to`.
        to: to ?? sendRequestOf(existing).to!,
        topic: topic ?? (newType === 'stream' ? existing.topic : undefined),
        content: content ?? existing.content,
        client: req.clientName,
      }),
    );
    if (content !== undefined) changes.rendered_content = await render(svc, realm, sender, changes.content!);
  }
  await transact(svc, async (tx, emit) => {
    // Locked: a delivery under way finishes first, and is seen.
    const current = await ownRow(tx, sender.id, DELIVERY.SEND_LATER, id, true);
    if (!current) throw noSuchScheduledMessage();
    checkEditable(current, deliverAt);
    const updated = await tx
      .updateTable('scheduled_messages')
      .set({ ...changes, ...(deliverAt ? { scheduled_at: deliverAt } : {}), client: req.clientName, failed: false, failure_message: null })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    emit(realm.id, { type: 'scheduled_messages', op: 'update', scheduled_message: formatScheduledMessage(updated) }, [sender.id]);
  });
}

function checkEditable(row: ScheduledMessage, deliverAt: Date | undefined): void {
  if (row.delivered) throw badRequest('Scheduled message was already sent');
  // One the server failed to send needs a new time.
  if (row.failed && deliverAt === undefined) throw badRequest('Scheduled delivery time must be in the future.');
}

/** DELETE /scheduled_messages/{id}: cancels it. */
export async function deleteScheduledMessage(svc: Services, realm: Realm, sender: User, id: number): Promise<void> {
  await transact(svc, async (tx, emit) => {
    if (!(await ownRow(tx, sender.id, DELIVERY.SEND_LATER, id, true))) throw noSuchScheduledMessage();
    await tx.deleteFrom('scheduled_messages').where('id', '=', id).execute();
    emit(realm.id, { type: 'scheduled_messages', op: 'remove', scheduled_message_id: id }, [sender.id]);
  });
}

export interface ReminderRequest {
  messageId: number;
  deliverAt: Date;
  note: string | undefined;
  clientName: string;
}

/** POST /reminders: Notification Bot will remind the user of a message they can read. */
export async function createReminder(svc: Services, realm: Realm, user: User, req: ReminderRequest): Promise<number> {
  const note = req.note === undefined ? null : normalizeNote(req.note) || null;
  const message = await svc.db.selectFrom('messages').selectAll().where('realm_id', '=', realm.id).where('id', '=', req.messageId).executeTakeFirst();
  if (!message || !(await canSee(svc.db, { realm, viewer: await channelViewer(svc.db, realm, user) }, message))) throw badRequest('Invalid message(s)');
  const content = await reminderContent(svc.db, svc.config, realm, message, note);
  const rendered = await render(svc, realm, user, content);
  return transact(svc, async (tx, emit) => {
    const created = await tx
      .insertInto('scheduled_messages')
      .values({
        realm_id: realm.id,
        sender_id: user.id,
        delivery_type: DELIVERY.REMIND,
        type: 'private',
        channel_id: null,
        dm_user_ids: [user.id],
        content,
        rendered_content: rendered,
        client: req.clientName,
        read_by_sender: false,
        scheduled_at: req.deliverAt,
        reminder_target_message_id: message.id,
        reminder_note: note,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    emit(realm.id, { type: 'reminders', op: 'add', reminders: [formatReminder(created)] }, [user.id]);
    return created.id;
  });
}

/** DELETE /reminders/{id}. */
export async function deleteReminder(svc: Services, realm: Realm, user: User, id: number): Promise<void> {
  await transact(svc, async (tx, emit) => {
    if (!(await ownRow(tx, user.id, DELIVERY.REMIND, id, true))) throw notFound('Reminder does not exist');
    await tx.deleteFrom('scheduled_messages').where('id', '=', id).execute();
    emit(realm.id, { type: 'reminders', op: 'remove', reminder_id: id }, [user.id]);
  });
}
