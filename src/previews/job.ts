// The embed_links job (the reference's FetchLinksEmbedData worker): fetches each
// link's preview outside any transaction, renders the message again with them
// and, if the HTML changed and the content did not, stores it and sends the
// reference's `update_message` with `rendering_only: true` to the message's
// holders. A link that cannot be fetched just gets no preview.

import type { Services } from '../services.ts';
import type { Job } from '../jobs/tables.ts';
import type { JobKind } from '../jobs/worker.ts';
import type { UrlEmbedData } from '../markdown/types.ts';
import type { UpdateMessageEvent } from '../messages/events.ts';
import { transact } from '../db/transact.ts';
import { getUser } from '../users/queries.ts';
import { renderMarkdown } from '../rendering/index.ts';
import { flagNames } from '../messages/flags/flags.ts';
import { fetchLinkEmbedData } from './fetch.ts';
import type { EmbedLinksJob } from './queue.ts';

async function run(svc: Services, job: Job): Promise<void> {
  const { message_id, urls, content } = job.payload as EmbedLinksJob;
  const data: Record<string, UrlEmbedData | null> = {};
  for (const url of urls) data[url] = await fetchLinkEmbedData(svc, url);

  const realm = await svc.db.selectFrom('realms').selectAll().where('id', '=', job.realm_id!).executeTakeFirst();
  const message = await svc.db.selectFrom('messages').selectAll().where('realm_id', '=', job.realm_id!).where('id', '=', message_id).executeTakeFirst();
  if (!realm || !message || message.content !== content) return;
  const sender = await getUser(svc.db, realm.id, message.sender_id);
  const rendered = await renderMarkdown(svc, { realm, content, author: sender, urlEmbedData: data, onFailure: 'error' });
  if (rendered.html === message.rendered_content) return;

  await transact(svc, async (tx, emit) => {
    // Only if nobody edited the content meanwhile.
    const updated = await tx
      .updateTable('messages')
      .set({ rendered_content: rendered.html })
      .where('realm_id', '=', realm.id)
      .where('id', '=', message.id)
      .where('content', '=', content)
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) return;
    const copies = await tx
      .selectFrom('user_messages')
      .select(['user_id', 'flags'])
      .where('realm_id', '=', realm.id)
      .where('message_id', '=', message.id)
      .execute();
    if (copies.length === 0) return;
    const event: UpdateMessageEvent = {
      type: 'update_message',
      user_id: null,
      edit_timestamp: Math.floor(Date.now() / 1000),
      message_id: message.id,
      message_ids: [message.id],
      rendering_only: true,
      content,
      rendered_content: rendered.html,
      is_me_message: rendered.is_me_message,
    };
    const perUser = Object.fromEntries(copies.map((c) => [c.user_id, { flags: flagNames(c.flags) }]));
    emit(
      realm.id,
      event,
      copies.map((c) => c.user_id),
      { perUser },
    );
  });
}

export const embedLinksJob: JobKind = {
  maxAttempts: 3,
  // Each link has its own deadline; a message has at most 24 previewed links.
  leaseMs: 10 * 60_000,
  backoffMs: (attempt) => 10_000 * attempt,
  run,
};
