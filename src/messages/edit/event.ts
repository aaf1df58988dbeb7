// The `update_message` event of an edit (digest 3.3) and who receives it.

import { sql } from 'kysely';
import type { User } from '../../users/tables.ts';
import type { Channel } from '../../channels/tables.ts';
import type { UpdateMessageEvent } from '../events.ts';
import type { Message } from '../tables.ts';
import type { ActionContext } from '../../db/transact.ts';
import type { RenderResult } from '../../markdown/index.ts';
import { subscriberIds } from '../../channels/queries.ts';
import { topicLinker } from '../../linkifiers/rendering.ts';
import { flagNames } from '../flags/flags.ts';
import { intArray } from '../state-support.ts';
import type { PropagateMode } from './request.ts';

export interface UpdateFacts {
  message: Message;
  changedIds: number[];
  timestamp: number;
  from: Channel | null;
  to: Channel | null;
  losing: Set<number>;
  content?: { content: string; rendered: RenderResult };
  topic?: string;
  streamMoved: boolean;
  propagateMode: PropagateMode;
}

/**
 * `update_message` (digest 3.3) to everyone who has the messages where they
 * now are: copy holders, each with their flags on the edited message, and the
 * subscribers of channels whose shared history shows them (flags `read`).
 */
export async function emitUpdate(ctx: ActionContext<unknown, User>, f: UpdateFacts): Promise<void> {
  const { tx, emit, realm } = ctx;
  const { message, from, to } = f;
  const event: UpdateMessageEvent = {
    type: 'update_message',
    user_id: ctx.actor.id,
    edit_timestamp: f.timestamp,
    message_id: message.id,
    message_ids: f.changedIds,
    rendering_only: false,
    flags: ['read'],
  };
  if (f.content) {
    Object.assign(event, {
      orig_content: message.content,
      orig_rendered_content: message.rendered_content,
      content: f.content.content,
      rendered_content: f.content.rendered.html,
      is_me_message: f.content.rendered.is_me_message,
    });
  }
  if (from && to) {
    Object.assign(event, { stream_name: from.name, stream_id: from.id });
    if (f.topic !== undefined || f.streamMoved) event.propagate_mode = f.propagateMode;
    if (f.streamMoved) Object.assign(event, { new_stream_id: to.id, orig_subject: message.topic });
    if (f.topic !== undefined) {
      Object.assign(event, { orig_subject: message.topic, subject: f.topic, topic_links: (await topicLinker(tx, realm.id))(f.topic) });
    }
  }

  const copies = await tx
    .selectFrom('user_messages')
    .select(['user_id', 'message_id', 'flags'])
    .where('message_id', '=', sql<number>`any(${intArray(f.changedIds)})`)
    .execute();
  const audience = new Set(copies.map((c) => c.user_id));
  const perUser: Record<number, { flags: string[] }> = {};
  for (const c of copies) if (c.message_id === message.id) perUser[c.user_id] = { flags: flagNames(c.flags) };
  for (const channel of new Set([from, to])) {
    if (!channel?.history_public_to_subscribers) continue;
    for (const id of (await subscriberIds(tx, [channel.id])).get(channel.id)!) if (!f.losing.has(id)) audience.add(id);
  }
  if (audience.size === 0) return;
  // Followers of all public channels see public channels' messages: their edits too, unless a move made them private.
  const publicChannel = from !== null && to !== null && !from.invite_only && !to.invite_only;
  emit(realm.id, event, audience, { perUser, publicChannel });
}
