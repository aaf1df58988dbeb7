// POST /user_uploads and DELETE /attachments/{id}. Bytes are stored (and
// thumbnails made) before the transaction that writes the row; if anything
// fails after, the stored keys are removed again, so a failed upload leaves
// nothing behind. Each change tells the owner (`attachment` add/remove).

import { randomBytes, randomInt } from 'node:crypto';
import { extname } from 'node:path';
import { sql } from 'kysely';
import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { UploadedFile } from '../http/body.ts';
import { transactAs, type Tx } from '../db/transact.ts';
import { notifyAttachment } from './events.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import { settingsOf } from '../realm/queries.ts';
import { attachmentById, formatAttachment, uploadSpaceUsed } from './queries.ts';
import { THUMBNAIL_ACCEPT_IMAGE_TYPES, makeThumbnails, probeImage, type ImageFacts } from './images.ts';
import type { Attachment } from './tables.ts';

/** Where an upload's bytes live, and its thumbnails. */
export const fileKey = (pathId: string) => `files/${pathId}`;
export const thumbnailKey = (pathId: string, format: string) => `files/thumbnail/${pathId}/${format}`;

const MAX_FILE_NAME_BYTES = 255;

/** The reference's sanitize_name: letters, digits, `_`, `.`, `-`; runs of spaces and dashes become one dash. */
export function sanitizeFileName(name: string): string {
  let value = name
    .normalize('NFKC')
    .replace(/[^\p{L}\p{N}\p{M}_\s.-]/gu, '')
    .trim();
  value = value.replace(/[-\s]+/g, '-');
  if (Buffer.byteLength(value) > MAX_FILE_NAME_BYTES) {
    const ext = extname(value);
    const keep = Buffer.byteLength(ext) < MAX_FILE_NAME_BYTES ? ext : '';
    const stem = Buffer.from(value.slice(0, value.length - keep.length)).subarray(0, MAX_FILE_NAME_BYTES - Buffer.byteLength(keep));
    // A cut through a multi-byte character drops that character.
    value = stem.toString('utf8').replace(/\uFFFD+$/, '') + keep;
  }
  return value === '' || value === '.' || value === '..' ? 'uploaded-file' : value;
}

/** `<realm_id>/<xx>/<random>/<name>`, as the reference lays out message uploads. */
export function newPathId(realmId: number, fileName: string): string {
  return [String(realmId), randomInt(0, 256).toString(16), randomBytes(18).toString('base64url'), sanitizeFileName(fileName)].join('/');
}

const TYPES_BY_EXTENSION: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.heic': 'image/heic',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.txt': 'text/plain',
  '.pdf': 'application/pdf',
};

/** The declared type; a missing or generic one is guessed from the name, as the reference does. */
export function contentTypeOf(file: UploadedFile): string {
  const declared = file.mimetype.split(';', 1)[0]!.trim().toLowerCase();
  if (declared !== '' && declared !== 'application/octet-stream') return declared;
  return TYPES_BY_EXTENSION[extname(file.filename).toLowerCase()] ?? 'application/octet-stream';
}

const quotaExceeded = () => new ApiError('REALM_UPLOAD_QUOTA', "Upload would exceed your organization's upload quota.");

/** Within the organization's quota (`upload_quota_mib`; null means none). */
async function checkQuota(db: Services['db'] | Tx, realm: Realm, size: number): Promise<void> {
  const quota = settingsOf(realm).upload_quota_mib as number | null;
  if (quota === null) return;
  if ((await uploadSpaceUsed(db, realm.id)) + size > quota * 1024 * 1024) throw quotaExceeded();
}

/** The thumbnails an image upload gets, stored; null facts when it is not an image we show inline. */
export async function storeThumbnails(svc: Services, pathId: string, data: Buffer, contentType: string): Promise<{ facts: ImageFacts | null; keys: string[] }> {
  if (!THUMBNAIL_ACCEPT_IMAGE_TYPES.has(contentType)) return { facts: null, keys: [] };
  const facts = await probeImage(data);
  const thumbnails = facts ? await makeThumbnails(data, facts) : null;
  if (!facts || !thumbnails) return { facts: null, keys: [] };
  const keys: string[] = [];
  for (const [format, bytes] of thumbnails) {
    keys.push(thumbnailKey(pathId, format));
    await svc.storage.put(thumbnailKey(pathId, format), bytes);
  }
  return { facts, keys };
}

/** POST /user_uploads: one file, within the size limit and the quota. */
export async function uploadFile(svc: Services, realm: Realm, actor: User, files: UploadedFile[]): Promise<{ url: string; filename: string }> {
  if (files.length === 0) throw badRequest('You must specify a file to upload');
  if (files.length !== 1) throw badRequest('You may only upload one file at a time');
  const file = files[0]!;
  const limit = svc.config.maxFileUploadMib;
  if (file.data.length > limit * 1024 * 1024) throw badRequest(`Uploaded file is larger than the allowed limit of ${limit} MiB`);
  await checkQuota(svc.db, realm, file.data.length);

  // The stored name keeps what PostgreSQL can hold.
  const fileName = file.filename.replaceAll('\0', '') || 'uploaded-file';
  const contentType = contentTypeOf(file);
  const pathId = newPathId(realm.id, fileName);
  const stored: string[] = [];
  try {
    const { facts, keys } = await storeThumbnails(svc, pathId, file.data, contentType);
    stored.push(...keys);
    stored.push(fileKey(pathId));
    await svc.storage.put(fileKey(pathId), file.data);
    await transactAs(svc, realm, actor, async (ctx) => {
      const { tx } = ctx;
      // Uploads of one organization take turns, so that two together cannot pass the quota.
      await sql`select id from realms where id = ${realm.id} for update`.execute(tx);
      await checkQuota(tx, realm, file.data.length);
      const row = await tx
        .insertInto('attachments')
        .values({
          realm_id: realm.id,
          owner_id: actor.id,
          path_id: pathId,
          file_name: fileName,
          size: file.data.length,
          content_type: contentType,
          create_time: new Date(),
          original_width_px: facts?.width ?? null,
          original_height_px: facts?.height ?? null,
          frames: facts?.frames ?? null,
          thumbnailed: facts !== null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await notifyAttachment(ctx, actor.id, 'add', await formatAttachment(tx, row));
    });
  } catch (err) {
    await Promise.allSettled(stored.map((key) => svc.storage.delete(key)));
    throw err;
  }
  return { url: `/user_uploads/${pathId}`, filename: fileName };
}

/** Every stored key of an attachment. */
export function attachmentKeys(row: Attachment): string[] {
  return [fileKey(row.path_id), ...(row.thumbnailed ? [`files/thumbnail/${row.path_id}/`] : [])];
}

/** DELETE /attachments/{id}: the owner's own file, its row and its bytes. */
export async function deleteAttachment(svc: Services, realm: Realm, actor: User, id: number): Promise<void> {
  const row = await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const found = await attachmentById(tx, realm.id, id);
    if (!found || found.owner_id !== actor.id) throw badRequest('Invalid attachment');
    const deleted = await tx.deleteFrom('attachments').where('id', '=', id).executeTakeFirst();
    // Deleted meanwhile by another request: as if it had not existed.
    if (deleted.numDeletedRows === 0n) throw badRequest('Invalid attachment');
    await notifyAttachment(ctx, actor.id, 'remove', { id });
    return found;
  });
  // After the commit: a failed removal leaves bytes no row points at, never a row without bytes.
  for (const key of attachmentKeys(row)) await svc.storage.delete(key);
}
