// Decoding and resizing images (sharp: libvips, prebuilt in its npm package):
// what an upload is, its thumbnails, and the sizes avatars, icons and logos
// are stored at — the reference's formats and limits.

import sharp from 'sharp';
import { ApiError } from '../http/errors.ts';

/** The reference refuses images with more pixels than this (a decompression bomb). */
const IMAGE_BOMB_TOTAL_PIXELS = 90_000_000;
const AVATAR_SIZE = 100;
const MEDIUM_AVATAR_SIZE = 500;

/** The content types the reference thumbnails (the declared type decides whether the bytes are parsed at all). */
export const THUMBNAIL_ACCEPT_IMAGE_TYPES = new Set(['image/avif', 'image/gif', 'image/heic', 'image/jpeg', 'image/png', 'image/tiff', 'image/webp']);

/** The thumbnail written into messages: the reference's first still and animated output formats. */
export const THUMBNAIL_FORMAT = { still: '840x560.webp', animated: '840x560-anim.webp' } as const;
export const SERVER_THUMBNAIL_FORMATS = [
  { name: THUMBNAIL_FORMAT.animated, max_width: 840, max_height: 560, format: 'webp', animated: true },
  { name: THUMBNAIL_FORMAT.still, max_width: 840, max_height: 560, format: 'webp', animated: false },
];

export interface ImageFacts {
  /** As displayed, after the EXIF orientation. */
  width: number;
  height: number;
  frames: number;
}

/** What the bytes are, or null when they are not an image sharp can read within the limits. */
export async function probeImage(data: Buffer): Promise<ImageFacts | null> {
  try {
    const meta = await sharp(data, { limitInputPixels: IMAGE_BOMB_TOTAL_PIXELS }).metadata();
    if (!meta.width || !meta.height) return null;
    const frames = meta.pages ?? 1;
    const height = frames > 1 && meta.pageHeight ? meta.pageHeight : meta.height;
    const turned = meta.orientation !== undefined && meta.orientation >= 5;
    if (meta.width * height > IMAGE_BOMB_TOTAL_PIXELS) return null;
    return { width: turned ? height : meta.width, height: turned ? meta.width : height, frames };
  } catch {
    return null;
  }
}

/**
 * The message thumbnails of an image: the still one always, the animated one
 * for animations. Null when the pixels do not decode (a header that lied).
 */
export async function makeThumbnails(data: Buffer, facts: ImageFacts): Promise<Map<string, Buffer> | null> {
  const shrink = (animated: boolean) =>
    sharp(data, { animated, limitInputPixels: IMAGE_BOMB_TOTAL_PIXELS })
      .rotate()
      .resize(840, 560, { fit: 'inside', withoutEnlargement: true })
      .webp()
      .toBuffer();
  try {
    const out = new Map<string, Buffer>([[THUMBNAIL_FORMAT.still, await shrink(false)]]);
    if (facts.frames > 1) out.set(THUMBNAIL_FORMAT.animated, await shrink(true));
    return out;
  } catch {
    return null;
  }
}

const notAnImage = () => new ApiError('BAD_IMAGE', 'Invalid image format');
const undecodable = () => new ApiError('BAD_IMAGE', 'Could not decode image; did you upload an image file?');

/** The reference's checks for an image that must be one (avatar, icon, logo): the declared type, then the bytes. */
async function decodable(data: Buffer, contentType: string): Promise<void> {
  if (!THUMBNAIL_ACCEPT_IMAGE_TYPES.has(contentType)) throw notAnImage();
  const facts = await probeImage(data);
  if (!facts) throw undecodable();
}

async function png(work: () => Promise<Buffer>): Promise<Buffer> {
  try {
    return await work();
  } catch {
    throw undecodable();
  }
}

/** An avatar or organization icon: a square PNG, cropped at the centre (scaled up when small). */
export async function squareImages(data: Buffer, contentType: string): Promise<{ small: Buffer; medium: Buffer }> {
  await decodable(data, contentType);
  const square = (size: number) => () =>
    sharp(data, { limitInputPixels: IMAGE_BOMB_TOTAL_PIXELS }).rotate().resize(size, size, { fit: 'cover', position: 'centre' }).png().toBuffer();
  return { small: await png(square(AVATAR_SIZE)), medium: await png(square(MEDIUM_AVATAR_SIZE)) };
}

/** A wide logo: only shrunk, within 800x100, keeping its proportions. */
export async function logoImage(data: Buffer, contentType: string): Promise<Buffer> {
  await decodable(data, contentType);
  return png(() =>
    sharp(data, { limitInputPixels: IMAGE_BOMB_TOTAL_PIXELS })
      .rotate()
      .resize(8 * AVATAR_SIZE, AVATAR_SIZE, { fit: 'inside', withoutEnlargement: true })
      .png()
      .toBuffer(),
  );
}
