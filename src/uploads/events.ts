// The `attachment` event: to the one user it concerns, with the organization's upload total.

import type { ActionContext } from '../db/transact.ts';
import type { Realm } from '../realm/tables.ts';
import { uploadSpaceUsed, type ApiAttachment } from './queries.ts';

export interface AttachmentEvent {
  type: 'attachment';
  op: 'add' | 'update' | 'remove';
  attachment: ApiAttachment | { id: number };
  upload_space_used: number;
}

/** What notifyAttachment needs of an action's context: only the organization's id (the cleanup pass has no row). */
export type AttachmentContext = Pick<ActionContext<unknown>, 'tx' | 'emit'> & { readonly realm: Pick<Realm, 'id'> };

export async function notifyAttachment(
  ctx: AttachmentContext,
  userId: number,
  op: 'add' | 'update' | 'remove',
  attachment: ApiAttachment | { id: number },
): Promise<void> {
  const { tx, emit, realm } = ctx;
  emit(realm.id, { type: 'attachment', op, attachment, upload_space_used: await uploadSpaceUsed(tx, realm.id) }, [userId]);
}
