// What an uploaded emoji image is, read from its bytes (the declared type is
// not trusted), and the still of an animated one. No image library: only the
// container formats are read (PNG chunks, GIF blocks, RIFF chunks, JPEG
// markers); pixels are never decoded, so a still is the first frame's own
// bytes in a new container of the same format.

export type ImageFormat = 'png' | 'gif' | 'jpeg' | 'webp';

export const IMAGE_TYPES: Record<ImageFormat, { mime: string; ext: string }> = {
  png: { mime: 'image/png', ext: 'png' },
  gif: { mime: 'image/gif', ext: 'gif' },
  jpeg: { mime: 'image/jpeg', ext: 'jpg' },
  webp: { mime: 'image/webp', ext: 'webp' },
};

export interface ImageInfo {
  format: ImageFormat;
  width: number;
  height: number;
  animated: boolean;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The format, size and animation of an image, or null when the bytes are not a complete PNG/GIF/JPEG/WebP header. */
export function inspectImage(data: Buffer): ImageInfo | null {
  try {
    if (data.subarray(0, 8).equals(PNG_SIGNATURE)) return inspectPng(data);
    const gif = data.toString('latin1', 0, 6);
    if (gif === 'GIF87a' || gif === 'GIF89a') return inspectGif(data);
    if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return inspectJpeg(data);
    if (data.toString('latin1', 0, 4) === 'RIFF' && data.toString('latin1', 8, 12) === 'WEBP') return inspectWebp(data);
  } catch {
    // A header cut short: not an image we can use.
  }
  return null;
}

/** A still (first frame) of an animated image, in the same format; null if it cannot be cut out. */
export function stillImage(data: Buffer, format: ImageFormat): Buffer | null {
  try {
    if (format === 'png') return pngStill(data);
    if (format === 'gif') return gifStill(data);
    if (format === 'webp') return webpStill(data);
  } catch {
    // malformed: no still
  }
  return null;
}

// --- PNG: chunks of length, type, data, CRC; APNG adds acTL before IDAT. ---

interface PngChunk {
  type: string;
  start: number;
  end: number;
}

function pngChunks(data: Buffer): PngChunk[] {
  const chunks: PngChunk[] = [];
  let pos = 8;
  while (pos + 12 <= data.length) {
    const length = data.readUInt32BE(pos);
    const end = pos + 12 + length;
    if (end > data.length) throw new RangeError('truncated PNG chunk');
    const type = data.toString('latin1', pos + 4, pos + 8);
    chunks.push({ type, start: pos, end });
    pos = end;
    if (type === 'IEND') break;
  }
  return chunks;
}

function inspectPng(data: Buffer): ImageInfo | null {
  const chunks = pngChunks(data);
  if (chunks[0]?.type !== 'IHDR' || !chunks.some((c) => c.type === 'IDAT')) return null;
  const firstData = chunks.findIndex((c) => c.type === 'IDAT');
  const animated = chunks.slice(0, firstData).some((c) => c.type === 'acTL');
  return { format: 'png', width: data.readUInt32BE(16), height: data.readUInt32BE(20), animated };
}

// The default image (IDAT) is the still; the animation's own chunks go.
const APNG_CHUNKS = new Set(['acTL', 'fcTL', 'fdAT']);

function pngStill(data: Buffer): Buffer {
  const kept = pngChunks(data).filter((c) => !APNG_CHUNKS.has(c.type));
  return Buffer.concat([PNG_SIGNATURE, ...kept.map((c) => data.subarray(c.start, c.end))]);
}

// --- GIF: header, screen descriptor (+ global colour table), then blocks. ---

interface GifLayout {
  /** End of the header, screen descriptor and global colour table. */
  headerEnd: number;
  /** Each frame: from its first extension (graphic control) to the end of its image data. */
  frames: { start: number; end: number }[];
}

function skipSubBlocks(data: Buffer, pos: number): number {
  for (;;) {
    const size = data[pos];
    if (size === undefined) throw new RangeError('truncated GIF');
    pos += 1 + size;
    if (size === 0) return pos;
  }
}

function gifLayout(data: Buffer): GifLayout {
  const packed = data[10]!;
  let pos = 13 + (packed & 0x80 ? 3 * 2 ** ((packed & 7) + 1) : 0);
  const headerEnd = pos;
  const frames: GifLayout['frames'] = [];
  let frameStart = pos;
  for (;;) {
    const block = data[pos];
    if (block === undefined) throw new RangeError('truncated GIF');
    if (block === 0x3b) break;
    if (block === 0x21) {
      const label = data[pos + 1];
      const next = skipSubBlocks(data, pos + 2);
      // Application extensions (the loop count) belong to no frame.
      if (label === 0xff) frameStart = next;
      pos = next;
    } else if (block === 0x2c) {
      const local = data[pos + 9]!;
      pos += 10 + (local & 0x80 ? 3 * 2 ** ((local & 7) + 1) : 0);
      pos = skipSubBlocks(data, pos + 1);
      frames.push({ start: frameStart, end: pos });
      frameStart = pos;
    } else {
      throw new RangeError('unknown GIF block');
    }
  }
  return { headerEnd, frames };
}

function inspectGif(data: Buffer): ImageInfo | null {
  const { frames } = gifLayout(data);
  if (frames.length === 0) return null;
  return { format: 'gif', width: data.readUInt16LE(6), height: data.readUInt16LE(8), animated: frames.length > 1 };
}

function gifStill(data: Buffer): Buffer {
  const { headerEnd, frames } = gifLayout(data);
  const first = frames[0]!;
  return Buffer.concat([data.subarray(0, headerEnd), data.subarray(first.start, first.end), Buffer.from([0x3b])]);
}

// --- JPEG: markers up to the first start-of-frame, which has the size. ---

function inspectJpeg(data: Buffer): ImageInfo | null {
  let pos = 2;
  while (pos + 4 <= data.length) {
    if (data[pos] !== 0xff) return null;
    const marker = data[pos + 1]!;
    if (marker === 0xff) {
      pos += 1;
      continue;
    }
    const length = data.readUInt16BE(pos + 2);
    // SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { format: 'jpeg', height: data.readUInt16BE(pos + 5), width: data.readUInt16BE(pos + 7), animated: false };
    }
    pos += 2 + length;
  }
  return null;
}

// --- WebP: RIFF chunks; VP8X has the canvas and the animation flag, ANMF the frames. ---

interface RiffChunk {
  type: string;
  start: number;
  /** Where the payload starts and ends (the padding byte excluded). */
  body: number;
  bodyEnd: number;
  end: number;
}

function riffChunks(data: Buffer, from: number, to: number): RiffChunk[] {
  const chunks: RiffChunk[] = [];
  let pos = from;
  while (pos + 8 <= to) {
    const size = data.readUInt32LE(pos + 4);
    const bodyEnd = pos + 8 + size;
    if (bodyEnd > to) throw new RangeError('truncated RIFF chunk');
    const end = Math.min(bodyEnd + (size & 1), to);
    chunks.push({ type: data.toString('latin1', pos, pos + 4), start: pos, body: pos + 8, bodyEnd, end });
    pos = end;
  }
  return chunks;
}

const readUInt24LE = (data: Buffer, pos: number) => data[pos]! | (data[pos + 1]! << 8) | (data[pos + 2]! << 16);

function inspectWebp(data: Buffer): ImageInfo | null {
  const chunks = riffChunks(data, 12, Math.min(data.length, 8 + data.readUInt32LE(4)));
  const first = chunks[0];
  if (!first) return null;
  const b = first.body;
  if (first.type === 'VP8X') {
    const animated = (data[b]! & 0x02) !== 0;
    const hasImage = animated ? chunks.some((c) => c.type === 'ANMF') : chunks.some((c) => c.type === 'VP8 ' || c.type === 'VP8L');
    if (!hasImage) return null;
    return { format: 'webp', width: readUInt24LE(data, b + 4) + 1, height: readUInt24LE(data, b + 7) + 1, animated };
  }
  if (first.type === 'VP8 ') {
    // Key frame header: 3 bytes of frame tag, the start code 9d 01 2a, then 14-bit sizes.
    if (data[b + 3] !== 0x9d || data[b + 4] !== 0x01 || data[b + 5] !== 0x2a) return null;
    return { format: 'webp', width: data.readUInt16LE(b + 6) & 0x3fff, height: data.readUInt16LE(b + 8) & 0x3fff, animated: false };
  }
  if (first.type === 'VP8L') {
    if (data[b] !== 0x2f) return null;
    const bits = data.readUInt32LE(b + 1);
    return { format: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1, animated: false };
  }
  return null;
}

function riffChunk(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.write(type, 0, 'latin1');
  header.writeUInt32LE(body.length, 4);
  return Buffer.concat([header, body, body.length & 1 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

/** The first frame as a still WebP of the frame's size (its offset on the canvas is dropped). */
function webpStill(data: Buffer): Buffer | null {
  const chunks = riffChunks(data, 12, Math.min(data.length, 8 + data.readUInt32LE(4)));
  const vp8x = chunks.find((c) => c.type === 'VP8X');
  const frame = chunks.find((c) => c.type === 'ANMF');
  if (!vp8x || !frame) return null;
  const f = frame.body;
  const width = readUInt24LE(data, f + 6) + 1;
  const height = readUInt24LE(data, f + 9) + 1;
  const inner = riffChunks(data, f + 16, frame.bodyEnd).filter((c) => c.type === 'ALPH' || c.type === 'VP8 ' || c.type === 'VP8L');
  if (!inner.some((c) => c.type === 'VP8 ' || c.type === 'VP8L')) return null;
  const iccp = chunks.find((c) => c.type === 'ICCP');
  const header = Buffer.alloc(10);
  // Keep the ICC and alpha flags; animation, EXIF and XMP go.
  header[0] = data[vp8x.body]! & (0x20 | 0x10) & (iccp ? 0xff : ~0x20);
  header.writeUIntLE(width - 1, 4, 3);
  header.writeUIntLE(height - 1, 7, 3);
  const body = Buffer.concat([
    Buffer.from('WEBP', 'latin1'),
    riffChunk('VP8X', header),
    ...(iccp ? [data.subarray(iccp.start, iccp.end)] : []),
    ...inner.map((c) => data.subarray(c.start, c.end)),
  ]);
  const riff = Buffer.from('RIFF\0\0\0\0', 'latin1');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}
