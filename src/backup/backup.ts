// `manage backup FILE` and `manage restore FILE`: the whole server, every
// organization, in one gzipped tar archive:
//
//   manifest.json          format, version, which database, when
//   database/pglite.tgz    PGlite's own data-directory dump (embedded database), or
//   database/postgres.dump pg_dump's custom format (PostgreSQL; restored by pg_restore)
//   uploads/...            the uploads directory as it is on disk: message files and their
//                          thumbnails, avatars, organization icons and logos, custom emoji,
//                          data exports (UPLOADS_DIR, wherever it is)
//
// PostgreSQL is dumped online in one consistent snapshot; PGlite's files belong
// to one process, so its server must be stopped first (the data-directory lock
// says so). A restore goes only into an empty server: no tables, no uploads.

import { spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, openAsBlob, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { cp, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql } from 'kysely';
import * as tar from 'tar';
import { PGlite } from '@electric-sql/pglite';
import type { Config } from '../config.ts';
import { openDatabase } from '../db/index.ts';
import { lockDataDir } from '../db/lock.ts';
import { uploadsRoot } from '../uploads/storage.ts';
import { SVC_VERSION } from '../version.ts';
import type { Progress } from './progress.ts';

export const BACKUP_FORMAT = 'confab-backup';
export const BACKUP_VERSION = 1;

interface Manifest {
  format: typeof BACKUP_FORMAT;
  version: number;
  database: 'pglite' | 'postgres';
  created_at: string;
  svc_version: string;
}

/** What an operator did wrong: said plainly, no stack. */
export class BackupError extends Error {}

type Where = Pick<Config, 'databaseUrl' | 'dataDir' | 'uploadsDir'>;

export async function createBackup(config: Where, file: string, progress: Progress): Promise<{ files: number; bytes: number }> {
  if (config.dataDir === ':memory:' && !config.databaseUrl) throw new BackupError('an in-memory server has nothing to back up');
  const target = resolve(file);
  const staging = mkdtempSync(join(dirname(target), '.confab-backup-'));
  try {
    const manifest: Manifest = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      database: config.databaseUrl ? 'postgres' : 'pglite',
      created_at: new Date().toISOString(),
      svc_version: SVC_VERSION,
    };
    writeFileSync(join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2));
    mkdirSync(join(staging, 'database'));
    progress.stage('database', 1, 'dump');
    if (config.databaseUrl)
      await run('pg_dump', [
        '--format=custom',
        '--no-owner',
        '--no-privileges',
        `--file=${join(staging, 'database', 'postgres.dump')}`,
        `--dbname=${config.databaseUrl}`,
      ]);
    else await dumpPglite(config.dataDir, join(staging, 'database', 'pglite.tgz'));
    progress.advance(1);
    const entries = ['manifest.json', 'database'];
    const uploads = uploadsRoot(config);
    if (existsSync(uploads)) {
      // Packed through a link so that the archive names them uploads/..., wherever they live.
      symlinkSync(uploads, join(staging, 'uploads'), 'dir');
      entries.push('uploads');
    }
    const { files, bytes } = measure(staging, entries);
    progress.stage('archive', bytes);
    const partial = `${target}.partial`;
    await tar.create(
      {
        gzip: true,
        file: partial,
        cwd: staging,
        follow: true,
        portable: true,
        onWriteEntry: (entry) => entry.on('end', () => progress.advance(entry.stat?.size ?? 0)),
      },
      entries,
    );
    await rename(partial, target);
    progress.done();
    return { files, bytes };
  } finally {
    progress.done();
    rmSync(staging, { recursive: true, force: true });
  }
}

export async function restoreBackup(config: Where, file: string, progress: Progress): Promise<Manifest> {
  const source = resolve(file);
  if (!existsSync(source)) throw new BackupError(`no such file: ${file}`);
  if (config.dataDir === ':memory:') throw new BackupError('set DATA_DIR: a restore needs a place to keep the files');
  mkdirSync(config.dataDir, { recursive: true });
  // Unpacked beside the data, so moving the uploads into place is a rename.
  const staging = mkdtempSync(join(config.dataDir, '.confab-restore-'));
  try {
    progress.stage('unpack', statSync(source).size);
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        progress.advance(chunk.length);
        done(null, chunk);
      },
    });
    await pipeline(createReadStream(source), counter, tar.x({ cwd: staging, strict: true })).catch((err: Error) => {
      throw new BackupError(`${file} is not a Confab backup archive (${err.message})`);
    });
    const manifest = await readManifest(staging);
    const kind = config.databaseUrl ? 'postgres' : 'pglite';
    if (manifest.database !== kind) {
      throw new BackupError(
        `this backup holds a ${manifest.database === 'pglite' ? 'PGlite' : 'PostgreSQL'} database; restore it with DATABASE_URL ${manifest.database === 'pglite' ? 'unset' : 'set'}`,
      );
    }
    const uploads = uploadsRoot(config);
    if (existsSync(uploads) && readdirSync(uploads).length > 0) throw new BackupError(`${uploads} is not empty: restore into an empty server`);
    progress.stage('database', 1, 'dump');
    if (config.databaseUrl) await restorePostgres(config.databaseUrl, join(staging, 'database', 'postgres.dump'));
    else await restorePglite(config.dataDir, join(staging, 'database', 'pglite.tgz'));
    progress.advance(1);
    if (existsSync(join(staging, 'uploads'))) await moveInto(join(staging, 'uploads'), uploads);
    return manifest;
  } finally {
    progress.done();
    rmSync(staging, { recursive: true, force: true });
  }
}

async function readManifest(dir: string): Promise<Manifest> {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Manifest;
  } catch {
    throw new BackupError('the archive has no manifest.json: not a Confab backup');
  }
  if (manifest.format !== BACKUP_FORMAT) throw new BackupError('not a Confab backup archive');
  if (manifest.version > BACKUP_VERSION) throw new BackupError(`backup format ${manifest.version} is newer than this server reads (${BACKUP_VERSION})`);
  return manifest;
}

async function dumpPglite(dataDir: string, out: string): Promise<void> {
  const location = join(dataDir, 'pglite');
  if (!existsSync(location)) throw new BackupError(`no database in ${dataDir}`);
  const unlock = lockDataDir(dataDir);
  try {
    const pg = await PGlite.create(location);
    try {
      const dump = await pg.dumpDataDir('gzip');
      await writeFile(out, Buffer.from(await dump.arrayBuffer()));
    } finally {
      await pg.close();
    }
  } finally {
    unlock();
  }
}

async function restorePglite(dataDir: string, dump: string): Promise<void> {
  const location = join(dataDir, 'pglite');
  if (existsSync(location) && readdirSync(location).length > 0) throw new BackupError(`${location} is not empty: restore into an empty server`);
  const unlock = lockDataDir(dataDir);
  try {
    mkdirSync(location, { recursive: true });
    const pg = await PGlite.create(location, { loadDataDir: await openAsBlob(dump) });
    await pg.close();
  } finally {
    unlock();
  }
}

async function restorePostgres(databaseUrl: string, dump: string): Promise<void> {
  const database = await openDatabase({ databaseUrl, dataDir: ':memory:', poolSize: 1 });
  try {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from information_schema.tables where table_schema = 'public'`.execute(database.db);
    if (rows[0].n > 0) throw new BackupError('the database is not empty: restore into an empty database');
  } finally {
    await database.close();
  }
  await run('pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', `--dbname=${databaseUrl}`, dump]);
}

/** Moves a directory's contents to `to` (a rename where it can, a copy across file systems). */
async function moveInto(from: string, to: string): Promise<void> {
  mkdirSync(dirname(to), { recursive: true });
  rmSync(to, { recursive: true, force: true });
  try {
    await rename(from, to);
  } catch {
    await cp(from, to, { recursive: true });
  }
}

/** Files and bytes under the given entries of `dir` (links followed, as tar will). */
function measure(dir: string, entries: string[]): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const walk = (path: string) => {
    const st = statSync(path);
    if (st.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
    else {
      files++;
      bytes += st.size;
    }
  };
  for (const e of entries) walk(join(dir, e));
  return { files, bytes };
}

/** Runs one of PostgreSQL's tools; its complaint becomes the error. */
function run(command: string, args: string[]): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => fail(new BackupError(`${command} could not run (${err.message}); install PostgreSQL's client tools`)));
    child.on('close', (code) => (code === 0 ? done() : fail(new BackupError(`${command} failed: ${stderr.trim()}`))));
  });
}
