// Links to uploaded images in a text: their size and thumbnail, so Markdown
// writes the reference's inline preview.

import type { ReferenceResolver } from '../rendering/index.ts';
import type { UploadedImage } from '../markdown/types.ts';
import { THUMBNAIL_FORMAT } from './images.ts';

function decoded(pathId: string): string {
  try {
    return decodeURIComponent(pathId);
  } catch {
    return pathId;
  }
}

export const resolveUploadedImages: ReferenceResolver = async (_svc, db, realm, refs) => {
  if (refs.upload_path_ids.length === 0) return {};
  const asWritten = new Map(refs.upload_path_ids.map((p) => [decoded(p), p]));
  const rows = await db
    .selectFrom('attachments')
    .select(['path_id', 'original_width_px', 'original_height_px', 'frames', 'content_type', 'thumbnailed'])
    .where('realm_id', '=', realm.id)
    .where('path_id', 'in', [...asWritten.keys()])
    .where('original_width_px', 'is not', null)
    .execute();
  const uploaded_images: Record<string, UploadedImage> = {};
  for (const row of rows) {
    const animated = (row.frames ?? 1) > 1;
    const image: UploadedImage = {
      original_width_px: row.original_width_px!,
      original_height_px: row.original_height_px!,
      content_type: row.content_type,
      animated,
      ...(row.thumbnailed ? { thumbnail_url: `/user_uploads/thumbnail/${row.path_id}/${animated ? THUMBNAIL_FORMAT.animated : THUMBNAIL_FORMAT.still}` } : {}),
    };
    uploaded_images[row.path_id] = image;
    uploaded_images[asWritten.get(row.path_id)!] = image;
  }
  return { uploaded_images };
};
