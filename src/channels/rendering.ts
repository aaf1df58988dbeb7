// Channel and topic links in Markdown (`#**channel**`, `#**channel>topic**`,
// `#**channel>topic@id**`): the render context's `channels` and `topics`.

import { sql } from 'kysely';
import type { ReferenceResolver } from '../rendering/index.ts';
import type { TopicLatestMessage } from '../markdown/index.ts';
import { channelViewer, hasContentAccess } from './access.ts';

/**
 * The channels a text links to, by exact name and not archived (as the reference's
 * get_stream_name_info), and for topic links the topic's latest message (`/with/<id>`)
 * where the author may read the channel: a message id is not told to outsiders.
 */
export const resolveChannelLinks: ReferenceResolver = async (_svc, db, realm, refs, author) => {
  if (refs.channel_names.length === 0) return {};
  const rows = await db
    .selectFrom('channels')
    .selectAll()
    .where('realm_id', '=', realm.id)
    .where('name', 'in', refs.channel_names)
    .where('is_archived', '=', false)
    .orderBy('id')
    .execute();
  const channels = rows.map((c) => ({ id: c.id, name: c.name }));
  // Texts without an author (descriptions) are read by anyone who sees them: public channels only.
  // The server's own bots write to those who may read what they link.
  const viewer = author && !author.is_system_bot ? await channelViewer(db, realm, author) : null;
  const readable = rows.filter((c) => (viewer ? hasContentAccess(viewer, c) : author?.is_system_bot === true || !c.invite_only));
  const idByName = new Map(readable.map((c) => [c.name, c.id]));
  const wanted = refs.topics.filter((t) => idByName.has(t.channel_name));
  if (wanted.length === 0) return { channels };
  const latestRows = await db
    .selectFrom('messages')
    .select(['channel_id', sql<string>`lower(topic)`.as('topic_key'), sql<number>`max(id)`.as('latest')])
    .where('realm_id', '=', realm.id)
    .where('channel_id', 'in', [...new Set(wanted.map((t) => idByName.get(t.channel_name)!))])
    .where(sql<string>`lower(topic)`, 'in', [...new Set(wanted.map((t) => t.topic.toLowerCase()))])
    .groupBy(['channel_id', sql`lower(topic)`])
    .execute();
  const latest = new Map(latestRows.map((r) => [`${r.channel_id}\n${r.topic_key}`, Number(r.latest)]));
  const topics: TopicLatestMessage[] = [];
  for (const t of wanted) {
    const channel_id = idByName.get(t.channel_name)!;
    const id = latest.get(`${channel_id}\n${t.topic.toLowerCase()}`);
    if (id !== undefined) topics.push({ channel_id, topic: t.topic, latest_message_id: id });
  }
  return { channels, topics };
};
