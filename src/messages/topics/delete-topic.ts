// POST /streams/{stream_id}/delete_topic: an administrator deletes a topic's
// messages, as the reference does: newest first, in batches that each commit,
// so that a topic too large for one request is deleted by repeating it; past
// the time budget the answer is `complete: false`.

import type { Services } from '../../services.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import type { Channel } from '../../channels/tables.ts';
import { transactAs, type Tx } from '../../db/transact.ts';
import { badRequest } from '../../http/errors.ts';
import { channelViewer, hasContentAccess } from '../../channels/access.ts';
import { getChannel } from '../../channels/queries.ts';
import { deleteMessages } from '../delete.ts';
import { requireAdmin } from '../../users/access.ts';

/** The reference's RETENTION_STREAM_MESSAGE_BATCH_SIZE. */
export const DELETE_TOPIC_BATCH = 100;
/** The reference stops starting batches after 50 seconds. */
export const DELETE_TOPIC_TIME_BUDGET_MS = 50_000;

/** The next batch of the topic's messages the user may see, newest first, locked. */
async function nextBatch(tx: Tx, user: User, channel: Channel, topic: string, size: number) {
  let q = tx
    .selectFrom('messages')
    .selectAll()
    .where('channel_id', '=', channel.id)
    .where((eb) => eb(eb.fn('lower', ['topic']), '=', topic.toLowerCase()));
  // Protected history: only the messages the user received.
  if (!channel.history_public_to_subscribers) {
    q = q.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('user_messages').select('message_id').whereRef('user_messages.message_id', '=', 'messages.id').where('user_messages.user_id', '=', user.id),
      ),
    );
  }
  return q.orderBy('id', 'desc').limit(size).forUpdate().execute();
}

export async function deleteTopic(
  svc: Services,
  realm: Realm,
  user: User,
  channelId: number,
  topic: string,
  limits = { budgetMs: DELETE_TOPIC_TIME_BUDGET_MS, batchSize: DELETE_TOPIC_BATCH },
): Promise<{ complete: boolean }> {
  requireAdmin(user);
  const viewer = await channelViewer(svc.db, realm, user);
  const channel = await getChannel(svc.db, realm.id, channelId);
  if (!channel || !hasContentAccess(viewer, channel)) throw badRequest('Invalid channel ID');
  const started = Date.now();
  for (;;) {
    const deleted = await transactAs(svc, realm, user, async (ctx) => {
      const batch = await nextBatch(ctx.tx, user, channel, topic, limits.batchSize);
      if (batch.length > 0) await deleteMessages(ctx, batch, channel);
      return batch.length;
    });
    if (deleted < limits.batchSize) return { complete: true };
    // Every request makes progress: the budget is looked at after a batch.
    if (Date.now() - started >= limits.budgetMs) return { complete: false };
  }
}
