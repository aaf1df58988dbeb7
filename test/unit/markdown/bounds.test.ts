// Bounded rendering: no input can block the server. Renders run in worker
// threads with a deadline and size limits; pathological inputs either render
// quickly or fail with a MarkdownRenderError, never hang.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { MarkdownRenderError, RenderPool, render, renderSync, topicLinks } from '../../../src/markdown/index.ts';

// A deadline that only bounds a hang: how long the catastrophic inputs below take
// is measured in CPU time (cpuMs), which a loaded machine does not stretch.
const pool = new RenderPool({ size: 2, timeoutMs: 120_000 });
after(() => pool.close());

const N = 10_000;
const CATASTROPHIC: [string, string][] = [
  ['stars', '*'.repeat(N)],
  ['unclosed emphasis', '*a **b '.repeat(N / 7)],
  ['strong runs', '**a*'.repeat(N / 4)],
  ['open brackets', '['.repeat(N)],
  ['bracket pairs', '['.repeat(N / 2) + ']'.repeat(N / 2)],
  ['link parens', '[a](' + '('.repeat(N)],
  ['link titles', '[a](b "'.repeat(N / 7)],
  ['backticks', '`'.repeat(N)],
  ['backtick pairs', '`a'.repeat(N / 2)],
  ['quote markers', '>'.repeat(N)],
  ['empty quote lines', '>\n'.repeat(N / 2) + 'x'],
  ['nested quote fences', '```quote\n'.repeat(N / 9)],
  ['code fences', '```\n'.repeat(N / 4)],
  ['nested lists', Array.from({ length: 300 }, (_, i) => ' '.repeat(i * 2) + '* x').join('\n')],
  ['dollars', '$'.repeat(N)],
  ['tex escapes', '$$a' + '\\$'.repeat(N / 2)],
  ['url parens', 'http://x.com/' + '(a'.repeat(N / 2)],
  ['url paren pairs', 'http://x.com/' + '()'.repeat(N / 4) + '!x'],
  ['domain dots', 'a.'.repeat(N / 2) + 'com'],
  ['long url', 'http://' + 'a'.repeat(N) + ' x'],
  ['emoji colons', ':a'.repeat(N / 2)],
  ['mentions', '@**'.repeat(N / 3)],
  ['channel links', '#**a>'.repeat(N / 5)],
  ['timestamps', '<time:'.repeat(N / 6)],
  ['entities', '&#'.repeat(N / 2)],
  ['table pipes', '|' + '`|'.repeat(N / 2) + '\n|-|-|\n'],
  ['whitespace runs', ' \t'.repeat(N / 2) + 'x'],
  ['hash runs', '#'.repeat(N)],
  ['unicode emoji', '👍🏽'.repeat(N / 4)],
  ['nested emphasis', '*a '.repeat(N / 5) + 'a*'.repeat(N / 5)],
  ['nested strong', '**a '.repeat(N / 7) + 'a**'.repeat(N / 7)],
  ['rules', '---\n'.repeat(N / 4)],
  ['rules between text', 'a\n---\n'.repeat(N / 6)],
  ['setext headings', 'a\n=\n'.repeat(N / 4)],
  ['quote fences around code', '````quote\n```\n'.repeat(N / 13)],
];

/** CPU milliseconds the whole process (the pool's workers included) spends until `work` settles. */
async function cpuMs(work: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

test('catastrophic-backtracking inputs finish quickly', async () => {
  await pool.render('warm up', {});
  const context = { linkifiers: [{ id: 1, pattern: '(a+)+$', url_template: 'https://x.example/{a}' }] };
  let total = 0;
  for (const [name, input] of CATASTROPHIC) {
    const ms = await cpuMs(async () => {
      try {
        await pool.render(input, context);
      } catch (err) {
        // Refusing (too deep, too large) is fine; a timeout or crash is not.
        assert.ok(err instanceof MarkdownRenderError, `${name}: unexpected ${String(err)}`);
        assert.equal(err.reason, 'too_large', `${name}: ${err.message}`);
      }
    });
    // Typically under 100 ms, well within the server's 5 s deadline without needing it.
    assert.ok(ms < 2500, `${name} took ${ms} ms of CPU`);
    total += ms;
  }
  assert.ok(total < 20_000, `all took ${total} ms of CPU`);
});

test('inline markup nested too deep for the stack is refused as too large', () => {
  assert.throws(() => renderSync('*a '.repeat(5000) + 'a*'.repeat(5000), {}, 50_000), { name: 'MarkdownRenderError', reason: 'too_large' });
});

test('a render that overruns its deadline is stopped and the pool recovers', async () => {
  const slowPool = new RenderPool({ size: 1, timeoutMs: 5 });
  try {
    // Tens of thousands of unknown-emoji candidates take about 150 ms of CPU, far longer than 5 ms.
    await assert.rejects(slowPool.render(':a'.repeat(45_000), {}), (err: unknown) => {
      assert.ok(err instanceof MarkdownRenderError);
      assert.equal(err.reason, 'timeout');
      return true;
    });
    // The fresh worker's render must not meet a short deadline by chance on a loaded machine.
    slowPool.timeoutMs = 60_000;
    const ok = await slowPool.render('still **working**', {});
    assert.equal(ok.html, '<p>still <strong>working</strong></p>');
  } finally {
    await slowPool.close();
  }
});

test('oversized input and output are refused; fallback gives escaped text', async () => {
  const small = new RenderPool({ size: 1, maxInputLength: 100, maxOutputLength: 200 });
  try {
    await assert.rejects(small.render('x'.repeat(101), {}), { name: 'MarkdownRenderError', reason: 'too_large' });
    await assert.rejects(small.render(':smile: '.repeat(12), {}), { name: 'MarkdownRenderError', reason: 'too_large' });
    const fallback = await render('<b>x</b>\n\n' + 'y'.repeat(200), {}, { pool: small, fallback: true });
    assert.equal(fallback.html, `<p>&lt;b&gt;x&lt;/b&gt;</p>\n<p>${'y'.repeat(200)}</p>`);
  } finally {
    await small.close();
  }
  assert.throws(() => renderSync('x'.repeat(11), {}, 10), { reason: 'too_large' });
});

test('deep nesting is refused rather than overflowing the stack', () => {
  assert.throws(() => renderSync('>'.repeat(5000) + ' x', {}), { name: 'MarkdownRenderError', reason: 'too_large' });
  assert.equal(renderSync('>>> x', {}).html, '<blockquote>\n<blockquote>\n<blockquote>\n<p>x</p>\n</blockquote>\n</blockquote>\n</blockquote>');
});

test('linkifier patterns run in linear time; invalid ones are ignored', () => {
  const evil = [
    { id: 1, pattern: '(a+)+$', url_template: 'https://x.example/{a}' },
    { id: 2, pattern: '(a|aa)+b', url_template: 'https://x.example/' },
    { id: 3, pattern: '(?P<x>a)\\1', url_template: 'https://x.example/{x}' },
    { id: 4, pattern: '(?=a)', url_template: 'https://x.example/' },
    { id: 5, pattern: '', url_template: 'https://x.example/' },
  ];
  const input = 'a'.repeat(50_000) + '!';
  // About 20 ms of CPU; a backtracking pattern would take minutes.
  const before = process.threadCpuUsage();
  renderSync(input, { linkifiers: evil });
  topicLinks(input, evil);
  const used = process.threadCpuUsage(before);
  const ms = (used.user + used.system) / 1000;
  assert.ok(ms < 5000, `took ${ms} ms of CPU`);
});

test('idle workers do not keep the process alive', () => {
  const script = `
    import { render } from ${JSON.stringify(fileURLToPath(new URL('../../../src/markdown/index.ts', import.meta.url)))};
    const r = await render('hello *world*', {});
    console.log(r.html);
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 90_000, encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout.trim(), '<p>hello <em>world</em></p>');
});

test('a closed pool refuses work', async () => {
  const p = new RenderPool({ size: 1 });
  await p.render('x', {});
  await p.close();
  await assert.rejects(p.render('x', {}), { reason: 'closed' });
});
