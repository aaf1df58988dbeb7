// Where emoji images live on disk: `<uploads>/emoji/<realm_id>/<file>` with
// `<uploads>` = UPLOADS_DIR, else `<DATA_DIR>/uploads`, else (an in-memory
// server) a temporary directory that lives as long as the process.

import { mkdtempSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';

let scratchUploads: string | undefined;

export function uploadsRoot(config: Pick<Config, 'uploadsDir' | 'dataDir'>): string {
  if (config.uploadsDir) return config.uploadsDir;
  if (config.dataDir !== ':memory:') return join(config.dataDir, 'uploads');
  scratchUploads ??= mkdtempSync(join(tmpdir(), 'confab-uploads-'));
  return scratchUploads;
}

/** A file's path; `file` is a `file_name` or `still_file_name` (checked by callers that take it from a URL). */
export function emojiPath(config: Pick<Config, 'uploadsDir' | 'dataDir'>, realmId: number, file: string): string {
  return join(uploadsRoot(config), 'emoji', String(realmId), file);
}

/** Writes the whole file under a temporary name first, so no reader ever sees half of it. */
/** Removes a file no row refers to (a failed upload); a missing file is fine. */
export async function removeEmojiFile(config: Pick<Config, 'uploadsDir' | 'dataDir'>, realmId: number, file: string): Promise<void> {
  await rm(emojiPath(config, realmId, file), { force: true });
}

export async function writeEmojiFile(config: Pick<Config, 'uploadsDir' | 'dataDir'>, realmId: number, file: string, data: Buffer): Promise<void> {
  const path = emojiPath(config, realmId, file);
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.${randomBytes(6).toString('hex')}.partial`;
  await writeFile(partial, data);
  await rename(partial, path);
}
