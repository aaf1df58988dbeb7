// Claiming: a message sent or edited with links to uploads that its sender may
// read links those files to the message (the reference's do_claim_attachments);
// an edit that drops a link unlinks it. Messages call in here, once per send or edit.

import type { ActionContext } from '../db/transact.ts';
import type { User } from '../users/tables.ts';
import { mayReadAttachment } from './access.ts';
import { notifyAttachment } from './events.ts';
import { attachmentByPath, formatAttachment, formatAttachments, UNLINKED, type ApiAttachment } from './queries.ts';

/**
 * Links the files at these paths the sender (the context's actor) may read; sets the
 * message's has_attachment; true when any is linked.
 */
export async function claimAttachments(ctx: ActionContext<unknown, User>, messageId: number, pathIds: readonly string[]): Promise<boolean> {
  const { tx, realm, actor: sender } = ctx;
  let claimed = false;
  for (const pathId of new Set(pathIds)) {
    const attachment = await attachmentByPath(tx, realm.id, pathId);
    // Not an upload, or one the sender may not share: left a plain link, as the reference does.
    if (!attachment || !(await mayReadAttachment(tx, realm, sender, attachment))) continue;
    await tx
      .insertInto('attachment_messages')
      .values({ realm_id: realm.id, attachment_id: attachment.id, message_id: messageId })
      .onConflict((oc) => oc.doNothing())
      .execute();
    claimed = true;
    // To the sender, as the reference does (usually the owner).
    await notifyAttachment(ctx, sender.id, 'update', await formatAttachment(tx, attachment));
  }
  await tx.updateTable('messages').set({ has_attachment: claimed }).where('id', '=', messageId).where('has_attachment', '!=', claimed).execute();
  return claimed;
}

/**
 * After an edit of a message's content: links what it links now, unlinks the
 * rest. Returns the sender's files that no message links any more (`detached_uploads`).
 */
export async function reclaimAttachments(ctx: ActionContext<unknown, User>, messageId: number, pathIds: readonly string[]): Promise<ApiAttachment[]> {
  const { tx } = ctx;
  const linked = await tx
    .selectFrom('attachment_messages as am')
    .innerJoin('attachments as a', 'a.id', 'am.attachment_id')
    .select(['a.id', 'a.path_id'])
    .where('am.message_id', '=', messageId)
    .execute();
  const wanted = new Set(pathIds);
  const dropped = linked.filter((l) => !wanted.has(l.path_id)).map((l) => l.id);
  if (dropped.length > 0) {
    await tx.deleteFrom('attachment_messages').where('message_id', '=', messageId).where('attachment_id', 'in', dropped).execute();
  }
  await claimAttachments(ctx, messageId, pathIds);
  if (dropped.length === 0) return [];
  const detached = await tx
    .selectFrom('attachments as a')
    .selectAll('a')
    .where('a.id', 'in', dropped)
    .where('a.owner_id', '=', ctx.actor.id)
    .where(UNLINKED)
    .orderBy('a.id')
    .execute();
  return formatAttachments(tx, detached);
}
