// THE storage of uploaded bytes (message attachments, their thumbnails,
// avatars, organization icons and logos, custom emoji), addressed by key
// ("files/2/ab/<random>/x.png", "emoji/2/12-<random>.png"). One small interface,
// so an object store can stand in for the local directory.

import { createReadStream, mkdtempSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Config } from '../config.ts';

export interface FileStorage {
  /** Stores the whole value: readers see the old bytes or the new, never part. */
  put(key: string, data: Buffer): Promise<void>;
  /** The bytes, or null when nothing is stored under the key. */
  get(key: string): Promise<Buffer | null>;
  /** A stream of the bytes and their size, or null. */
  stream(key: string): Promise<{ body: Readable; size: number } | null>;
  /** Removes the key (and, for a prefix ending in '/', everything under it); absent keys are no error. */
  delete(key: string): Promise<void>;
}

let scratchUploads: string | undefined;

/** UPLOADS_DIR, else `<DATA_DIR>/uploads`, else (an in-memory server) a temporary directory for the process's life. */
export function uploadsRoot(config: Pick<Config, 'uploadsDir' | 'dataDir'>): string {
  if (config.uploadsDir) return config.uploadsDir;
  if (config.dataDir !== ':memory:') return join(config.dataDir, 'uploads');
  scratchUploads ??= mkdtempSync(join(tmpdir(), 'confab-uploads-'));
  return scratchUploads;
}

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'EISDIR';

/** Keys as files under one directory. */
export function localFileStorage(root: string): FileStorage {
  const base = resolve(root);
  const pathOf = (key: string) => {
    const path = resolve(base, key);
    // Keys come from our own code, but parts of them from URLs: none may leave the directory.
    if (key === '' || key.includes('\0') || !path.startsWith(base + sep)) throw new Error(`invalid storage key ${JSON.stringify(key)}`);
    return path;
  };
  return {
    async put(key, data) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      const partial = `${path}.${randomBytes(6).toString('hex')}.partial`;
      try {
        await writeFile(partial, data);
        await rename(partial, path);
      } catch (err) {
        await rm(partial, { force: true });
        throw err;
      }
    },
    async get(key) {
      try {
        return await readFile(pathOf(key));
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },
    async stream(key) {
      const path = pathOf(key);
      try {
        const info = await stat(path);
        if (!info.isFile()) return null;
        return { body: createReadStream(path), size: info.size };
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },
    async delete(key) {
      await rm(pathOf(key), { force: true, recursive: key.endsWith('/') });
    },
  };
}
