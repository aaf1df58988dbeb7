// GET /messages/{message_id}/history (spec endpoint 14, digest 1.14): the
// message as it was after each edit, oldest first, as the organization lets
// users see it (message_edit_history_visibility_policy).

import type { Executor } from '../../db/schema.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import { badRequest } from '../../http/errors.ts';
import { settingsOf } from '../../realm/queries.ts';
import { channelViewer } from '../../channels/access.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../../events/shape.ts';
import { highlightHtmlDifferences } from './html-diff.ts';
import { canSee } from '../access.ts';

export interface Snapshot {
  topic: string;
  content: string;
  rendered_content: string;
  timestamp: number;
  user_id: number | null;
  prev_topic?: string;
  stream?: number;
  prev_stream?: number;
  prev_content?: string;
  prev_rendered_content?: string;
  content_html_diff?: string;
}

export async function messageHistory(
  db: Executor,
  realm: Realm,
  user: User,
  messageId: number,
  opts: { allowEmptyTopicName: boolean },
): Promise<{ message_history: Snapshot[] }> {
  const policy = settingsOf(realm).message_edit_history_visibility_policy;
  if (policy === 'none') throw badRequest('Message edit history is disabled in this organization');
  const message = await db.selectFrom('messages').selectAll().where('realm_id', '=', realm.id).where('id', '=', messageId).executeTakeFirst();
  if (!message || !(await canSee(db, { realm, viewer: await channelViewer(db, realm, user) }, message))) throw badRequest('Invalid message(s)');

  const isChannel = message.channel_id !== null;
  const shownTopic = (topic: string) => (isChannel && topic === '' && !opts.allowEmptyTopicName ? EMPTY_TOPIC_DISPLAY_NAME : topic);
  // Walk back from the current state, newest edit first, undoing one edit at a time.
  let content = message.content;
  let rendered = message.rendered_content;
  let topic = message.topic;
  const newestFirst: Snapshot[] = [];
  for (const entry of [...(message.edit_history ?? [])].reverse()) {
    const snapshot: Snapshot = { topic: shownTopic(topic), content, rendered_content: rendered, timestamp: entry.timestamp, user_id: entry.user_id };
    if (entry.prev_topic !== undefined) {
      topic = entry.prev_topic;
      snapshot.prev_topic = shownTopic(topic);
    }
    if (entry.prev_content !== undefined) {
      snapshot.prev_content = entry.prev_content;
      snapshot.prev_rendered_content = entry.prev_rendered_content ?? '';
      snapshot.content_html_diff = highlightHtmlDifferences(snapshot.prev_rendered_content, rendered);
      content = entry.prev_content;
      rendered = snapshot.prev_rendered_content;
    }
    if (entry.prev_stream !== undefined) {
      snapshot.prev_stream = entry.prev_stream;
      snapshot.stream = entry.stream;
    }
    newestFirst.push(snapshot);
  }
  const original: Snapshot = {
    topic: shownTopic(topic),
    content,
    rendered_content: rendered,
    timestamp: Math.floor(message.date_sent.getTime() / 1000),
    user_id: message.sender_id,
  };
  const snapshots = [original, ...newestFirst.reverse()];
  if (policy !== 'moves') return { message_history: snapshots };
  // Moves only: the original and the moves, every one showing today's content, so that no earlier text shows.
  const now = { content: message.content, rendered_content: message.rendered_content };
  return {
    message_history: snapshots
      .filter((s, i) => i === 0 || s.prev_topic !== undefined || s.prev_stream !== undefined)
      .map(({ prev_content: _c, prev_rendered_content: _r, content_html_diff: _d, ...s }) => ({ ...s, ...now })),
  };
}
