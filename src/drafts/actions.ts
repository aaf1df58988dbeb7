// Drafts (digest section 2 "Drafts", 3.3): a user's unsent messages, kept on
// the server while the user's `enable_drafts_synchronization` is on, and
// announced to the user's other clients through `drafts` events.

import type { Hooked, Services } from '../services.ts';
import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { transact, type Tx } from '../db/transact.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { accessibleUsers, canAccess, getUser, listUsers } from '../users/queries.ts';
import { userSettings } from '../users/settings.ts';
import { TEXT_BOUNDS } from '../realm/state.ts';
import { channelViewer, hasContentAccess } from '../channels/access.ts';
import { listChannels } from '../channels/queries.ts';
import { formatDraft, type ApiDraft } from './format.ts';
import { listDrafts } from './queries.ts';
import type { DraftInput } from './validation.ts';

export type DraftsEvent =
  | { type: 'drafts'; op: 'add'; drafts: ApiDraft[] }
  | { type: 'drafts'; op: 'update'; draft: ApiDraft }
  | { type: 'drafts'; op: 'remove'; draft_id: number };

/** Drafts work only while the user synchronizes them. */
async function checkSynchronizing(db: Executor, realm: Realm, actor: User): Promise<User> {
  // Read afresh: the authenticated row may be a few seconds old.
  const user = (await getUser(db, realm.id, actor.id))!;
  if (!userSettings(user).enable_drafts_synchronization) throw badRequest('User has disabled synchronizing drafts.');
  return user;
}

function truncate(text: string, max: number, marker: string): string {
  return text.length > max ? text.slice(0, max - marker.length) + marker : text;
}

interface DraftRow {
  type: string;
  recipients: number[];
  topic: string;
  content: string;
  last_edit_time: number;
}

/**
 * Checks drafts the way messages would be checked and gives their stored form.
 * Recipients of direct messages must be users the author may see; a channel
 * draft names exactly one channel, which the author may read.
 */
async function checkDrafts(svc: Hooked, db: Executor, realm: Realm, author: User, drafts: DraftInput[]): Promise<DraftRow[]> {
  const mentioned = [...new Set(drafts.flatMap((d) => (d.type === 'private' ? d.to : [])))];
  const users = new Map((await listUsers(db, realm.id, mentioned)).map((u) => [u.id, u]));
  const access = mentioned.length > 0 ? await accessibleUsers(svc, db, realm, author) : 'all';
  // A channel draft names a live channel whose messages the author may read (Zulip's access_stream_by_id).
  const channelIds = [...new Set(drafts.flatMap((d) => (d.type === 'stream' && d.to.length === 1 ? d.to : [])))];
  const viewer = channelIds.length > 0 ? await channelViewer(db, realm, author) : undefined;
  const channels = new Map((await listChannels(db, realm.id, channelIds)).map((c) => [c.id, c]));
  return drafts.map((d) => {
    const content = truncate(d.content.trimEnd().replace(/^\n+/, ''), TEXT_BOUNDS.max_message_length, '\n[message truncated]');
    if (content.includes('\0')) throw badRequest('Message must not contain null bytes');
    const time = d.timestamp ?? Date.now() / 1000;
    if (time < 0) throw badRequest('Timestamp must not be negative.');
    const row = { type: '', recipients: [] as number[], topic: '', content, last_edit_time: Math.floor(time) };
    if (d.type === 'stream') {
      const topic = truncate(d.topic, TEXT_BOUNDS.max_topic_length, '...');
      if (topic.includes('\0')) throw badRequest('Topic must not contain null bytes');
      if (d.to.length !== 1) throw badRequest('Must specify exactly 1 channel ID for channel messages');
      const channel = channels.get(d.to[0]);
      if (!channel || channel.is_archived || !hasContentAccess(viewer!, channel)) throw badRequest('Invalid channel ID');
      return { ...row, type: 'stream', recipients: [d.to[0]], topic };
    }
    if (d.type === 'private' && d.to.length > 0) {
      const ids = [...new Set(d.to)].sort((a, b) => a - b);
      for (const id of ids) {
        const user = users.get(id);
        if (!user || !canAccess(access, id)) throw badRequest(`Invalid user ID ${id}`);
        if (!user.is_active && !user.is_bot) throw badRequest(`'${user.email}' is no longer using Confab.`);
      }
      // The author is implied, except in a conversation with oneself.
      const others = ids.filter((id) => id !== author.id);
      return { ...row, type: 'private', recipients: others.length > 0 ? others : [author.id] };
    }
    // Unaddressed (or a direct message with nobody yet): no recipients, no topic.
    return row;
  });
}

/** GET /drafts: every draft of the caller, most recently edited first. */
export async function ownDrafts(svc: Services, realm: Realm, actor: User): Promise<ApiDraft[]> {
  const author = await checkSynchronizing(svc.db, realm, actor);
  return (await listDrafts(svc.db, author.id)).map(formatDraft);
}

/** POST /drafts: the new drafts' ids, in the order given. */
export async function createDrafts(svc: Services, realm: Realm, actor: User, drafts: DraftInput[]): Promise<number[]> {
  const author = await checkSynchronizing(svc.db, realm, actor);
  const rows = await checkDrafts(svc, svc.db, realm, author, drafts);
  if (rows.length === 0) return [];
  return transact(svc, async (tx, emit) => {
    const created = await tx
      .insertInto('drafts')
      .values(rows.map((r) => ({ ...r, realm_id: realm.id, user_id: author.id, recipients: JSON.stringify(r.recipients) })))
      .returningAll()
      .execute();
    created.sort((a, b) => a.id - b.id);
    emit(realm.id, { type: 'drafts', op: 'add', drafts: created.map(formatDraft) }, [author.id]);
    return created.map((d) => d.id);
  });
}

async function ownDraft(tx: Tx, author: User, draftId: number) {
  const draft = await tx.selectFrom('drafts').selectAll().where('id', '=', draftId).where('user_id', '=', author.id).forUpdate().executeTakeFirst();
  if (!draft) throw notFound('Draft does not exist');
  return draft;
}

/** PATCH /drafts/{draft_id}: replaces the draft. */
export async function editDraft(svc: Services, realm: Realm, actor: User, draftId: number, input: DraftInput): Promise<void> {
  const author = await checkSynchronizing(svc.db, realm, actor);
  await transact(svc, async (tx, emit) => {
    await ownDraft(tx, author, draftId);
    const [row] = await checkDrafts(svc, tx, realm, author, [input]);
    const updated = await tx
      .updateTable('drafts')
      .set({ ...row, recipients: JSON.stringify(row.recipients) })
      .where('id', '=', draftId)
      .returningAll()
      .executeTakeFirstOrThrow();
    emit(realm.id, { type: 'drafts', op: 'update', draft: formatDraft(updated) }, [author.id]);
  });
}

/** DELETE /drafts/{draft_id}. */
export async function deleteDraft(svc: Services, realm: Realm, actor: User, draftId: number): Promise<void> {
  const author = await checkSynchronizing(svc.db, realm, actor);
  await transact(svc, async (tx, emit) => {
    await ownDraft(tx, author, draftId);
    await tx.deleteFrom('drafts').where('id', '=', draftId).execute();
    emit(realm.id, { type: 'drafts', op: 'remove', draft_id: draftId }, [author.id]);
  });
}

/** When the user stops synchronizing: the server forgets every draft (clients keep theirs). */
export async function deleteAllDrafts(tx: Tx, userId: number): Promise<void> {
  await tx.deleteFrom('drafts').where('user_id', '=', userId).execute();
}
