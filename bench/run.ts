// `npm run bench [-- name ...] [-- --large]`: runs every benchmark (or those named) in turn,
// on the embedded PGlite or on DATABASE_URL's server (in databases of their own); each
// prints its figures and keeps them under bench/results/. At the end, the rows of the
// goals table (issue 14) from this run, each with its bare figure and ratio.
// --large: the mixed workload steps up to 10,000 users (long).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';

const dir = new URL('.', import.meta.url).pathname;
const args = process.argv.slice(2);
const large = args.includes('--large');
const wanted = args.filter((a) => !a.startsWith('--'));
// Slow or needing more than a database (a seeded organization and a real browser; Redis):
// they run only when named: `npm run bench -- web`.
const OPT_IN = ['web.ts', 'cluster.ts'];
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && f !== 'support.ts')
  // By whole name: `messages` is not also `user-messages`.
  .filter((f) => (wanted.length === 0 ? !OPT_IN.includes(f) : wanted.some((w) => f === w || f === `${w}.ts`)))
  .sort();
// The table's sizes: register at 1,000 and at 10,000 users.
const runs: [string, string[]][] = benches.flatMap((f): [string, string[]][] => {
  if (f === 'register.ts')
    return [
      [f, []],
      [f, ['--users', '10000', '--rounds', '10']],
    ];
  if (f === 'workload.ts' && large) return [[f, ['--large']]];
  return [[f, []]];
});
const started = Date.now();
let failed = false;
for (const [file, extra] of runs) {
  console.log(`\n=== ${file} ${extra.join(' ')} ===`);
  const r = spawnSync(process.execPath, [dir + file, ...extra], { stdio: 'inherit' });
  failed ||= r.status !== 0;
}
const db = process.env.DATABASE_URL ? 'postgres' : 'pglite';
const results = `${dir}results/`;
const table = readdirSync(results)
  .filter((f) => f.includes(`-${db}`) && statSync(results + f).mtimeMs >= started)
  .sort()
  .flatMap((f) =>
    readFileSync(results + f, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('[table] ')),
  );
console.log(`\n=== the goals table, ${db} ===\n${table.map((l) => l.slice('[table] '.length)).join('\n')}`);
process.exit(failed ? 1 : 0);
