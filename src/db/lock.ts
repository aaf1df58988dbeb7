// PGlite's files may be used by one process at a time. The server holds a lock
// file in the data directory while it runs; the manage command refuses to open
// the directory under a live server.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const lockPath = (dataDir: string) => join(dataDir, 'confab.pid');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function assertDataDirFree(dataDir: string): void {
  if (dataDir === ':memory:') return;
  let pid: number;
  try {
    pid = Number(readFileSync(lockPath(dataDir), 'utf8'));
  } catch {
    return;
  }
  if (pid !== process.pid && alive(pid)) {
    throw new Error(`the server (pid ${pid}) is using ${dataDir}; stop it first, or use DATABASE_URL`);
  }
}

/** Takes the data directory for this process; returns the release function. */
export function lockDataDir(dataDir: string): () => void {
  if (dataDir === ':memory:') return () => {};
  assertDataDirFree(dataDir);
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(lockPath(dataDir), String(process.pid));
  return () => rmSync(lockPath(dataDir), { force: true });
}
