// manage backup / restore: a server populated through HTTP is backed up,
// restored into a fresh data directory (and fresh database), started again and
// read back through HTTP: every organization, message, reaction, emoji file and
// setting as it was. Restores refuse a server that is not empty.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer } from '../support/server.ts';
import { BackupError, createBackup, restoreBackup } from '../../src/backup/backup.ts';
import { silentProgress } from '../../src/backup/progress.ts';
import { cleanUp, ownersOn, populate, populateFiles, scratchDatabase, scratchDir, snapshot } from './ops.fixture.ts';

after(cleanUp);
const root = new URL('../..', import.meta.url).pathname;

test('a populated server survives backup and restore into an empty one', async () => {
  const dataDir = scratchDir();
  const server = await startTestServer({ dataDir });
  const populated = await populate(server);
  await populateFiles(server);
  const before = await Promise.all((await ownersOn(server, populated)).map(snapshot));
  const where = { databaseUrl: server.config.databaseUrl, dataDir, uploadsDir: undefined };
  const file = join(scratchDir(), 'server.tar.gz');
  if (where.databaseUrl) {
    // PostgreSQL is backed up while the server runs.
    await createBackup(where, file, silentProgress());
    await server.close();
  } else {
    // The embedded database belongs to its server: it is backed up once the server stopped.
    await server.close();
    await createBackup(where, file, silentProgress());
  }
  assert.ok(existsSync(file));

  const target = { databaseUrl: await scratchDatabase(), dataDir: scratchDir(), uploadsDir: undefined };
  const manifest = await restoreBackup(target, file, silentProgress());
  assert.equal(manifest.database, where.databaseUrl ? 'postgres' : 'pglite');
  const restored = await startTestServer(target);
  try {
    const after = await Promise.all((await ownersOn(restored, populated)).map(snapshot));
    assert.deepEqual(after, before);
    assert.equal(before.length, 2);
    assert.ok((before[0].messages as unknown[]).length >= 3);
    assert.equal(Object.keys(before[1].images as object).length, 1);
    // The attachment, the image and its thumbnail, the avatar and the icon came back byte for byte.
    const files = Object.keys(before[0].files as object);
    assert.equal(files.filter((f) => f.startsWith('/user_uploads/thumbnail/')).length, 1);
    assert.equal(files.filter((f) => f.startsWith('/user_uploads/') && !f.includes('thumbnail')).length, 2);
    assert.ok(
      files.some((f) => /^\/user_avatars\/\d+\/\d+/.test(f)),
      `an avatar among ${files.join(' ')}`,
    );
    assert.ok(
      files.some((f) => f.includes('/realm/icon')),
      `the icon among ${files.join(' ')}`,
    );
  } finally {
    await restored.close();
  }
  // A second restore over it is refused: the server is not empty any more.
  await assert.rejects(restoreBackup(target, file, silentProgress()), (err: Error) => err instanceof BackupError && /not empty/.test(err.message));
});

test('restore refuses what is not a backup, and a missing file', async () => {
  const dir = scratchDir();
  const junk = join(dir, 'junk.tar.gz');
  writeFileSync(junk, 'not an archive');
  const target = { databaseUrl: await scratchDatabase(), dataDir: scratchDir(), uploadsDir: undefined };
  await assert.rejects(restoreBackup(target, junk, silentProgress()), BackupError);
  await assert.rejects(restoreBackup(target, join(dir, 'missing.tar.gz'), silentProgress()), /no such file/);
});

test('npm run manage -- restore: errors said plainly, with an exit code', () => {
  const dir = scratchDir();
  const res = spawnSync(process.execPath, [join(root, 'src/cli/manage.ts'), 'restore', join(dir, 'nothing.tar.gz')], {
    env: { ...process.env, DATA_DIR: dir, DATABASE_URL: '' },
    encoding: 'utf8',
  });
  assert.equal(res.status, 1, res.stderr);
  assert.match(res.stdout, /^error: no such file/);
});
