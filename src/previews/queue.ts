// After a send or a content edit: the links whose previews must be fetched
// become one job (the reference's embed_links queue), inserted in the same
// transaction, so it exists exactly when the message (or its new content) does.

import type { Tx } from '../db/transact.ts';
import type { Realm } from '../realm/tables.ts';
import type { RenderResult } from '../markdown/types.ts';
import { enqueueJob } from '../jobs/worker.ts';

export const EMBED_LINKS_JOB = 'embed_links';

export interface EmbedLinksJob extends Record<string, unknown> {
  message_id: number;
  urls: string[];
  /** The content the links came from: a later edit makes this job moot. */
  content: string;
}

export async function queueLinkPreviews(tx: Tx, realm: Realm, messageId: number, content: string, rendered: RenderResult): Promise<void> {
  if (rendered.links_for_preview.length === 0) return;
  const payload: EmbedLinksJob = { message_id: messageId, urls: rendered.links_for_preview, content };
  await enqueueJob(tx, { realmId: realm.id, kind: EMBED_LINKS_JOB, payload });
}
