// Avatars (POST/DELETE /users/me/avatar) and the organization's icon and logos
// (POST/DELETE /realm/icon, /realm/logo): images resized and checked before
// anything is written, stored under fixed keys, and announced as the
// reference does (realm_user update with the avatar facet; realm update_dict).

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { UploadedFile } from '../http/body.ts';
import { transact, transactAs } from '../db/transact.ts';
import { badRequest } from '../http/errors.ts';
import { activeUserIds } from '../users/queries.ts';
import { avatarFacet, notifyUsers } from '../users/actions.ts';
import { avatarUrl } from '../users/format.ts';
import { realmIconUrl, realmLogoUrl } from '../realm/queries.ts';
import { contentTypeOf } from './actions.ts';
import { logoImage, squareImages } from './images.ts';
import { mayChangeOwn, requireAdmin } from '../users/access.ts';

/** The reference's MAX_AVATAR_FILE_SIZE_MIB, MAX_ICON_FILE_SIZE_MIB, MAX_LOGO_FILE_SIZE_MIB (register reports them). */
const MAX_IMAGE_MIB = 5;

export const avatarKey = (realmId: number, file: string) => `avatars/${realmId}/${file}`;
export const realmImageKey = (realmId: number, file: string) => `avatars/${realmId}/realm/${file}`;

/** The one image of the request, within the size limit; `what` names it in the reference's words. */
function oneImage(files: UploadedFile[], what: string): UploadedFile {
  if (files.length !== 1) throw badRequest(`You must upload exactly one ${what}.`);
  const file = files[0]!;
  if (file.data.length > MAX_IMAGE_MIB * 1024 * 1024) throw badRequest(`Uploaded file is larger than the allowed limit of ${MAX_IMAGE_MIB} MiB`);
  return file;
}

function checkAvatarChangesAllowed(realm: Realm, actor: User): void {
  if (!mayChangeOwn(realm, actor, 'avatar_changes_disabled')) throw badRequest('Avatar changes are disabled in this organization.');
}

/** Switches the avatar's source, bumps its version and tells everyone who sees the user. */
async function changeAvatarSource(svc: Services, realm: Realm, actor: User, source: 'G' | 'U'): Promise<User> {
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const updated = await tx
      .updateTable('users')
      .set((eb) => ({ avatar_source: source, avatar_version: eb('avatar_version', '+', 1) }))
      .where('id', '=', actor.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await notifyUsers(ctx, updated, 'update', () => avatarFacet(updated));
    return updated;
  });
}

export async function uploadAvatar(svc: Services, realm: Realm, actor: User, files: UploadedFile[]): Promise<{ avatar_url: string }> {
  const file = oneImage(files, 'avatar');
  checkAvatarChangesAllowed(realm, actor);
  const { small, medium } = await squareImages(file.data, contentTypeOf(file));
  await svc.storage.put(avatarKey(realm.id, `${actor.id}.png`), small);
  await svc.storage.put(avatarKey(realm.id, `${actor.id}-medium.png`), medium);
  return { avatar_url: avatarUrl(await changeAvatarSource(svc, realm, actor, 'U')) };
}

export async function removeAvatar(svc: Services, realm: Realm, actor: User): Promise<{ avatar_url: string }> {
  checkAvatarChangesAllowed(realm, actor);
  const updated = await changeAvatarSource(svc, realm, actor, 'G');
  for (const file of [`${actor.id}.png`, `${actor.id}-medium.png`]) await svc.storage.delete(avatarKey(realm.id, file));
  return { avatar_url: avatarUrl(updated) };
}

export type RealmImage = 'icon' | 'logo' | 'night_logo';

const COLUMNS = {
  icon: { source: 'icon_source', version: 'icon_version', uploaded: 'U', unset: 'G' },
  logo: { source: 'logo_source', version: 'logo_version', uploaded: 'U', unset: 'D' },
  night_logo: { source: 'night_logo_source', version: 'night_logo_version', uploaded: 'U', unset: 'D' },
} as const;

/** Stores the new source and version; every user hears `realm/update_dict` with the URL and source. */
async function changeRealmImage(svc: Services, realm: Realm, kind: RealmImage, uploaded: boolean): Promise<Realm> {
  const c = COLUMNS[kind];
  return transact(svc, async (tx, emit) => {
    const updated = await tx
      .updateTable('realms')
      .set((eb) => ({ [c.source]: uploaded ? c.uploaded : c.unset, [c.version]: eb(c.version, '+', 1) }))
      .where('id', '=', realm.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const url = kind === 'icon' ? realmIconUrl(updated) : realmLogoUrl(updated, kind === 'night_logo');
    const data = { [`${kind}_url`]: url, [`${kind}_source`]: updated[c.source] };
    emit(realm.id, { type: 'realm', op: 'update_dict', property: kind, data }, await activeUserIds(tx, realm.id));
    return updated;
  });
}

export async function uploadRealmImage(svc: Services, realm: Realm, actor: User, kind: RealmImage, files: UploadedFile[]): Promise<Realm> {
  requireAdmin(actor);
  const file = oneImage(files, kind === 'icon' ? 'icon' : 'logo');
  const type = contentTypeOf(file);
  const image = kind === 'icon' ? (await squareImages(file.data, type)).small : await logoImage(file.data, type);
  await svc.storage.put(realmImageKey(realm.id, `${kind}.png`), image);
  return changeRealmImage(svc, realm, kind, true);
}

export async function removeRealmImage(svc: Services, realm: Realm, actor: User, kind: RealmImage): Promise<Realm> {
  requireAdmin(actor);
  const updated = await changeRealmImage(svc, realm, kind, false);
  await svc.storage.delete(realmImageKey(realm.id, `${kind}.png`));
  return updated;
}
