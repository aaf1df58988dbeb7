// `manage import --subdomain S PATH`: a new organization from an export in the
// reference's layout (a directory or a .tar.gz; see export.ts), or from a Slack
// export converted to that layout first (slack.ts). Users, channels,
// subscriptions, messages (with their flags), message files, custom emoji and
// reactions.
//
// Long imports resume: the work goes in steps (organization; people, channels
// and emoji; each messages file; message files; reactions), each step one transaction, and
// the ids mapped so far are written to a state file after each commit. Run the
// same command again after an interruption and it goes on from the next step.

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tar from 'tar';
import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { transact, type Tx } from '../db/transact.ts';
import { createRealm } from '../realm/actions.ts';
import { insertUser } from '../users/actions.ts';
import { ROLE, type Role } from '../users/roles.ts';
import { insertChannel } from '../channels/create.ts';
import { channelViewer } from '../channels/access.ts';
import { recountSubscribers } from '../channels/subscriber-counts.ts';
import { channelRecipientId, dmRecipientId } from '../messages/send/recipients.ts';
import { FLAG_BITS } from '../messages/flags/flags.ts';
import { fileKey, newPathId, storeThumbnails } from '../uploads/actions.ts';
import type { ImageFacts } from '../uploads/images.ts';
import { sql } from 'kysely';
import { emojiKey } from '../custom_emoji/format.ts';
import { prerenderHtml, renderHtml } from '../rendering/index.ts';
import type { Progress } from '../backup/progress.ts';
import { RECIPIENT, REFERENCE_FLAGS } from './export.ts';

/** What the operator gave that cannot be imported, said plainly. */
export class ImportError extends Error {}

type Row = Record<string, any>;

/** An export in the reference's layout, wherever it came from. */
export interface ReferenceExport {
  realm: Record<string, Row[]>;
  /** Names of the message files, in order. */
  messageFiles: string[];
  readMessages(name: string): { zerver_message: Row[]; zerver_usermessage: Row[] };
  emojiRecords: Row[];
  readEmoji(path: string): Buffer | Promise<Buffer>;
  /** attachment.json's zerver_attachment (each with its `messages`), and uploads/records.json. */
  attachments: Row[];
  uploadRecords: Row[];
  readUpload(path: string): Buffer;
}

interface State {
  realmId: number;
  /** The organization's owner, made with it: channels are created as them. */
  ownerId: number;
  step: 'people' | 'messages' | 'files' | 'reactions' | 'done';
  users: Record<string, number>;
  channels: Record<string, number>;
  emoji: Record<string, number>;
  messages: Record<string, number>;
  filesDone: string[];
  /** The export's message files' path ids -> ours, once their bytes are stored. */
  uploads?: Record<string, string>;
  /** The export's emoji file names -> ours (`<n>-<16 hex>.<ext>`, the form custom_emoji/serve.ts serves). */
  emojiFiles?: Record<string, string>;
}

/** Reads a reference export from a directory. */
export function readExportDir(dir: string): ReferenceExport {
  if (!existsSync(join(dir, 'realm.json'))) throw new ImportError(`no realm.json in ${dir}: not an export in the reference's format`);
  const emojiRecords = existsSync(join(dir, 'emoji', 'records.json')) ? JSON.parse(readFileSync(join(dir, 'emoji', 'records.json'), 'utf8')) : [];
  return {
    realm: JSON.parse(readFileSync(join(dir, 'realm.json'), 'utf8')),
    messageFiles: readdirSync(dir)
      .filter((f) => /^messages-\d+\.json$/.test(f))
      .sort(),
    readMessages: (name) => JSON.parse(readFileSync(join(dir, name), 'utf8')),
    emojiRecords,
    readEmoji: (path) => readFileSync(join(dir, 'emoji', path)),
    attachments: existsSync(join(dir, 'attachment.json')) ? (JSON.parse(readFileSync(join(dir, 'attachment.json'), 'utf8')).zerver_attachment ?? []) : [],
    uploadRecords: existsSync(join(dir, 'uploads', 'records.json')) ? JSON.parse(readFileSync(join(dir, 'uploads', 'records.json'), 'utf8')) : [],
    readUpload: (path) => readFileSync(join(dir, 'uploads', path)),
  };
}

/** Unpacks a .tar.gz export (once: a resumed import reuses it); returns its directory. */
export async function unpackExport(file: string, workDir: string): Promise<string> {
  const unpacked = join(workDir, 'unpacked');
  if (!existsSync(unpacked)) {
    const partial = `${unpacked}.partial`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    await tar.x({ file, cwd: partial, strict: true }).catch((err: Error) => {
      throw new ImportError(`${file} is not a readable export (${err.message})`);
    });
    renameSync(partial, unpacked);
  }
  const inner = readdirSync(unpacked);
  if (existsSync(join(unpacked, 'realm.json'))) return unpacked;
  if (inner.length === 1 && statSync(join(unpacked, inner[0])).isDirectory()) return join(unpacked, inner[0]);
  throw new ImportError('the archive holds no realm.json');
}

/** Imports into a new organization at `subdomain`; `stateFile` makes it resumable. */
export async function importRealm(svc: Services, data: ReferenceExport, subdomain: string, stateFile: string, progress: Progress): Promise<Realm> {
  let state: State | undefined = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : undefined;
  const save = (s: State) => {
    writeFileSync(`${stateFile}.tmp`, JSON.stringify(s));
    renameSync(`${stateFile}.tmp`, stateFile);
  };
  if (!state) {
    state = await createOrganization(svc, data, subdomain);
    save(state);
  }
  const realm = await svc.db.selectFrom('realms').selectAll().where('id', '=', state.realmId).executeTakeFirstOrThrow();
  if (state.step === 'people') {
    await storeEmojiFiles(svc, realm, data, state);
    save(state);
    // Channel descriptions render before the transaction, as every action's do.
    const html = await prerenderHtml(
      svc,
      realm,
      (data.realm.zerver_stream ?? []).map((s) => String(s.description ?? '')),
    );
    await transact(svc, (tx) => importPeople(svc, tx, realm, data, state!, html));
    state.step = 'messages';
    save(state);
  }
  if (state.step === 'messages') {
    progress.stage('messages', data.messageFiles.length, 'files');
    progress.advance(state.filesDone.length);
    for (const name of data.messageFiles) {
      if (state.filesDone.includes(name)) continue;
      const file = data.readMessages(name);
      const rendered = await renderMissing(svc, realm, file.zerver_message);
      const mapped = await transact(svc, (tx) => importMessages(tx, realm, data, state!, file, rendered));
      Object.assign(state.messages, mapped);
      state.filesDone.push(name);
      save(state);
      progress.advance(1);
    }
    state.step = 'files';
    save(state);
  }
  if (state.step === 'files') {
    // Bytes (and thumbnails) first, outside any transaction; then rows, links and rewritten messages in one.
    const files = await storeUploads(svc, realm, data, state);
    save(state);
    await transact(svc, (tx) => importAttachments(tx, realm, state!, files));
    state.step = 'reactions';
    save(state);
  }
  if (state.step === 'reactions') {
    await transact(svc, (tx) => importReactions(tx, realm, data, state!));
    state.step = 'done';
    save(state);
  }
  progress.done();
  return realm;
}

/** The organization and its owner (the export's first owner), through the same action as create-org. */
async function createOrganization(svc: Services, data: ReferenceExport, subdomain: string): Promise<State> {
  const source = data.realm.zerver_realm?.[0];
  const users = data.realm.zerver_userprofile ?? [];
  if (!source || users.length === 0) throw new ImportError('the export has no organization or no users');
  const owner = users.find((u) => u.role === ROLE.OWNER && u.is_active !== false) ?? users[0];
  const { realm, owner: created } = await createRealm(svc, {
    subdomain,
    name: String(source.name ?? subdomain),
    owner: { email: emailOf(owner), fullName: String(owner.full_name), password: null },
  });
  const settings = Object.fromEntries(
    ['description', 'message_retention_days', 'message_content_edit_limit_seconds'].filter((k) => source[k] !== undefined).map((k) => [k, source[k]]),
  );
  const { description, ...rest } = settings;
  await svc.db
    .updateTable('realms')
    .set({ description: typeof description === 'string' ? description : '', settings: JSON.stringify({ ...realm.settings, ...rest }) })
    .where('id', '=', realm.id)
    .execute();
  return { realmId: realm.id, ownerId: created.id, step: 'people', users: { [owner.id]: created.id }, channels: {}, emoji: {}, messages: {}, filesDone: [] };
}

const emailOf = (u: Row) => String(u.delivery_email || u.email);

async function importPeople(svc: Services, tx: Tx, realm: Realm, data: ReferenceExport, state: State, html: (text: string) => string): Promise<void> {
  const roles = new Set<number>(Object.values(ROLE));
  for (const u of data.realm.zerver_userprofile ?? []) {
    if (state.users[u.id] === undefined) {
      const user = await insertUser(tx, svc, realm, {
        email: emailOf(u),
        fullName: String(u.full_name),
        passwordHash: null,
        role: (roles.has(u.role) ? u.role : ROLE.MEMBER) as Role,
        isBot: u.is_bot === true,
        botType: u.is_bot ? (u.bot_type ?? 1) : null,
        timezone: typeof u.timezone === 'string' ? u.timezone : undefined,
      });
      state.users[u.id] = user.id;
    }
    const changes: Partial<Pick<User, 'is_active' | 'date_joined'>> = { is_active: u.is_active !== false };
    if (typeof u.date_joined === 'number') changes.date_joined = new Date(u.date_joined * 1000);
    await tx.updateTable('users').set(changes).where('id', '=', state.users[u.id]).execute();
  }
  // The reference's cross-realm bots are our organization's system bots, matched by address.
  const bots = await tx.selectFrom('users').select(['id', 'email']).where('realm_id', '=', realm.id).where('is_system_bot', '=', true).execute();
  for (const b of data.realm.zerver_userprofile_crossrealm ?? []) {
    const local = String(b.email).split('@')[0].replace(/_/g, '-');
    const match = bots.find((x) => x.email.split('@')[0] === local) ?? bots[0];
    if (match) state.users[b.id] = match.id;
  }
  const owner = (await tx.selectFrom('users').selectAll().where('id', '=', state.ownerId).executeTakeFirstOrThrow()) as User;
  const viewer = await channelViewer(tx, realm, owner);
  for (const s of data.realm.zerver_stream ?? []) {
    const channel = await insertChannel(html, tx, viewer, String(s.name), String(s.description ?? ''), {
      invite_only: s.invite_only === true,
      history_public_to_subscribers: s.history_public_to_subscribers ?? null,
      message_retention_days: s.message_retention_days ?? null,
    });
    await tx
      .updateTable('channels')
      .set({ is_archived: s.deactivated === true, date_created: typeof s.date_created === 'number' ? new Date(s.date_created * 1000) : channel.date_created })
      .where('id', '=', channel.id)
      .execute();
    state.channels[s.id] = channel.id;
  }
  const channelOfRecipient = recipientChannels(data);
  for (const sub of data.realm.zerver_subscription ?? []) {
    const channelId = state.channels[channelOfRecipient.get(sub.recipient) ?? -1];
    const userId = state.users[sub.user_profile];
    if (channelId === undefined || userId === undefined) continue;
    await tx
      .insertInto('subscriptions')
      .values({
        realm_id: realm.id,
        user_id: userId,
        channel_id: channelId,
        active: sub.active !== false,
        color: sub.color ?? '#c2c2c2',
        is_muted: sub.is_muted === true,
        pin_to_top: sub.pin_to_top === true,
        desktop_notifications: null,
        audible_notifications: null,
        push_notifications: null,
        email_notifications: null,
        wildcard_mentions_notify: null,
      })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  // Subscriptions and users' activity came as rows, not through the actions that count them.
  await recountSubscribers(tx, realm.id);
  const files = emojiFiles(data);
  for (const e of data.realm.zerver_realmemoji ?? []) {
    const fileName = state.emojiFiles?.[e.file_name];
    if (fileName === undefined) continue;
    const still = typeof e.still_file_name === 'string' && files.has(e.still_file_name) ? `still/${fileName}` : null;
    const row = await tx
      .insertInto('realm_emoji')
      .values({
        realm_id: realm.id,
        name: e.name,
        author_id: state.users[e.author] ?? null,
        file_name: fileName,
        still_file_name: still,
        deactivated: e.deactivated === true,
        date_created: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    state.emoji[e.id] = row.id;
  }
}

interface StoredUpload {
  old: Row;
  pathId: string;
  facts: ImageFacts | null;
}

/** Stores each message file the export holds under a new path id of this organization (kept in the state). */
async function storeUploads(svc: Services, realm: Realm, data: ReferenceExport, state: State): Promise<StoredUpload[]> {
  const records = new Map(data.uploadRecords.map((r) => [String(r.path), r]));
  const names = (state.uploads ??= {});
  const stored: StoredUpload[] = [];
  for (const a of data.attachments) {
    const oldPath = String(a.path_id ?? '');
    const record = records.get(oldPath);
    if (!record || oldPath.split('/').includes('..') || state.users[a.owner] === undefined) continue;
    const bytes = data.readUpload(oldPath);
    const pathId = (names[oldPath] ??= newPathId(realm.id, String(a.file_name ?? 'uploaded-file')));
    const contentType = String(a.content_type ?? record.content_type ?? 'application/octet-stream');
    const { facts } = await storeThumbnails(svc, pathId, bytes, contentType);
    await svc.storage.put(fileKey(pathId), bytes);
    stored.push({ old: { ...a, content_type: contentType, size: bytes.length }, pathId, facts });
  }
  return stored;
}

/** The attachment rows, their links to the imported messages, and the messages' links rewritten to the new paths. */
async function importAttachments(tx: Tx, realm: Realm, state: State, files: StoredUpload[]): Promise<void> {
  for (const { old, pathId, facts } of files) {
    const row = await tx
      .insertInto('attachments')
      .values({
        realm_id: realm.id,
        owner_id: state.users[old.owner],
        path_id: pathId,
        file_name: String(old.file_name ?? 'uploaded-file'),
        size: old.size,
        content_type: old.content_type,
        create_time: typeof old.create_time === 'number' ? new Date(old.create_time * 1000) : new Date(),
        original_width_px: facts?.width ?? null,
        original_height_px: facts?.height ?? null,
        frames: facts?.frames ?? null,
        thumbnailed: facts !== null,
      })
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!row) continue;
    for (const oldMessage of (old.messages ?? []) as number[]) {
      const messageId = state.messages[oldMessage];
      if (messageId === undefined) continue;
      await tx
        .insertInto('attachment_messages')
        .values({ realm_id: realm.id, attachment_id: row.id, message_id: messageId })
        .onConflict((oc) => oc.doNothing())
        .execute();
      // The message's links (and thumbnails) point at the file's new place.
      const from = String(old.path_id);
      await tx
        .updateTable('messages')
        .set({ content: sql`replace(content, ${from}, ${pathId})`, rendered_content: sql`replace(rendered_content, ${from}, ${pathId})`, has_attachment: true })
        .where('realm_id', '=', realm.id)
        .where('id', '=', messageId)
        .execute();
    }
  }
}

/** The emoji files the export holds: file name -> path in the export (never above it). */
function emojiFiles(data: ReferenceExport): Map<string, string> {
  const files = new Map<string, string>();
  for (const r of data.emojiRecords) {
    const path = String(r.path ?? '');
    if (path.split(/[\\/]/).includes('..')) throw new ImportError(`the export names an emoji file outside itself: '${path}'`);
    files.set(String(r.file_name ?? ''), path);
  }
  return files;
}

const EMOJI_EXTENSIONS: Record<string, string> = { png: 'png', gif: 'gif', jpg: 'jpg', jpeg: 'jpg', webp: 'webp' };

/**
 * Stores each emoji image (and its still) under a name of ours, before the
 * transaction that inserts the rows (storage is slow work). The names go into
 * the state, so a resumed import writes the same files again, harmlessly.
 */
async function storeEmojiFiles(svc: Services, realm: Realm, data: ReferenceExport, state: State): Promise<void> {
  const files = emojiFiles(data);
  const names = (state.emojiFiles ??= {});
  for (const e of data.realm.zerver_realmemoji ?? []) {
    const path = files.get(e.file_name);
    const ext = EMOJI_EXTENSIONS[String(e.file_name).split('.').pop()!.toLowerCase()];
    if (path === undefined || ext === undefined) continue;
    const name = (names[e.file_name] ??= `${Object.keys(names).length + 1}-${randomBytes(8).toString('hex')}.${ext}`);
    await svc.storage.put(emojiKey(realm.id, name), await data.readEmoji(path));
    const still = typeof e.still_file_name === 'string' ? files.get(e.still_file_name) : undefined;
    if (still !== undefined) await svc.storage.put(emojiKey(realm.id, `still/${name}`), await data.readEmoji(still));
  }
}

function recipientChannels(data: ReferenceExport): Map<number, number> {
  return new Map((data.realm.zerver_recipient ?? []).filter((r) => r.type === RECIPIENT.STREAM).map((r) => [r.id, r.type_id]));
}

/** Who is in each direct-message recipient: its own user, or the group's subscribers. */
function recipientMembers(data: ReferenceExport): Map<number, number[]> {
  const members = new Map<number, number[]>();
  for (const r of data.realm.zerver_recipient ?? []) if (r.type === RECIPIENT.PERSONAL) members.set(r.id, [r.type_id]);
  for (const s of data.realm.zerver_subscription ?? []) {
    const r = (data.realm.zerver_recipient ?? []).find((x) => x.id === s.recipient);
    if (r?.type === RECIPIENT.DIRECT_MESSAGE_GROUP) members.set(r.id, [...(members.get(r.id) ?? []), s.user_profile]);
  }
  return members;
}

/** Renders (outside any transaction) what the export left unrendered, e.g. Slack's. */
async function renderMissing(svc: Services, realm: Realm, messages: Row[]): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const m of messages) if (typeof m.rendered_content !== 'string') out.set(m.id, await renderHtml(svc, realm, String(m.content)));
  return out;
}

async function importMessages(
  tx: Tx,
  realm: Realm,
  data: ReferenceExport,
  state: State,
  file: ReturnType<ReferenceExport['readMessages']>,
  rendered: Map<number, string>,
): Promise<Record<string, number>> {
  const channels = recipientChannels(data);
  const members = recipientMembers(data);
  const clients = new Map((data.realm.zerver_client ?? []).map((c) => [c.id, String(c.name)]));
  const mapped: Record<string, number> = {};
  for (const m of file.zerver_message) {
    const sender = state.users[m.sender];
    if (sender === undefined) continue;
    const oldChannel = channels.get(m.recipient);
    const channelId = oldChannel === undefined ? null : state.channels[oldChannel];
    let recipientId: number;
    if (channelId !== null && channelId !== undefined) recipientId = await channelRecipientId(tx, realm.id, channelId);
    else {
      const users = [m.sender, ...(members.get(m.recipient) ?? [])].map((u) => state.users[u]).filter((u) => u !== undefined);
      recipientId = await dmRecipientId(tx, realm.id, users);
    }
    const row = await tx
      .insertInto('messages')
      .values({
        realm_id: realm.id,
        sender_id: sender,
        recipient_id: recipientId,
        channel_id: channelId ?? null,
        topic: String(m.subject ?? ''),
        content: String(m.content),
        rendered_content: rendered.get(m.id) ?? String(m.rendered_content),
        date_sent: new Date(Number(m.date_sent) * 1000),
        client: clients.get(m.sending_client) ?? 'Import',
        has_link: m.has_link === true,
        has_image: m.has_image === true,
        has_attachment: m.has_attachment === true,
        last_edit_at: typeof m.last_edit_time === 'number' ? new Date(m.last_edit_time * 1000) : null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    mapped[m.id] = row.id;
  }
  const rows = file.zerver_usermessage
    .map((um) => ({ realm_id: realm.id, user_id: state.users[um.user_profile], message_id: mapped[um.message], flags: ourFlags(Number(um.flags_mask ?? 0)) }))
    .filter((r) => r.user_id !== undefined && r.message_id !== undefined);
  for (let i = 0; i < rows.length; i += 1000) {
    await tx
      .insertInto('user_messages')
      .values(rows.slice(i, i + 1000))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  return mapped;
}

/** The reference's flags_mask -> our bits, by name. */
export function ourFlags(mask: number): number {
  let bits = 0;
  REFERENCE_FLAGS.forEach((name, i) => {
    const ours = (FLAG_BITS as Record<string, number>)[name];
    if (ours !== undefined && mask & (1 << i)) bits |= ours;
  });
  return bits;
}

async function importReactions(tx: Tx, realm: Realm, data: ReferenceExport, state: State): Promise<void> {
  for (const r of data.realm.zerver_reaction ?? []) {
    const messageId = state.messages[r.message];
    const userId = state.users[r.user_profile];
    if (messageId === undefined || userId === undefined) continue;
    // A custom emoji's code is its id, which changed.
    const code = r.reaction_type === 'realm_emoji' ? String(state.emoji[r.emoji_code] ?? r.emoji_code) : String(r.emoji_code);
    await tx
      .insertInto('reactions')
      .values({
        realm_id: realm.id,
        message_id: messageId,
        user_id: userId,
        emoji_name: String(r.emoji_name),
        emoji_code: code,
        reaction_type: String(r.reaction_type),
      })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}
