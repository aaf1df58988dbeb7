// What Notification Bot says when a reminder fires: the reference's wording,
// naming who said what where, with the message quoted (polls and to-do lists
// are named rather than quoted).

import type { Executor } from '../db/schema.ts';
import type { Config } from '../config.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Message } from '../messages/tables.ts';
import { realmUrl } from '../realm/queries.ts';
import { getChannel } from '../channels/queries.ts';
import { listUsers } from '../users/queries.ts';
import { TEXT_BOUNDS } from '../realm/state.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../events/shape.ts';
import { namedMessageLink, messagePath, silentMention, unusedFence } from '../notification_bot/index.ts';

const TRUNCATED = '\n[message truncated]';

/** Names in a sentence: "A", "A and B", "A, B, and C". */
function listed(names: string[]): string {
  if (names.length <= 2) return names.join(' and ');
  return `${names.slice(0, -1).join(', ')}, and ${names[names.length - 1]}`;
}

function widgetOf(content: string): string | undefined {
  if (content.startsWith('/poll')) return 'poll';
  if (content.startsWith('/todo')) return 'todo list';
  return undefined;
}

/** The message quoted in a fence it cannot close, cut so that the whole stays within the length limit. */
function quoted(head: string, content: string): string {
  const fence = unusedFence(content);
  const wrapper = (body: string) => `${fence}quote\n${body}\n${fence}`;
  const room = TEXT_BOUNDS.max_message_length - [...head].length - [...wrapper('')].length;
  const chars = [...content];
  const body = chars.length > room ? chars.slice(0, room - TRUNCATED.length).join('') + TRUNCATED : content;
  return head + wrapper(body);
}

export async function reminderContent(db: Executor, config: Pick<Config, 'externalUrl'>, realm: Realm, message: Message, note: string | null): Promise<string> {
  const author = (await listUsers(db, realm.id, [message.sender_id]))[0];
  const base = realmUrl(realm, config);
  const noted = note ? ` Note:\n > ${note}` : '';
  const widget = widgetOf(message.content);
  let intro: string;
  let said: string;
  if (message.channel_id !== null) {
    const channel = (await getChannel(db, realm.id, message.channel_id))!;
    const where = namedMessageLink(channel, message.topic, message.id, EMPTY_TOPIC_DISPLAY_NAME);
    const url = `${base}/${messagePath(channel, message.topic, message.id)}`;
    intro = `You requested a reminder for the following message.${noted}`;
    said = widget ? `${silentMention(author)} [sent](${url}) a ${widget} in ${where}.` : `${silentMention(author)} [said](${url}) in ${where}:`;
  } else {
    const recipient = await db.selectFrom('recipients').select('dm_user_ids').where('id', '=', message.recipient_id).executeTakeFirstOrThrow();
    const ids = recipient.dm_user_ids ?? [];
    const url = `${base}/#narrow/dm/${ids.join(',')}/near/${message.id}`;
    intro = `You requested a reminder for the following direct message.${noted}`;
    const others = await listUsers(
      db,
      realm.id,
      ids.filter((id) => id !== author.id),
    );
    if (others.length === 0) {
      said = widget ? `You [sent](${url}) yourself a ${widget}.` : `You [sent](${url}) a note to yourself:`;
    } else {
      const to = listed(ids.flatMap((id) => others.filter((u) => u.id === id)).map((u: User) => silentMention(u)));
      said = widget ? `${silentMention(author)} [sent](${url}) a ${widget} to ${to}.` : `${silentMention(author)} [said](${url}) to ${to}:`;
    }
  }
  const head = `${intro}\n\n${said}`;
  return widget ? head : quoted(`${head}\n`, message.content);
}
