// Runs the whole suite: a type check, then every test file against the embedded
// PGlite database, then the database-backed files again against a real PostgreSQL
// server (DATABASE_URL, default the local `test` database). Unit tests (test/unit)
// do not touch a database and run once.
//
//   npm test                      everything
//   npm test -- test/http/users   only files whose path contains one of the arguments
//   CONFAB_TEST_DBS=pglite npm test   one backend only (pglite, postgres, cluster)
//
// `cluster` runs the files of CLUSTER_FILES again with every test server as two
// processes' servers sharing PostgreSQL and the Redis broker (BROKER_URL), the
// requests alternating between them: every domain's events across processes.

import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);

function listTests(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listTests(path));
    else if (name.endsWith('.test.ts')) out.push(path.slice(root.length));
  }
  return out.sort();
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): boolean {
  console.log(`\n$ ${[cmd, ...args].join(' ')}`);
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  return result.status === 0;
}

// The web client's own unit tests (web/test) run with the other unit tests.
const all = [...listTests(join(root, 'test')), ...listTests(join(root, 'web/test'))].filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
const isUnit = (f: string) => f.startsWith('test/unit/') || f.startsWith('web/test/');
const unit = all.filter(isUnit);
const withDb = all.filter((f) => !isUnit(f));
const backends = (process.env.CONFAB_TEST_DBS ?? 'pglite,postgres,cluster').split(',').filter(Boolean);
const CLUSTER_FILES = [
  'events',
  'messages-send',
  'reactions',
  'message-flags',
  'channels.test',
  'users.test',
  'user-groups-events',
  'message-edit.test',
  'typing',
  'presence',
  'sessions',
  'compat-names',
  'bots.test',
];
// Each file starts its own server and database, so files run in parallel processes.
const concurrency = String(Math.max(2, Math.min(6, availableParallelism() * 2)));

let ok = true;
if (filters.length === 0) ok = run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', '.']) && ok;
if (filters.length === 0) ok = run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', 'web']) && ok;
if (unit.length > 0) ok = run(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...unit]) && ok;
for (const backend of backends) {
  const cluster = backend === 'cluster';
  const files = cluster ? withDb.filter((f) => CLUSTER_FILES.some((c) => f.includes(`/${c}`)) && !f.includes('cluster')) : withDb;
  if (files.length === 0) continue;
  const env: NodeJS.ProcessEnv = { CONFAB_TEST_DB: cluster ? 'postgres' : backend };
  if (cluster) env.CONFAB_TEST_CLUSTER = '1';
  if (backend !== 'pglite') env.DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  console.log(`\n=== database-backed tests on ${backend} ===`);
  ok = run(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...files], env) && ok;
}
console.log(ok ? '\nAll test runs passed.' : '\nSome test runs FAILED.');
process.exit(ok ? 0 : 1);
