// Markdown render time on a hostile corpus (issue 12): messages within
// max_message_length shaped to hit super-linear spots (bench/corpus/).
//
//   ./node_modules/.bin/node bench/markdown-hostile.ts
//
// For each shape: the slowest of a few warm renders on the calling thread, as CPU
// time (what the render costs; wall time on a shared machine adds waiting) and
// wall time, beside plain text of the same size. The goal is under 100 ms for
// every shape; the pool's 5 s deadline is only a guard.

import { availableParallelism } from 'node:os';
import { renderSync } from '../src/markdown/index.ts';
import { preloadEmoji } from '../src/markdown/emoji.ts';
import { forgetRenderedTex } from '../src/markdown/math.ts';
import { HOSTILE_CONTEXT, HOSTILE_SHAPES, plainOfSize } from './corpus/markdown-hostile.ts';

const RUNS = 5;

// One untimed render first: a shape's first render also compiles the code paths
// it reaches, which a server's warm render workers have done long before. The
// cold figure is printed too.
function measure(content: string): { cpu: number; median: number; wall: number; cold: number } {
  const c0 = process.cpuUsage();
  renderSync(content, HOSTILE_CONTEXT);
  const d0 = process.cpuUsage(c0);
  const cold = (d0.user + d0.system) / 1000;
  const cpus: number[] = [];
  let wall = 0;
  for (let i = 0; i < RUNS; i++) {
    // Formulas already rendered would come from the cache: each run starts without it.
    forgetRenderedTex();
    const c = process.cpuUsage();
    const t = performance.now();
    renderSync(content, HOSTILE_CONTEXT);
    wall = Math.max(wall, performance.now() - t);
    const d = process.cpuUsage(c);
    cpus.push((d.user + d.system) / 1000);
  }
  cpus.sort((a, b) => a - b);
  // The slowest run is the one a major collection landed in; the median is the render's own cost.
  return { cpu: cpus[RUNS - 1]!, median: cpus[Math.floor(RUNS / 2)]!, wall, cold };
}

preloadEmoji();
renderSync('warm up http://example.com :smile: 😀 $$x$$\n```python\nx = 1\n```', HOSTILE_CONTEXT);

const fmt = (ms: number) => ms.toFixed(1).padStart(8);
console.log(
  `${'shape'.padEnd(30)} ${'chars'.padStart(6)} ${'cpu ms'.padStart(8)} ${'median'.padStart(8)} ${'wall ms'.padStart(8)} ${'cold cpu'.padStart(9)} ${'plain cpu'.padStart(9)}`,
);
let slowest = { name: '', cpu: 0 };
let slowestMedian = { name: '', cpu: 0 };
for (const { name, content } of HOSTILE_SHAPES) {
  const { cpu, median, wall, cold } = measure(content);
  const plain = measure(plainOfSize(content));
  if (cpu > slowest.cpu) slowest = { name, cpu };
  if (median > slowestMedian.cpu) slowestMedian = { name, cpu: median };
  console.log(
    `${name.padEnd(30)} ${String([...content].length).padStart(6)} ${fmt(cpu)} ${fmt(median)} ${fmt(wall)} ${fmt(cold).padStart(9)} ${fmt(plain.cpu).padStart(9)}`,
  );
}
console.log(
  `slowest: ${slowest.name} ${slowest.cpu.toFixed(1)} ms CPU (goal < 100 ms); slowest median: ${slowestMedian.name} ` +
    `${slowestMedian.cpu.toFixed(1)} ms; ${HOSTILE_SHAPES.length} shapes, ${availableParallelism()} CPUs`,
);
