// The `attachment` event: to the one user it concerns, with the organization's upload total.

import type { Emit, Tx } from '../db/transact.ts';
import { uploadSpaceUsed, type ApiAttachment } from './queries.ts';

export interface AttachmentEvent {
  type: 'attachment';
  op: 'add' | 'update' | 'remove';
  attachment: ApiAttachment | { id: number };
  upload_space_used: number;
}

export async function notifyAttachment(
  tx: Tx,
  emit: Emit,
  realmId: number,
  userId: number,
  op: 'add' | 'update' | 'remove',
  attachment: ApiAttachment | { id: number },
): Promise<void> {
  emit(realmId, { type: 'attachment', op, attachment, upload_space_used: await uploadSpaceUsed(tx, realmId) }, [userId]);
}
