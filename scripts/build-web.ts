// Builds the web client (web/, Vite) into web/dist, which the server serves at
// `/`. Runs after `npm install` (postinstall) and, with --if-missing, before
// `npm start`, so the README's two commands give a working client. Without
// web/package.json there is nothing to build, and that is not an error.

import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const web = join(root, 'web');

if (!existsSync(join(web, 'package.json'))) {
  console.log('build-web: no web/package.json, no web client to build');
  process.exit(0);
}
if (process.argv.includes('--if-missing') && existsSync(join(web, 'dist', 'index.html'))) process.exit(0);

function npm(args: string[]): void {
  console.log(`build-web: npm ${args.join(' ')}`);
  const result = spawnSync('npm', args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`build-web: npm ${args.join(' ')} failed`);
    process.exit(result.status ?? 1);
  }
}

// The lockfile decides versions, as for the server's own dependencies.
npm(['--prefix', 'web', existsSync(join(web, 'package-lock.json')) ? 'ci' : 'install']);
npm(['--prefix', 'web', 'run', 'build']);
