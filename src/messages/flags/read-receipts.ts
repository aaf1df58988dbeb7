// GET /messages/{id}/read_receipts: who has read a message, as far as they
// share it. Never the sender; only active users whose `send_read_receipts` is
// on; nobody the caller muted or who muted the caller. Bots count like anyone.

import { sql } from 'kysely';
import type { Executor } from '../../db/schema.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import { badRequest } from '../../http/errors.ts';
import { settingsOf } from '../../realm/queries.ts';
import { channelViewer } from '../../channels/access.ts';
import { FLAG_BITS } from './flags.ts';
import { canSee, invalidMessage } from '../access.ts';

export async function readReceipts(db: Executor, realm: Realm, viewer: User, messageId: number): Promise<number[]> {
  const message = await db.selectFrom('messages').selectAll().where('realm_id', '=', realm.id).where('id', '=', messageId).executeTakeFirst();
  if (!message || !(await canSee(db, { realm, viewer: await channelViewer(db, realm, viewer) }, message))) throw invalidMessage();
  if (!settingsOf(realm).enable_read_receipts) throw badRequest('Read receipts are disabled in this organization.');
  const rows = await sql<{ user_id: number }>`
    select um.user_id from user_messages um join users u on u.id = um.user_id
    where um.message_id = ${message.id} and (um.flags & ${FLAG_BITS.read}) <> 0
      and u.is_active and um.user_id <> ${message.sender_id}
      and coalesce((u.settings ->> 'send_read_receipts')::boolean, true)
      and not exists (select 1 from muted_users m where m.user_id = um.user_id and m.muted_user_id = ${viewer.id})
      and not exists (select 1 from muted_users m where m.user_id = ${viewer.id} and m.muted_user_id = um.user_id)
    order by um.user_id`.execute(db);
  return rows.rows.map((r) => r.user_id);
}
