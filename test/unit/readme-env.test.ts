// The README's environment table names every variable the server reads, so an
// operator never has to read the source to find a setting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

test('every environment variable src/ reads is in the README table', () => {
  const read = new Set<string>();
  for (const file of sources(join(root, 'src'))) {
    for (const m of readFileSync(file, 'utf8').matchAll(/\benv\.([A-Z][A-Z0-9_]+)|\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g)) read.add(m[1] ?? m[2]);
  }
  assert.ok(read.has('DATABASE_URL') && read.size > 20, 'the scan finds the variables');
  const table = readFileSync(join(root, 'README.md'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .join('\n');
  const missing = [...read].filter((name) => !table.includes(`\`${name}\``)).sort();
  assert.deepEqual(missing, []);
});
