// DELETE /messages/{message_id} (digest section 2 "Delete message"): who may
// delete which message, and the `delete_message` event.

import { sql } from 'kysely';
import type { Hooked, Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Channel } from '../channels/tables.ts';
import type { Message } from './tables.ts';
import { transactAs, type ActionContext } from '../db/transact.ts';
import { channelViewer } from '../channels/access.ts';
import { emitChannelUpdate } from '../channels/events.ts';
import { firstMessageId, messageAudience } from './history/changes.ts';
import { intArray } from './state-support.ts';
import { messageToChange, checkCanDelete } from './access.ts';
import type { DeleteMessageEvent } from './events.ts';

export async function deleteMessage(svc: Services, realm: Realm, actor: User, messageId: number): Promise<void> {
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const viewer = await channelViewer(tx, realm, actor);
    const { message, channel } = await messageToChange(tx, viewer, messageId);
    await checkCanDelete(tx, viewer, message, channel);
    await deleteMessages(ctx, [message], channel);
  });
}

/**
 * Deletes messages of one conversation (rows that hang off a message go with it)
 * and tells everyone who had them, the deleting user (`ctx.actor`) included.
 */
export async function deleteMessages(ctx: ActionContext<Hooked>, messages: Message[], channel: Channel | null): Promise<void> {
  const { tx, emit, realm, actor } = ctx;
  const ids = messages.map((m) => m.id).sort((a, b) => a - b);
  const audience = await messageAudience(tx, ids, channel);
  if (actor) audience.add(actor.id);
  const firstBefore = channel ? await firstMessageId(tx, channel.id) : null;
  await tx
    .deleteFrom('messages')
    .where('realm_id', '=', realm.id)
    .where('id', '=', sql<number>`any(${intArray(ids)})`)
    .execute();
  // One event, with every id; the shaper splits it for clients without bulk_message_deletion.
  const event: DeleteMessageEvent = channel
    ? { type: 'delete_message', message_ids: ids, message_type: 'stream', stream_id: channel.id, topic: messages[0].topic }
    : { type: 'delete_message', message_ids: ids, message_type: 'private' };
  emit(realm.id, event, audience, { publicChannel: channel !== null && !channel.invite_only });
  if (channel && firstBefore !== null && ids.includes(firstBefore)) {
    await emitChannelUpdate(ctx, channel, 'first_message_id', await firstMessageId(tx, channel.id));
  }
}
