// Reads of uploaded files: by path or id, a user's files with the messages
// that link them, and what an organization's files weigh.

import { sql } from 'kysely';
import type { Executor } from '../db/schema.ts';
import type { Attachment } from './tables.ts';

/** The API's Attachment object (OpenAPI `Attachment`). */
export interface ApiAttachment {
  id: number;
  name: string;
  path_id: string;
  size: number;
  create_time: number;
  messages: { id: number; date_sent: number }[];
}

/** For a query over `attachments as a`: no message links the file (an orphan, or never sent). */
export const UNLINKED = sql<boolean>`not exists (select 1 from attachment_messages am where am.attachment_id = a.id)`;

export async function attachmentByPath(db: Executor, realmId: number, pathId: string): Promise<Attachment | undefined> {
  return db.selectFrom('attachments').selectAll().where('realm_id', '=', realmId).where('path_id', '=', pathId).executeTakeFirst();
}

export async function attachmentById(db: Executor, realmId: number, id: number): Promise<Attachment | undefined> {
  return db.selectFrom('attachments').selectAll().where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
}

/** The ids of the messages that link an attachment. */
export async function linkedMessageIds(db: Executor, attachmentId: number): Promise<number[]> {
  const rows = await db.selectFrom('attachment_messages').select('message_id').where('attachment_id', '=', attachmentId).orderBy('message_id').execute();
  return rows.map((r) => r.message_id);
}

/** Attachments as the API shows them, with their messages (oldest first). */
export async function formatAttachments(db: Executor, rows: Attachment[]): Promise<ApiAttachment[]> {
  const ids = rows.map((r) => r.id);
  const links = ids.length
    ? await db
        .selectFrom('attachment_messages as am')
        .innerJoin('messages as m', 'm.id', 'am.message_id')
        .select(['am.attachment_id', 'm.id', 'm.date_sent'])
        .where('am.attachment_id', 'in', ids)
        .orderBy('m.id')
        .execute()
    : [];
  return rows.map((r) => ({
    id: r.id,
    name: r.file_name,
    path_id: r.path_id,
    size: Number(r.size),
    create_time: r.create_time.getTime(),
    messages: links.filter((l) => l.attachment_id === r.id).map((l) => ({ id: l.id, date_sent: l.date_sent.getTime() })),
  }));
}

export async function formatAttachment(db: Executor, row: Attachment): Promise<ApiAttachment> {
  return (await formatAttachments(db, [row]))[0]!;
}

/** GET /attachments: the user's own files. */
export async function ownAttachments(db: Executor, realmId: number, ownerId: number): Promise<Attachment[]> {
  return db.selectFrom('attachments').selectAll().where('realm_id', '=', realmId).where('owner_id', '=', ownerId).orderBy('id').execute();
}

/** Bytes of every file the organization's users uploaded (`upload_space_used`). */
export async function uploadSpaceUsed(db: Executor, realmId: number): Promise<number> {
  const row = await db
    .selectFrom('attachments')
    .select(sql<string>`coalesce(sum(size), 0)`.as('used'))
    .where('realm_id', '=', realmId)
    .executeTakeFirstOrThrow();
  return Number(row.used);
}
