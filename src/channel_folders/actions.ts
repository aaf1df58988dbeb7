// Channel folders (spec endpoint 7, digest 1.7 and section 2): administrators
// organize channels in folders; folders are archived, never deleted.

import { sql } from 'kysely';
import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { ChannelFolder } from '../channels/tables.ts';
import { type ActionContext, transactAs, type Tx } from '../db/transact.ts';
import { badRequest } from '../http/errors.ts';
import { activeUserIds } from '../users/queries.ts';
import { prerenderHtml } from '../rendering/index.ts';
import { TEXT_BOUNDS } from '../realm/state.ts';
import { charLength, checkNoNullCharacter, firstUnprintable } from '../channels/validation.ts';
import { formatFolder } from './format.ts';
import { requireAdmin } from '../users/access.ts';
import type { ApiChannelFolder } from './format.ts';

export type ChannelFolderEvent =
  | { type: 'channel_folder'; op: 'add'; channel_folder: ApiChannelFolder }
  | { type: 'channel_folder'; op: 'update'; channel_folder_id: number; data: Partial<ApiChannelFolder> }
  | { type: 'channel_folder'; op: 'reorder'; order: number[] };

type ChannelFolderBody = ChannelFolderEvent extends infer E ? (E extends ChannelFolderEvent ? Omit<E, 'type'> : never) : never;

function checkName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw badRequest("Channel folder name can't be empty.");
  if (charLength(name) > TEXT_BOUNDS.max_channel_folder_name_length) {
    throw badRequest(`name is too long (limit: ${TEXT_BOUNDS.max_channel_folder_name_length} characters)`);
  }
  const bad = firstUnprintable(name);
  if (bad !== undefined) throw badRequest(`Invalid character in channel folder name, at position ${bad}.`);
  return name;
}

function checkDescription(raw: string): string {
  if (charLength(raw) > TEXT_BOUNDS.max_channel_folder_description_length) {
    throw badRequest(`description is too long (limit: ${TEXT_BOUNDS.max_channel_folder_description_length} characters)`);
  }
  checkNoNullCharacter(raw, 'channel folder description');
  return raw;
}

async function checkUnique(tx: Tx, realmId: number, name: string, exceptId?: number): Promise<void> {
  const other = await tx
    .selectFrom('channel_folders')
    .select('id')
    .where('realm_id', '=', realmId)
    .where(sql<string>`lower(name)`, '=', name.toLowerCase())
    .executeTakeFirst();
  if (other && other.id !== exceptId) throw badRequest(`Channel folder '${name}' already exists`);
}

async function emitToAll(ctx: ActionContext<unknown>, event: ChannelFolderBody): Promise<void> {
  const { tx, emit, realm } = ctx;
  emit(realm.id, { type: 'channel_folder', ...event }, await activeUserIds(tx, realm.id));
}

export async function createFolder(svc: Services, realm: Realm, actor: User, p: { name: string; description: string }): Promise<ChannelFolder> {
  requireAdmin(actor);
  const name = checkName(p.name);
  const description = checkDescription(p.description);
  const html = await prerenderHtml(svc, realm, [description]);
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    await checkUnique(tx, realm.id, name);
    const last = await tx
      .selectFrom('channel_folders')
      .select((eb) => eb.fn.max('order').as('order'))
      .where('realm_id', '=', realm.id)
      .executeTakeFirst();
    const folder = await tx
      .insertInto('channel_folders')
      .values({
        realm_id: realm.id,
        name,
        description,
        rendered_description: html(description),
        creator_id: actor.id,
        date_created: new Date(),
        order: (last?.order ?? -1) + 1,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await emitToAll(ctx, { op: 'add', channel_folder: formatFolder(folder) });
    return folder;
  });
}

export async function updateFolder(
  svc: Services,
  realm: Realm,
  actor: User,
  folderId: number,
  p: { name?: string; description?: string; is_archived?: boolean },
): Promise<void> {
  requireAdmin(actor);
  const html = await prerenderHtml(svc, realm, p.description === undefined ? [] : [() => checkDescription(p.description!)]);
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const folder = await tx.selectFrom('channel_folders').selectAll().where('realm_id', '=', realm.id).where('id', '=', folderId).executeTakeFirst();
    if (!folder) throw badRequest('Invalid channel folder ID');
    const changes: Partial<Pick<ChannelFolder, 'name' | 'description' | 'rendered_description' | 'is_archived'>> = {};
    if (p.name !== undefined) {
      const name = checkName(p.name);
      if (name !== folder.name) {
        await checkUnique(tx, realm.id, name, folder.id);
        changes.name = name;
      }
    }
    if (p.description !== undefined) {
      const description = checkDescription(p.description);
      if (description !== folder.description) {
        changes.description = description;
        changes.rendered_description = html(description);
      }
    }
    if (p.is_archived !== undefined && p.is_archived !== folder.is_archived) {
      if (p.is_archived) {
        const inUse = await tx.selectFrom('channels').select('id').where('folder_id', '=', folder.id).where('is_archived', '=', false).executeTakeFirst();
        if (inUse) throw badRequest('You need to remove all the channels from this folder to archive it.');
      }
      changes.is_archived = p.is_archived;
    }
    if (Object.keys(changes).length === 0) return;
    await tx.updateTable('channel_folders').set(changes).where('id', '=', folder.id).execute();
    await emitToAll(ctx, { op: 'update', channel_folder_id: folder.id, data: changes });
  });
}

export async function reorderFolders(svc: Services, realm: Realm, actor: User, order: number[]): Promise<void> {
  requireAdmin(actor);
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const ids = (await tx.selectFrom('channel_folders').select('id').where('realm_id', '=', realm.id).execute()).map((r) => r.id);
    const given = new Set(order);
    if (given.size !== order.length || given.size !== ids.length || ids.some((id) => !given.has(id))) {
      throw badRequest('Invalid order mapping.');
    }
    for (const [i, id] of order.entries()) await tx.updateTable('channel_folders').set({ order: i }).where('id', '=', id).execute();
    await emitToAll(ctx, { op: 'reorder', order });
  });
}
