// A Slack export (users.json, channels.json, dms.json, mpims.json and a folder
// of daily JSON files per conversation) seen as an export in the reference's
// layout, so one importer serves both (the reference converts the same way).
// Channel messages go to the topic "imported from Slack"; Slack's markup becomes
// Markdown; files become links (a Slack export holds only their URLs), and
// reactions keep the emoji names this server knows. Custom emoji come from
// `emoji.json` (the answer of Slack's emoji.list: name -> image URL or
// "alias:other") with their images in `emoji/<name>.<ext>` beside it, as export
// tools save them; images are not fetched from Slack.

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROLE } from '../users/roles.ts';
import { emojiCodeForName } from '../markdown/emoji.ts';
import { MESSAGES_PER_FILE, RECIPIENT } from './export.ts';
import { ImportError, type ReferenceExport } from './import.ts';

export const SLACK_TOPIC = 'imported from Slack';
type Row = Record<string, any>;

const readJson = (dir: string, name: string, fallback: unknown = []) =>
  existsSync(join(dir, name)) ? JSON.parse(readFileSync(join(dir, name), 'utf8')) : fallback;

export function isSlackExport(dir: string): boolean {
  return existsSync(join(dir, 'users.json')) && existsSync(join(dir, 'channels.json')) && !existsSync(join(dir, 'realm.json'));
}

export function readSlackExport(dir: string, name: string): ReferenceExport {
  if (!isSlackExport(dir)) throw new ImportError(`${dir} is not a Slack export (users.json and channels.json)`);
  const slackUsers: Row[] = readJson(dir, 'users.json');
  const userId = new Map(slackUsers.map((u, i) => [String(u.id), i + 1]));
  const userName = new Map(slackUsers.map((u) => [String(u.id), fullName(u)]));
  const conversations: { folder: string; channel?: Row; members: string[] }[] = [
    ...(readJson(dir, 'channels.json') as Row[]).map((c) => ({ folder: String(c.name), channel: c, members: (c.members ?? []) as string[] })),
    ...[...(readJson(dir, 'dms.json') as Row[]), ...(readJson(dir, 'mpims.json') as Row[])].map((c) => ({
      folder: String(c.name ?? c.id),
      members: (c.members ?? []) as string[],
    })),
  ];
  const channelName = new Map(conversations.filter((c) => c.channel).map((c) => [String(c.channel!.id), c.folder]));
  const recipients: Row[] = slackUsers.map((_, i) => ({ id: i + 1, type: RECIPIENT.PERSONAL, type_id: i + 1 }));
  const streams: Row[] = [];
  const subscriptions: Row[] = [];
  const folders: { folder: string; recipient: number }[] = [];
  conversations.forEach((c, i) => {
    const recipient = slackUsers.length + i + 1;
    if (c.channel) {
      streams.push({
        id: i + 1,
        name: c.folder,
        description: String(c.channel.purpose?.value ?? ''),
        invite_only: false,
        deactivated: c.channel.is_archived === true,
        date_created: Number(c.channel.created ?? 0) || undefined,
        recipient,
      });
      recipients.push({ id: recipient, type: RECIPIENT.STREAM, type_id: i + 1 });
    } else recipients.push({ id: recipient, type: RECIPIENT.DIRECT_MESSAGE_GROUP, type_id: recipient });
    for (const m of c.members) if (userId.has(m)) subscriptions.push({ user_profile: userId.get(m), recipient, active: true });
    folders.push({ folder: c.folder, recipient });
  });

  const emoji = readSlackEmoji(dir);
  const messages: Row[] = [];
  const reactions: Row[] = [];
  for (const { folder, recipient } of folders) {
    const path = join(dir, folder);
    if (!existsSync(path)) continue;
    const isChannel = streams.some((s) => s.recipient === recipient);
    for (const day of readdirSync(path)
      .filter((f) => f.endsWith('.json'))
      .sort()) {
      for (const m of JSON.parse(readFileSync(join(path, day), 'utf8')) as Row[]) {
        const sender = userId.get(String(m.user));
        if (m.type !== 'message' || sender === undefined || (m.subtype && m.subtype !== 'thread_broadcast' && m.subtype !== 'file_share')) continue;
        const id = messages.length + 1;
        const files = ((m.files ?? []) as Row[]).map((f) => `[${f.name ?? f.title ?? 'file'}](${f.url_private ?? f.permalink ?? ''})`);
        messages.push({
          id,
          sender,
          recipient,
          subject: isChannel ? SLACK_TOPIC : '',
          content: [slackToMarkdown(String(m.text ?? ''), userName, channelName), ...files].filter((s) => s !== '').join('\n'),
          date_sent: Number(m.ts),
          sending_client: 1,
          has_attachment: files.length > 0,
        });
        for (const r of (m.reactions ?? []) as Row[]) {
          // A skin tone ("thumbsup::skin-tone-2") is not kept.
          const name = String(r.name).split('::')[0];
          const custom = emoji.byName.get(name);
          const code = custom !== undefined ? String(custom) : emojiCodeForName(name);
          if (code === undefined) continue;
          const reactionType = custom !== undefined ? 'realm_emoji' : 'unicode_emoji';
          for (const u of r.users ?? []) {
            if (userId.has(u)) reactions.push({ message: id, user_profile: userId.get(u), emoji_name: name, emoji_code: code, reaction_type: reactionType });
          }
        }
      }
    }
  }
  messages.sort((a, b) => a.date_sent - b.date_sent);
  const members = new Map<number, number[]>();
  for (const s of subscriptions) members.set(s.recipient, [...(members.get(s.recipient) ?? []), s.user_profile]);
  const userMessages = messages.flatMap((m) =>
    (members.get(m.recipient) ?? []).map((u) => ({ user_profile: u, message: m.id, flags_mask: u === m.sender ? 1 : 0 })),
  );
  return {
    realm: {
      zerver_realm: [{ name }],
      zerver_userprofile: slackUsers.map((u, i) => ({
        id: i + 1,
        email: String(u.profile?.email ?? `${u.name ?? u.id}@slack.invalid`),
        full_name: fullName(u),
        role: u.is_primary_owner || u.is_owner ? ROLE.OWNER : u.is_admin ? ROLE.ADMINISTRATOR : u.is_restricted ? ROLE.GUEST : ROLE.MEMBER,
        is_active: u.deleted !== true,
        is_bot: u.is_bot === true,
        timezone: u.tz,
      })),
      zerver_stream: streams,
      zerver_recipient: recipients,
      zerver_subscription: subscriptions,
      zerver_reaction: reactions,
      zerver_realmemoji: emoji.rows,
      zerver_client: [{ id: 1, name: 'Slack' }],
    },
    // Files of MESSAGES_PER_FILE, as an export's: the import resumes file by file.
    messageFiles: Array.from(
      { length: Math.max(1, Math.ceil(messages.length / MESSAGES_PER_FILE)) },
      (_, i) => `messages-${String(i + 1).padStart(6, '0')}.json`,
    ),
    readMessages: (file) => {
      const i = Number(/\d+/.exec(file)![0]) - 1;
      const part = messages.slice(i * MESSAGES_PER_FILE, (i + 1) * MESSAGES_PER_FILE);
      const ids = new Set(part.map((m) => m.id));
      return { zerver_message: part, zerver_usermessage: userMessages.filter((u) => ids.has(u.message)) };
    },
    emojiRecords: emoji.records,
    readEmoji: (path) => readFileSync(path),
    // A Slack export holds only its files' URLs: they stay links.
    attachments: [],
    uploadRecords: [],
    readUpload: () => {
      throw new ImportError('a Slack export holds no files');
    },
  };
}

const IMAGE_EXTENSIONS = ['png', 'gif', 'jpg', 'jpeg', 'webp'];
/** The names this server gives custom emoji. */
const EMOJI_NAME = /^[a-z0-9_-]+$/;

/** Custom emoji of a Slack export as the reference's zerver_realmemoji rows and emoji records (paths on disk). */
function readSlackEmoji(dir: string): { rows: Row[]; records: Row[]; byName: Map<string, number> } {
  const listed = readJson(dir, 'emoji.json', {}) as Row;
  const entries = Object.entries((listed.emoji ?? listed) as Record<string, unknown>).filter(
    ([name, value]) => EMOJI_NAME.test(name) && typeof value === 'string',
  ) as [string, string][];
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const rows: Row[] = [];
  const records: Row[] = [];
  const byName = new Map<string, number>();
  const fileOf = new Map<string, string>();
  for (const [name, value] of entries) {
    if (value.startsWith('alias:')) continue;
    const ext = IMAGE_EXTENSIONS.find((e) => existsSync(join(dir, 'emoji', `${name}.${e}`)));
    if (ext === undefined) continue;
    const id = rows.length + 1;
    const fileName = `slack-${id}.${ext}`;
    rows.push({ id, name, file_name: fileName, deactivated: false });
    records.push({ file_name: fileName, path: join(dir, 'emoji', `${name}.${ext}`) });
    byName.set(name, id);
    fileOf.set(name, fileName);
  }
  // An alias of a custom emoji is another name for the same image.
  for (const [name, value] of entries) {
    const target = value.startsWith('alias:') ? fileOf.get(value.slice('alias:'.length)) : undefined;
    if (target === undefined || byName.has(name)) continue;
    const id = rows.length + 1;
    rows.push({ id, name, file_name: target, deactivated: false });
    byName.set(name, id);
  }
  return { rows, records, byName };
}

function fullName(u: Row): string {
  return String(u.real_name || u.profile?.real_name || u.name || u.id);
}

/** Slack's mrkdwn: <@U1> mentions, <#C1|name> channels, <url|label> links, *bold*, _italic_, ~strike~. */
export function slackToMarkdown(text: string, users: Map<string, string>, channels: Map<string, string>): string {
  return text
    .replace(/<@([A-Z0-9]+)(?:\|[^>]*)?>/g, (all, id: string) => (users.has(id) ? `@**${users.get(id)}**` : all))
    .replace(/<#([A-Z0-9]+)(?:\|([^>]*))?>/g, (_all, id: string, label?: string) => `#**${channels.get(id) ?? label ?? id}**`)
    .replace(/<(https?:[^|>]+)\|([^>]+)>/g, '[$2]($1)')
    .replace(/<(https?:[^>]+)>/g, '$1')
    .replace(/<!(here|channel|everyone)>/g, '@**$1**')
    .replace(/(^|\s)\*([^*\n]+)\*(?=\s|$|[.,!?])/g, '$1**$2**')
    .replace(/(^|\s)_([^_\n]+)_(?=\s|$|[.,!?])/g, '$1*$2*')
    .replace(/(^|\s)~([^~\n]+)~(?=\s|$|[.,!?])/g, '$1~~$2~~')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
