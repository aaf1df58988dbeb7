// `npm run bench [-- name ...]`: runs every benchmark (or those named) in turn;
// each prints its figures and keeps them under bench/results/.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const dir = new URL('.', import.meta.url).pathname;
const wanted = process.argv.slice(2);
// Slow ones (a seeded organization and a real browser) run only when named: `npm run bench -- web`.
const OPT_IN = ['web.ts'];
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .filter((f) => (wanted.length === 0 ? !OPT_IN.includes(f) : wanted.some((w) => f.includes(w))))
  .sort();
let failed = false;
for (const file of benches) {
  console.log(`\n=== ${file} ===`);
  const r = spawnSync(process.execPath, [dir + file], { stdio: 'inherit' });
  failed ||= r.status !== 0;
}
process.exit(failed ? 1 : 0);
