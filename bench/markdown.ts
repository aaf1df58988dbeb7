// Markdown render throughput on a realistic mix of chat messages.
//
//   ./node_modules/.bin/node bench/markdown.ts [messages]
//
// Prints messages/second and p50/p99 latency per message, first on the calling
// thread (the renderer's own cost), then through the worker pool that the
// server uses (adds message passing, runs renders in parallel).

import { availableParallelism } from 'node:os';
import { RenderPool, renderSync, type RenderContext } from '../src/markdown/index.ts';

const context: RenderContext = {
  users: Array.from({ length: 50 }, (_, i) => ({ id: i + 1, full_name: `User Number${i + 1}` })),
  groups: [
    { id: 1, name: 'backend' },
    { id: 2, name: 'design' },
  ],
  channels: [
    { id: 1, name: 'general' },
    { id: 2, name: 'engineering' },
  ],
  topics: [{ channel_id: 2, topic: 'deploys', latest_message_id: 4242 }],
  linkifiers: [{ id: 1, pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/issues/{id}' }],
  custom_emoji: [{ id: 1, name: 'shipit', source_url: '/user_avatars/1/emoji/images/1.png' }],
  server_url: 'https://chat.example.com',
};

// Weighted roughly like a team chat: mostly short plain text.
const MIX: [number, string][] = [
  [30, 'sounds good, thanks!'],
  [15, 'I pushed the fix to the branch, can you take another look when you get a chance?'],
  [8, '@**User Number3** can you review this? cc @*backend*'],
  [5, '@_**User Number7** said it was fine :thumbs_up: :shipit:'],
  [6, 'See https://github.com/example/repo/pull/1234 and #4521 for the details.'],
  [5, 'Docs are at [the wiki](https://wiki.example.com/page) and in #**engineering>deploys**'],
  [6, 'haha 😂 that is great :tada: :smile:'],
  [
    6,
    '```python\ndef handler(request):\n    user = request.user\n    if not user.is_active:\n        raise PermissionDenied()\n    return render(request, "page.html", {"user": user})\n```',
  ],
  [3, '```\n$ npm test\n> 42 passing (3s)\n```\nall green now'],
  [5, '> the deploy failed at step 3\n\nthat was the migration, I reran it'],
  [3, 'Meeting notes:\n* agreed on the API shape\n* **Alice** writes the spec\n* ship by <time:2025-03-01T17:00:00Z>\n\n1. first\n2. second'],
  [2, 'The complexity is $$O(n \\log n)$$ in the worst case.'],
  [1, '```math\n\\int_0^\\infty e^{-x^2} dx = \\frac{\\sqrt{\\pi}}{2}\n```'],
  [2, '| service | status |\n|---|---|\n| api | ok |\n| db | **degraded** |'],
  [3, '```spoiler Answer\nIt was the cache all along.\n```'],
];

function buildMessages(n: number): string[] {
  const pool: string[] = [];
  for (const [weight, msg] of MIX) for (let i = 0; i < weight; i++) pool.push(msg);
  return Array.from({ length: n }, (_, i) => pool[(i * 7919) % pool.length]!);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function report(label: string, latencies: number[], totalMs: number): void {
  const sorted = latencies.slice().sort((a, b) => a - b);
  const rate = (latencies.length / totalMs) * 1000;
  console.log(
    `${label.padEnd(26)} ${rate.toFixed(0).padStart(7)} msg/s   p50 ${percentile(sorted, 50).toFixed(3)} ms   p99 ${percentile(sorted, 99).toFixed(3)} ms`,
  );
}

const count = Number(process.argv[2] ?? 5000);
const messages = buildMessages(count);

// Warm up lazily built state (emoji data, link regex, highlighter, KaTeX).
for (const m of messages.slice(0, 200)) renderSync(m, context);

{
  const latencies: number[] = [];
  const start = performance.now();
  for (const m of messages) {
    const t = performance.now();
    renderSync(m, context);
    latencies.push(performance.now() - t);
  }
  report('in-thread (renderSync)', latencies, performance.now() - start);
}

{
  const size = Math.min(4, Math.max(1, availableParallelism() - 1));
  const pool = new RenderPool({ size });
  await Promise.all(Array.from({ length: size * 4 }, () => pool.render('warm up', context)));
  const latencies: number[] = [];
  const start = performance.now();
  let next = 0;
  // Keep a few renders in flight per worker, as a busy server would.
  await Promise.all(
    Array.from({ length: size * 4 }, async () => {
      while (next < messages.length) {
        const m = messages[next++]!;
        const t = performance.now();
        await pool.render(m, context);
        latencies.push(performance.now() - t);
      }
    }),
  );
  report(`worker pool (${size} thread${size > 1 ? 's' : ''})`, latencies, performance.now() - start);
  await pool.close();
}

console.log(`${count} messages, ${MIX.length} message kinds, ${availableParallelism()} CPUs`);
