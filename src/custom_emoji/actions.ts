// Adding and deactivating custom emoji (digest section 2). Every change sends
// the organization's whole emoji dict (deactivated ones included) as
// `realm_emoji/update` to every user.

import { randomBytes } from 'node:crypto';
import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { UploadedFile } from '../http/body.ts';
import { type ActionContext, transactAs } from '../db/transact.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { ApiError, badRequest, insufficientPermission, notFound } from '../http/errors.ts';
import { mayDeactivateEmoji, mayOverrideDefaultEmoji, requireNotGuest } from '../users/access.ts';
import { activeUserIds } from '../users/queries.ts';
import { hasRealmPermission } from '../user_groups/access.ts';
import { emojiCodeForName } from '../markdown/emoji.ts';
import { customEmojiByName, listCustomEmoji } from './queries.ts';
import { emojiDict } from './format.ts';
import { IMAGE_TYPES, inspectImage, stillImage } from './image.ts';
import { emojiKey } from './format.ts';
import { sql } from 'kysely';
import type { ApiRealmEmoji } from './format.ts';

export interface RealmEmojiEvent {
  type: 'realm_emoji';
  op: 'update';
  realm_emoji: Record<string, ApiRealmEmoji>;
}

/** The reference server's MAX_EMOJI_FILE_SIZE_MIB default. */
export const MAX_EMOJI_FILE_SIZE_MIB = 5;
export const MAX_EMOJI_NAME_LENGTH = 60;
/** Images are served as uploaded (never decoded here), so clients must be able to decode them. */
const MAX_EMOJI_PIXELS = 4096 * 4096;

const EXISTS = 'A custom emoji with this name already exists.';

/** Names as the reference server allows them: lowercase letters, digits, `-` and `_`, ending in a letter or digit. */
export function checkEmojiName(name: string): void {
  if (name === '') throw badRequest('Emoji name is missing');
  if (!/^[0-9a-z_-]+$/.test(name)) {
    throw badRequest('Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.');
  }
  if (/[-_]$/.test(name)) throw badRequest('Emoji names must end with either a letter or digit.');
  if (name.length > MAX_EMOJI_NAME_LENGTH) throw badRequest(`Emoji name is too long (limit: ${MAX_EMOJI_NAME_LENGTH} characters)`);
}

async function notifyEmoji(ctx: ActionContext<unknown>): Promise<void> {
  const { tx, emit, realm } = ctx;
  const realm_emoji = emojiDict(await listCustomEmoji(tx, realm.id));
  emit(realm.id, { type: 'realm_emoji', op: 'update', realm_emoji }, await activeUserIds(tx, realm.id));
}

/** POST /realm/emoji/{emoji_name}: the checks in the reference server's order, then one transaction. */
export async function uploadCustomEmoji(svc: Services, realm: Realm, actor: User, rawName: string, files: UploadedFile[]): Promise<void> {
  requireNotGuest(actor);
  const name = rawName.trim().replaceAll(' ', '_');
  checkEmojiName(name);
  if (!(await hasRealmPermission(svc.db, realm, actor, 'can_add_custom_emoji_group'))) throw insufficientPermission();
  if (await customEmojiByName(svc.db, realm.id, name)) throw badRequest(EXISTS);
  if (files.length !== 1) throw badRequest('You must upload exactly one file.');
  if (emojiCodeForName(name) !== undefined && !mayOverrideDefaultEmoji(actor)) throw badRequest('Only administrators can override default emoji.');
  const [file] = files as [UploadedFile];
  if (file.data.length > MAX_EMOJI_FILE_SIZE_MIB * 1024 * 1024) {
    throw badRequest(`Uploaded file is larger than the allowed limit of ${MAX_EMOJI_FILE_SIZE_MIB} MiB`);
  }
  const image = inspectImage(file.data);
  if (!image) {
    const claimsImage = Object.values(IMAGE_TYPES).some((t) => t.mime === file.mimetype);
    throw new ApiError('BAD_IMAGE', claimsImage ? 'Could not decode image; did you upload an image file?' : 'Invalid image format');
  }
  if (image.width * image.height > MAX_EMOJI_PIXELS) throw new ApiError('BAD_IMAGE', 'Image size exceeds limit.');
  const { ext } = IMAGE_TYPES[image.format];
  const still = image.animated ? stillImage(file.data, image.format) : null;

  // The files are written before the transaction (no slow work inside it), named by an id taken beforehand.
  const { id } = await sql<{ id: number }>`select nextval(pg_get_serial_sequence('realm_emoji', 'id'))::integer as id`.execute(svc.db).then((r) => r.rows[0]!);
  // Served without credentials: a random part keeps other organizations from listing them by id.
  const fileName = `${id}-${randomBytes(8).toString('hex')}.${ext}`;
  const stillName = still ? `still/${fileName}` : null;
  const written = stillName ? [fileName, stillName] : [fileName];
  try {
    await svc.storage.put(emojiKey(realm.id, fileName), file.data);
    if (still && stillName) await svc.storage.put(emojiKey(realm.id, stillName), still);
    await transactAs(svc, realm, actor, async (ctx) => {
      const { tx } = ctx;
      await tx
        .insertInto('realm_emoji')
        .values({ id, realm_id: realm.id, name, author_id: actor.id, file_name: fileName, still_file_name: stillName, date_created: new Date() })
        .execute();
      await notifyEmoji(ctx);
    });
  } catch (err) {
    // No row refers to the files.
    await Promise.all(written.map((f) => svc.storage.delete(emojiKey(realm.id, f))));
    // Two uploads of one name at once: the second loses.
    if (isUniqueViolation(err)) throw badRequest(EXISTS);
    throw err;
  }
}

/** DELETE /realm/emoji/{emoji_name}: deactivates; the author or an administrator. */
export async function deactivateCustomEmoji(svc: Services, realm: Realm, actor: User, name: string): Promise<void> {
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const emoji = await customEmojiByName(tx, realm.id, name);
    if (!emoji) throw notFound(`Emoji '${name}' does not exist`);
    if (!mayDeactivateEmoji(actor, emoji.author_id)) throw badRequest('Must be an organization administrator or emoji author');
    const updated = await tx
      .updateTable('realm_emoji')
      .set({ deactivated: true })
      .where('id', '=', emoji.id)
      .where('deactivated', '=', false)
      .executeTakeFirst();
    // Deactivated meanwhile by someone else: as if it had not existed.
    if (updated.numUpdatedRows === 0n) throw notFound(`Emoji '${name}' does not exist`);
    await notifyEmoji(ctx);
  });
}
