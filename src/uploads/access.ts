// Who may read an uploaded file: its owner, and whoever may read a message
// that links it (the messages' own access check, reused).

import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { channelViewer } from '../channels/access.ts';
import type { Attachment } from './tables.ts';
import { canSee } from '../messages/access.ts';

export async function mayReadAttachment(db: Executor, realm: Realm, user: User, attachment: Attachment): Promise<boolean> {
  if (attachment.owner_id === user.id) return true;
  const messages = await db
    .selectFrom('attachment_messages as am')
    .innerJoin('messages as m', 'm.id', 'am.message_id')
    .selectAll('m')
    .where('am.attachment_id', '=', attachment.id)
    .orderBy('m.id', 'desc')
    .execute();
  if (messages.length === 0) return false;
  const searcher = { realm, viewer: await channelViewer(db, realm, user) };
  for (const message of messages) if (await canSee(db, searcher, message)) return true;
  return false;
}
