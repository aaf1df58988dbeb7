// `manage export --org S FILE`: one organization in the reference's export
// layout (zerver/lib/export.py), as a gzipped tar of one directory:
//
//   realm.json             zerver_realm, zerver_userprofile (+ _crossrealm for the system
//                          bots), zerver_stream, zerver_recipient, zerver_huddle,
//                          zerver_subscription, zerver_realmemoji, zerver_reaction, zerver_client
//   messages-000001.json   zerver_message + zerver_usermessage, MESSAGES_PER_FILE a file
//   emoji/records.json     one record per emoji file, the files beside it under emoji/
//   uploads/records.json   one record per message file, the files beside it at uploads/<path_id>
//   attachment.json        zerver_attachment (with its messages) and zerver_attachment_messages
//   avatars/records.json   (avatars are not exported yet)
//
// Ids are ours. Recipients follow the reference's types: 1 a user's own (ids after
// ours, one per user), 2 a channel, 3 a direct-message group (every conversation,
// as since feature level 327).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import * as tar from 'tar';
import { sql } from 'kysely';
import type { Services } from '../services.ts';
import type { Db } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import { settingsOf } from '../realm/queries.ts';
import { FLAG_BITS } from '../messages/flags/flags.ts';
import { intArray } from '../db/ids.ts';
import { userSettings } from '../users/settings.ts';
import { emojiKey } from '../custom_emoji/format.ts';
import { fileKey } from '../uploads/actions.ts';
import type { Progress } from '../backup/progress.ts';
import { catchUpRealm } from '../messages/soft-deactivation.ts';

export const MESSAGES_PER_FILE = 1000;
export const RECIPIENT = { PERSONAL: 1, STREAM: 2, DIRECT_MESSAGE_GROUP: 3 } as const;
/** The reference's UserMessage flag order: bit i is flag i. */
export const REFERENCE_FLAGS = [
  'read',
  'starred',
  'collapsed',
  'mentioned',
  'stream_wildcard_mentioned',
  'topic_wildcard_mentioned',
  'group_mentioned',
  'force_expand',
  'force_collapse',
  'has_alert_word',
  'historical',
  'is_private',
  'active_mobile_push_notification',
] as const;

const epoch = (d: Date | null) => (d === null ? null : d.getTime() / 1000);

/** Our flag bits -> the reference's flags_mask (is_private from the conversation). */
export function referenceFlags(bits: number, isPrivate: boolean): number {
  let mask = 0;
  REFERENCE_FLAGS.forEach((name, i) => {
    const ours = (FLAG_BITS as Record<string, number>)[name];
    if ((ours !== undefined && bits & ours) || (name === 'is_private' && isPrivate)) mask |= 1 << i;
  });
  return mask;
}

/**
 * What an export holds. `full`: everything (the manage command). `public`
 * (the reference's public data export): public channels only, no direct
 * messages. `consent` (the API's standard export, the reference's "full with
 * consent"): public channels, plus the private channels and direct messages
 * of users who allow it (`allow_private_data_export`); personal message data
 * (flags) of those users only.
 */
export type ExportKind = 'full' | 'public' | 'consent';

/** Who consented to their private data being exported: active people with `allow_private_data_export`. */
export async function consentingUserIds(db: Db, realmId: number): Promise<number[]> {
  const people = await db
    .selectFrom('users')
    .select(['id', 'settings', 'timezone'])
    .where('realm_id', '=', realmId)
    .where('is_active', '=', true)
    .where('is_bot', '=', false)
    .execute();
  return people.filter((u) => userSettings(u).allow_private_data_export === true).map((u) => u.id);
}

interface Scope {
  /** Channels whose messages are exported (null: all). */
  channels: number[] | null;
  /** Direct-message recipients whose messages are exported (null: all). */
  directRecipients: number[] | null;
  /** Users whose user_messages (flags) are exported (null: all). */
  flagsOf: Set<number> | null;
}

async function scopeOf(db: Db, realm: Realm, kind: ExportKind): Promise<Scope> {
  if (kind === 'full') return { channels: null, directRecipients: null, flagsOf: null };
  const publicChannels = (await db.selectFrom('channels').select('id').where('realm_id', '=', realm.id).where('invite_only', '=', false).execute()).map(
    (c) => c.id,
  );
  if (kind === 'public') return { channels: publicChannels, directRecipients: [], flagsOf: null };
  const consenting = await consentingUserIds(db, realm.id);
  const ids = consenting.length > 0 ? consenting : [-1];
  // Private channels a consenting user is subscribed to now (a past subscription is not access).
  const privateChannels = await db
    .selectFrom('subscriptions as s')
    .innerJoin('channels as c', 'c.id', 's.channel_id')
    .select('c.id')
    .distinct()
    .where('s.realm_id', '=', realm.id)
    .where('s.active', '=', true)
    .where('c.invite_only', '=', true)
    .where('s.user_id', '=', sql<number>`any(${intArray(ids)})`)
    .execute();
  const direct = await db
    .selectFrom('recipients')
    .select('id')
    .where('realm_id', '=', realm.id)
    .where('dm_user_ids', 'is not', null)
    .where(sql<boolean>`dm_user_ids && ${intArray(ids)}`)
    .execute();
  return { channels: [...publicChannels, ...privateChannels.map((c) => c.id)], directRecipients: direct.map((r) => r.id), flagsOf: new Set(consenting) };
}

export async function exportRealm(
  svc: Pick<Services, 'db' | 'storage' | 'events'>,
  realm: Realm,
  file: string,
  progress: Progress,
  kind: ExportKind = 'full',
): Promise<{ messages: number }> {
  const target = resolve(file);
  const staging = mkdtempSync(join(dirname(target), '.confab-export-'));
  const dirName = `confab-export-${realm.string_id || 'root'}-${realm.id}`;
  const dir = join(staging, dirName);
  try {
    mkdirSync(dir);
    // The export holds everyone's flags: long-term idle users' missing copies are added first.
    await catchUpRealm(svc, realm.id);
    const { db } = svc;
    const data = await realmData(db, realm);
    const clients = new Map<string, number>();
    const scope = await scopeOf(db, realm, kind);
    const { count: messages, ids: exported } = await messageFiles(db, realm, dir, clients, progress, scope);
    if (scope.channels !== null) {
      // Channels not exported leave no trace: their rows, recipients and subscriptions go too.
      const kept = new Set(scope.channels);
      const dropped = new Set((data.zerver_stream as { id: number; recipient: number | null }[]).filter((s) => !kept.has(s.id)).map((s) => s.recipient));
      data.zerver_stream = (data.zerver_stream as { id: number }[]).filter((s) => kept.has(s.id));
      data.zerver_recipient = (data.zerver_recipient as { id: number }[]).filter((r) => !dropped.has(r.id));
      data.zerver_subscription = (data.zerver_subscription as { recipient: number }[]).filter((s) => !dropped.has(s.recipient));
    }
    if (scope.directRecipients !== null) {
      const kept = new Set(scope.directRecipients);
      const dropped = new Set((data.zerver_huddle as { recipient: number }[]).filter((h) => !kept.has(h.recipient)).map((h) => h.recipient));
      data.zerver_huddle = (data.zerver_huddle as { recipient: number }[]).filter((h) => !dropped.has(h.recipient));
      data.zerver_recipient = (data.zerver_recipient as { id: number }[]).filter((r) => !dropped.has(r.id));
      data.zerver_subscription = (data.zerver_subscription as { recipient: number }[]).filter((s) => !dropped.has(s.recipient));
    }
    data.zerver_reaction = (data.zerver_reaction as { message: number }[]).filter((r) => exported.has(r.message));
    // The clients that sent messages, as the reference's zerver_client table.
    data.zerver_client = [...clients].map(([name, id]) => ({ id, name }));
    writeFileSync(join(dir, 'realm.json'), JSON.stringify(data, null, 1));
    await emojiFiles(svc, realm, dir);
    await attachmentFiles(svc, realm, dir, kind === 'full' ? null : exported);
    mkdirSync(join(dir, 'avatars'), { recursive: true });
    writeFileSync(join(dir, 'avatars', 'records.json'), '[]');
    progress.stage('archive', 1, 'files');
    const partial = `${target}.partial`;
    await tar.create({ gzip: true, file: partial, cwd: staging, portable: true }, [dirName]);
    await rename(partial, target);
    progress.advance(1);
    return { messages };
  } finally {
    progress.done();
    rmSync(staging, { recursive: true, force: true });
  }
}

/** realm.json's tables (zerver_client is added once the messages are written). */
async function realmData(db: Db, realm: Realm): Promise<Record<string, unknown[]>> {
  const users = await db.selectFrom('users').selectAll().where('realm_id', '=', realm.id).orderBy('id').execute();
  const channels = await db.selectFrom('channels').selectAll().where('realm_id', '=', realm.id).orderBy('id').execute();
  const recipients = await db.selectFrom('recipients').selectAll().where('realm_id', '=', realm.id).orderBy('id').execute();
  const subs = await db.selectFrom('subscriptions').selectAll().where('realm_id', '=', realm.id).execute();
  const emoji = await db.selectFrom('realm_emoji').selectAll().where('realm_id', '=', realm.id).orderBy('id').execute();
  const reactions = await db.selectFrom('reactions').selectAll().where('realm_id', '=', realm.id).orderBy('message_id').orderBy('created_at').execute();
  const maxRecipient =
    (
      await db
        .selectFrom('recipients')
        .select((eb) => eb.fn.max('id').as('m'))
        .executeTakeFirst()
    )?.m ?? 0;
  const personalBase = Number(maxRecipient);
  const recipientOfChannel = new Map(recipients.filter((r) => r.channel_id !== null).map((r) => [r.channel_id!, r.id]));
  const groups = recipients.filter((r) => r.dm_user_ids !== null);
  const profile = (u: (typeof users)[number]) => ({
    id: u.id,
    realm: realm.id,
    email: u.email,
    delivery_email: u.delivery_email,
    full_name: u.full_name,
    role: u.role,
    is_active: u.is_active,
    is_bot: u.is_bot,
    bot_type: u.bot_type,
    bot_owner: u.bot_owner_id,
    is_mirror_dummy: u.is_mirror_dummy,
    date_joined: epoch(u.date_joined),
    timezone: u.timezone,
    avatar_source: u.avatar_source,
    avatar_version: u.avatar_version,
    recipient: personalBase + u.id,
    api_key: u.api_key,
    ...u.settings,
  });
  let subId = 0;
  return {
    zerver_realm: [
      {
        id: realm.id,
        string_id: realm.string_id,
        name: realm.name,
        description: realm.description,
        deactivated: realm.deactivated,
        date_created: epoch(realm.date_created),
        ...settingsOf(realm),
      },
    ],
    zerver_userprofile: users.filter((u) => !u.is_system_bot).map(profile),
    zerver_userprofile_crossrealm: users.filter((u) => u.is_system_bot).map((u) => ({ id: u.id, email: u.email, recipient_id: personalBase + u.id })),
    zerver_stream: channels.map((c) => ({
      id: c.id,
      realm: realm.id,
      name: c.name,
      description: c.description,
      rendered_description: c.rendered_description,
      date_created: epoch(c.date_created),
      creator: c.creator_id,
      invite_only: c.invite_only,
      is_web_public: c.is_web_public,
      history_public_to_subscribers: c.history_public_to_subscribers,
      message_retention_days: c.message_retention_days,
      topics_policy: c.topics_policy,
      deactivated: c.is_archived,
      recipient: recipientOfChannel.get(c.id) ?? null,
    })),
    zerver_recipient: [
      ...users.map((u) => ({ id: personalBase + u.id, type: RECIPIENT.PERSONAL, type_id: u.id })),
      ...recipients.filter((r) => r.channel_id !== null).map((r) => ({ id: r.id, type: RECIPIENT.STREAM, type_id: r.channel_id })),
      ...groups.map((r) => ({ id: r.id, type: RECIPIENT.DIRECT_MESSAGE_GROUP, type_id: r.id })),
    ],
    zerver_huddle: groups.map((r) => ({ id: r.id, huddle_hash: r.dm_key, group_size: r.dm_user_ids!.length, recipient: r.id })),
    zerver_subscription: [
      ...users.map((u) => ({ id: ++subId, user_profile: u.id, recipient: personalBase + u.id, active: true })),
      ...subs.map((s) => ({
        id: ++subId,
        user_profile: s.user_id,
        recipient: recipientOfChannel.get(s.channel_id),
        active: s.active,
        color: s.color,
        is_muted: s.is_muted,
        pin_to_top: s.pin_to_top,
        desktop_notifications: s.desktop_notifications,
        audible_notifications: s.audible_notifications,
        push_notifications: s.push_notifications,
        email_notifications: s.email_notifications,
        wildcard_mentions_notify: s.wildcard_mentions_notify,
      })),
      ...groups.flatMap((r) => r.dm_user_ids!.map((user) => ({ id: ++subId, user_profile: user, recipient: r.id, active: true }))),
    ],
    zerver_realmemoji: emoji.map((e) => ({
      id: e.id,
      realm: realm.id,
      name: e.name,
      file_name: e.file_name,
      still_file_name: e.still_file_name,
      author: e.author_id,
      deactivated: e.deactivated,
    })),
    zerver_reaction: reactions.map((r, i) => ({
      id: i + 1,
      message: r.message_id,
      user_profile: r.user_id,
      emoji_name: r.emoji_name,
      emoji_code: r.emoji_code,
      reaction_type: r.reaction_type,
    })),
  };
}

/** messages-000001.json, ...: messages in id order with their user_messages; how many, and their ids. */
async function messageFiles(
  db: Db,
  realm: Realm,
  dir: string,
  clients: Map<string, number>,
  progress: Progress,
  scope: Scope,
): Promise<{ count: number; ids: Set<number> }> {
  const inRealm = () => {
    const q = db.selectFrom('messages').where('realm_id', '=', realm.id);
    const { channels, directRecipients } = scope;
    if (channels === null && directRecipients === null) return q;
    return q.where((eb) =>
      eb.or([
        channels === null ? eb('channel_id', 'is not', null) : eb('channel_id', '=', sql<number>`any(${intArray(channels)})`),
        directRecipients === null
          ? eb('channel_id', 'is', null)
          : eb.and([eb('channel_id', 'is', null), eb('recipient_id', '=', sql<number>`any(${intArray(directRecipients)})`)]),
      ]),
    );
  };
  const exported = new Set<number>();
  const total = Number(
    (
      await inRealm()
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
  progress.stage('messages', total, 'messages');
  let after = 0;
  let fileNo = 0;
  for (;;) {
    const batch = await inRealm().selectAll().where('id', '>', after).orderBy('id').limit(MESSAGES_PER_FILE).execute();
    if (batch.length === 0 && fileNo > 0) break;
    const ids = batch.map((m) => m.id);
    for (const id of ids) exported.add(id);
    const all =
      ids.length === 0
        ? []
        : await db.selectFrom('user_messages').selectAll().where('message_id', 'in', ids).orderBy('message_id').orderBy('user_id').execute();
    const ums = scope.flagsOf === null ? all : all.filter((um) => scope.flagsOf!.has(um.user_id));
    const isPrivate = new Map(batch.map((m) => [m.id, m.channel_id === null]));
    const file = {
      zerver_message: batch.map((m) => ({
        id: m.id,
        realm: realm.id,
        sender: m.sender_id,
        recipient: m.recipient_id,
        subject: m.topic,
        content: m.content,
        rendered_content: m.rendered_content,
        rendered_content_version: 1,
        date_sent: epoch(m.date_sent),
        last_edit_time: epoch(m.last_edit_at),
        edit_history: m.edit_history === null ? null : JSON.stringify(m.edit_history),
        sending_client: clientId(clients, m.client),
        has_link: m.has_link,
        has_image: m.has_image,
        has_attachment: m.has_attachment,
      })),
      zerver_usermessage: ums.map((um) => ({
        id: `${um.user_id}-${um.message_id}`,
        user_profile: um.user_id,
        message: um.message_id,
        flags_mask: referenceFlags(um.flags, isPrivate.get(um.message_id)!),
      })),
    };
    writeFileSync(join(dir, `messages-${String(++fileNo).padStart(6, '0')}.json`), JSON.stringify(file));
    progress.advance(batch.length);
    if (batch.length < MESSAGES_PER_FILE) break;
    after = ids[ids.length - 1];
  }
  return { count: total, ids: exported };
}

function clientId(clients: Map<string, number>, name: string): number {
  let id = clients.get(name);
  if (id === undefined) clients.set(name, (id = clients.size + 1));
  return id;
}

/**
 * attachment.json and uploads/: the organization's message files (a scoped
 * export: only those its exported messages link), at uploads/<path_id>.
 */
async function attachmentFiles(svc: Pick<Services, 'db' | 'storage'>, realm: Realm, dir: string, messages: Set<number> | null): Promise<void> {
  const links = await svc.db
    .selectFrom('attachment_messages')
    .select(['attachment_id', 'message_id'])
    .where('realm_id', '=', realm.id)
    .orderBy('attachment_id')
    .orderBy('message_id')
    .execute();
  const linked = links.filter((l) => messages === null || messages.has(l.message_id));
  const wanted = new Set(linked.map((l) => l.attachment_id));
  const rows = (await svc.db.selectFrom('attachments').selectAll().where('realm_id', '=', realm.id).orderBy('id').execute()).filter(
    (a) => messages === null || wanted.has(a.id),
  );
  const records = [];
  const attachments = [];
  mkdirSync(join(dir, 'uploads'), { recursive: true });
  for (const a of rows) {
    const bytes = await svc.storage.get(fileKey(a.path_id));
    if (!bytes) continue;
    mkdirSync(dirname(join(dir, 'uploads', a.path_id)), { recursive: true });
    await writeFile(join(dir, 'uploads', a.path_id), bytes);
    records.push({
      realm_id: realm.id,
      user_profile_id: a.owner_id,
      path: a.path_id,
      s3_path: a.path_id,
      content_type: a.content_type,
      size: a.size,
      last_modified: epoch(a.create_time),
    });
    const ids = linked.filter((l) => l.attachment_id === a.id).map((l) => l.message_id);
    attachments.push({
      id: a.id,
      realm: realm.id,
      owner: a.owner_id,
      path_id: a.path_id,
      file_name: a.file_name,
      size: a.size,
      content_type: a.content_type,
      create_time: epoch(a.create_time),
      messages: ids,
    });
  }
  const kept = new Set(attachments.map((a) => a.id));
  const attachmentMessages = linked
    .filter((l) => kept.has(l.attachment_id))
    .map((l, i) => ({ id: i + 1, attachment_id: l.attachment_id, message_id: l.message_id }));
  writeFileSync(join(dir, 'uploads', 'records.json'), JSON.stringify(records, null, 1));
  writeFileSync(join(dir, 'attachment.json'), JSON.stringify({ zerver_attachment: attachments, zerver_attachment_messages: attachmentMessages }));
}

/** emoji/records.json and the files, at the reference's paths (<realm>/emoji/images/<file>). */
async function emojiFiles(svc: Pick<Services, 'db' | 'storage'>, realm: Realm, dir: string): Promise<void> {
  const emoji = await svc.db.selectFrom('realm_emoji').selectAll().where('realm_id', '=', realm.id).orderBy('id').execute();
  const records = [];
  for (const e of emoji) {
    for (const fileName of [e.file_name, e.still_file_name]) {
      if (!fileName) continue;
      const bytes = await svc.storage.get(emojiKey(realm.id, fileName));
      if (!bytes) continue;
      const path = `${realm.id}/emoji/images/${fileName}`;
      mkdirSync(dirname(join(dir, 'emoji', path)), { recursive: true });
      await writeFile(join(dir, 'emoji', path), bytes);
      records.push({ realm_id: realm.id, id: e.id, name: e.name, author: e.author_id, file_name: fileName, path, s3_path: path, deactivated: e.deactivated });
    }
  }
  mkdirSync(join(dir, 'emoji'), { recursive: true });
  writeFileSync(join(dir, 'emoji', 'records.json'), JSON.stringify(records, null, 1));
}
