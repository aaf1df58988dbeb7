// A content edit: rendered before the transaction, its mentions and alert words
// checked and turned into flags, the files and link previews it brings.

import { sql } from 'kysely';
import type { Services } from '../../services.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import type { ActionContext, Tx } from '../../db/transact.ts';
import type { ChannelViewer } from '../../channels/access.ts';
import type { RenderResult } from '../../markdown/index.ts';
import { prerender } from '../../rendering/index.ts';
import { reclaimAttachments } from '../../uploads/claims.ts';
import { queueLinkPreviews } from '../../previews/queue.ts';
import { usersAlertedBy } from '../../alert_words/matching.ts';
import { mentionFlags } from '../send/send.ts';
import { FLAG_BITS, MENTION_BITS } from '../flags/flags.ts';
import { copyHolders } from '../history/changes.ts';
import { intArray } from '../state-support.ts';
import { editedContent, type Edit } from './request.ts';
import { giveCopies, idleAwaiting } from '../soft-deactivation.ts';

export type Prerendered = () => RenderResult;

/** The new content, rendered before the transaction; content that cannot be stored is refused inside, after the checks. */
export async function prerenderEdit(svc: Services, realm: Realm, actor: User, raw: string | undefined): Promise<Prerendered | undefined> {
  if (raw === undefined) return undefined;
  let content: string | undefined;
  try {
    content = editedContent(raw);
  } catch {
    return undefined;
  }
  return prerender(svc, { realm, content, author: actor, onFailure: 'error' });
}

export interface ContentChange {
  content: string;
  rendered: RenderResult;
  /** Who holds a copy of the message (or would, but for soft deactivation), and the mention flags (with has_alert_word) each gets. */
  holders: Set<number>;
  mentionBits: Map<number, number>;
  /** Long-term idle subscribers without a copy whom the new content flags: they get it now, as a send would have given it. */
  newCopies: number[];
}

/** The new content with its mentions checked (wildcards the editor may not use are refused), before anything is written. */
export async function contentChange(tx: Tx, viewer: ChannelViewer, edit: Edit, prerendered: Prerendered | undefined): Promise<ContentChange | undefined> {
  const { content, message } = edit;
  if (content === undefined) return undefined;
  const rendered = prerendered!();
  const awaiting = edit.from ? await idleAwaiting(tx, edit.from.id, message.id) : [];
  const holders = new Set([...(await copyHolders(tx, [message.id])), ...awaiting]);
  const mentionBits = await mentionFlags(tx, viewer, edit.from ?? undefined, message.topic, rendered, holders);
  for (const id of await usersAlertedBy(tx, viewer.realm.id, content, holders)) mentionBits.set(id, (mentionBits.get(id) ?? 0) | FLAG_BITS.has_alert_word);
  return { content, rendered, holders, mentionBits, newCopies: awaiting.filter((id) => mentionBits.get(id)) };
}

/** The message's columns the new content sets. */
export function contentColumns(change: ContentChange, now: Date) {
  const { rendered } = change;
  return {
    content: change.content,
    rendered_content: rendered.html,
    is_me_message: rendered.is_me_message,
    has_link: rendered.has_link,
    has_image: rendered.has_image,
    has_attachment: rendered.has_attachment,
    last_edit_at: now,
  };
}

/** The files the new content links (only the sender edits content: they are the sender's to claim), and its link previews; the files no longer linked. */
export async function claimContentLinks(ctx: ActionContext<unknown, User>, messageId: number, change: ContentChange): Promise<unknown[]> {
  const { tx, realm } = ctx;
  const detached = await reclaimAttachments(ctx, messageId, change.rendered.attachment_path_ids);
  await queueLinkPreviews(tx, realm, messageId, change.content, change.rendered);
  return detached;
}

/** Mentions the new content makes or drops: one update per resulting set of mention flags. */
export async function writeMentionFlags(tx: Tx, messageId: number, change: ContentChange): Promise<void> {
  await giveCopies(tx, messageId, change.newCopies);
  const byBits = new Map<number, number[]>();
  for (const userId of change.holders) {
    const bits = change.mentionBits.get(userId) ?? 0;
    byBits.set(bits, [...(byBits.get(bits) ?? []), userId]);
  }
  for (const [bits, userIds] of byBits) {
    await tx
      .updateTable('user_messages')
      .set({ flags: sql<number>`(flags & ${~(MENTION_BITS | FLAG_BITS.has_alert_word)}::integer) | ${bits}::integer` })
      .where('message_id', '=', messageId)
      .where('user_id', '=', sql<number>`any(${intArray(userIds)})`)
      .execute();
  }
}
