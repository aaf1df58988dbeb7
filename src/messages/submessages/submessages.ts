// Submessages (the reference's widgets): a `/poll` or `/todo` message gets a
// "widget" submessage when it is sent; POST /submessage adds the votes, options
// and tasks; every Message object lists its submessages in `submessages`.

import { z } from 'zod';
import type { Services } from '../../services.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import type { Executor } from '../../db/schema.ts';
import type { Message } from '../tables.ts';
import { transactAs, type Tx } from '../../db/transact.ts';
import { badRequest } from '../../http/errors.ts';
import { validate } from '../../http/params.ts';
import { channelViewer } from '../../channels/access.ts';
import { copyHolders } from '../history/changes.ts';
import { messageToChange } from '../access.ts';
import type { SubmessageEvent } from '../events.ts';

export interface ApiSubmessage {
  id: number;
  message_id: number;
  sender_id: number;
  msg_type: string;
  content: string;
}

/** The submessages of each message, oldest first. */
export async function submessagesOf(db: Executor, messageIds: number[]): Promise<Map<number, ApiSubmessage[]>> {
  const byMessage = new Map<number, ApiSubmessage[]>();
  if (messageIds.length === 0) return byMessage;
  const rows = await db
    .selectFrom('submessages')
    .select(['id', 'message_id', 'sender_id', 'msg_type', 'content'])
    .where('message_id', 'in', messageIds)
    .orderBy('id')
    .execute();
  for (const row of rows) byMessage.set(row.message_id, [...(byMessage.get(row.message_id) ?? []), row]);
  return byMessage;
}

/** Strips a list marker ("- ", "* ") from a line, as the reference does. */
const itemText = (line: string) => line.trim().replace(/^\s*[-*]?\s*/, '');

/** The widget a message's content starts (the reference's get_widget_data): `/poll` or `/todo`. */
export function widgetFor(content: string): { widget_type: string; extra_data: Record<string, unknown> } | undefined {
  const command = content.split(/\s+/, 1)[0];
  if (command !== '/poll' && command !== '/todo') return undefined;
  const lines = content.replace(command, '').split(/\r\n|\r|\n/);
  const heading = lines.length > 0 && lines[0] !== '' ? lines.shift()!.trim() : '';
  const items = lines.map(itemText).filter((item) => item.length > 0);
  if (command === '/poll') return { widget_type: 'poll', extra_data: { question: heading, options: items } };
  const tasks = items.map((item) => {
    const at = item.indexOf(': ');
    return at < 0 ? { task: item.trim(), desc: '' } : { task: item.slice(0, at).trim(), desc: item.slice(at + 2).trim() };
  });
  return { widget_type: 'todo', extra_data: { task_list_title: heading, tasks } };
}

/** On send: a widget message gets its "widget" submessage before its event is built; returns the message's submessages. */
export async function attachWidget(tx: Tx, message: Pick<Message, 'id' | 'realm_id' | 'sender_id' | 'content'>): Promise<ApiSubmessage[]> {
  const widget = widgetFor(message.content);
  if (!widget) return [];
  const row = await tx
    .insertInto('submessages')
    .values({ realm_id: message.realm_id, message_id: message.id, sender_id: message.sender_id, msg_type: 'widget', content: JSON.stringify(widget) })
    .returning(['id', 'message_id', 'sender_id', 'msg_type', 'content'])
    .executeTakeFirstOrThrow();
  return [row];
}

/** The reference's MAX_IDX: the largest option or task index clients use. */
const MAX_IDX = 1000;
const idx = z.int().min(0).max(MAX_IDX);

const POLL_DATA: Record<string, z.ZodType> = {
  vote: z.strictObject({ type: z.string(), key: z.string(), vote: z.int().refine((v) => v === 1 || v === -1, { message: 'Invalid {name}' }) }),
  question: z.strictObject({ type: z.string(), question: z.string() }),
  new_option: z.strictObject({ type: z.string(), option: z.string(), idx }),
};
const TODO_DATA: Record<string, z.ZodType> = {
  new_task: z.strictObject({ type: z.string(), key: idx, task: z.string(), desc: z.string(), completed: z.boolean() }),
  strike: z.strictObject({ type: z.string(), key: z.string() }),
  new_task_list_title: z.strictObject({ type: z.string(), title: z.string() }),
};
/** Actions only the widget's author may take. */
const AUTHOR_ONLY: Record<string, string> = {
  question: "You can't edit a question unless you are the author.",
  new_task_list_title: "You can't edit the task list title unless you are the author.",
};

/** The reference's validate_poll_data / validate_todo_data for what a user adds to a widget. */
function checkWidgetData(widgetType: string | undefined, data: unknown, isAuthor: boolean): void {
  const schemas = widgetType === 'poll' ? POLL_DATA : widgetType === 'todo' ? TODO_DATA : undefined;
  if (!schemas) return;
  const name = `${widgetType} data`;
  const { type } = validate(z.object({ type: z.string() }), data, name);
  const schema = schemas[type];
  if (!schema) throw badRequest(`Unknown type for ${name}: ${type}`);
  if (AUTHOR_ONLY[type] && !isAuthor) throw badRequest(AUTHOR_ONLY[type]);
  validate(schema, data, name);
}

async function widgetType(tx: Tx, messageId: number): Promise<string | undefined> {
  const row = await tx
    .selectFrom('submessages')
    .select('content')
    .where('message_id', '=', messageId)
    .where('msg_type', '=', 'widget')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  try {
    const type = row ? JSON.parse(row.content)?.widget_type : undefined;
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}

/** POST /submessage: on a message the user may read; the sender attaches the first one. */
export async function addSubmessage(svc: Services, realm: Realm, user: User, req: { message_id: number; msg_type: string; content: string }): Promise<void> {
  await transactAs(svc, realm, user, async ({ tx, emit }) => {
    const { message } = await messageToChange(tx, await channelViewer(tx, realm, user), req.message_id);
    if (message.sender_id !== user.id) {
      const started = await tx
        .selectFrom('submessages')
        .select('id')
        .where('message_id', '=', message.id)
        .where('sender_id', '=', message.sender_id)
        .limit(1)
        .executeTakeFirst();
      if (!started) throw badRequest('You cannot attach a submessage to this message.');
    }
    let data: unknown;
    try {
      data = JSON.parse(req.content);
    } catch {
      throw badRequest('Invalid json for submessage');
    }
    checkWidgetData(await widgetType(tx, message.id), data, message.sender_id === user.id);
    const row = await tx
      .insertInto('submessages')
      .values({ realm_id: realm.id, message_id: message.id, sender_id: user.id, msg_type: req.msg_type, content: req.content })
      .returning('id')
      .executeTakeFirstOrThrow();
    const event: SubmessageEvent = {
      type: 'submessage',
      msg_type: req.msg_type,
      message_id: message.id,
      submessage_id: row.id,
      sender_id: user.id,
      content: req.content,
    };
    // As the reference: those with a copy of the message hear of it.
    emit(realm.id, event, [...(await copyHolders(tx, [message.id]))]);
  });
}
