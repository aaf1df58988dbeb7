// A hostile Markdown corpus: messages within max_message_length (10,000
// characters) shaped to hit super-linear spots of a Markdown renderer. Used by
// bench/markdown-hostile.ts (timings) and test/unit/markdown/hostile-time.test.ts
// (each renders, none cut off by the deadline).

import type { RenderContext } from '../../src/markdown/index.ts';

export const MAX_MESSAGE_LENGTH = 10_000;

/** Repeats `unit` until the next copy would pass `max` code points. */
function fill(unit: string, max = MAX_MESSAGE_LENGTH): string {
  const n = Math.floor(max / [...unit].length);
  return unit.repeat(n);
}

function runsUpTo(n: number, make: (i: number) => string, sep = ' '): string {
  return Array.from({ length: n }, (_, i) => make(i + 1)).join(sep);
}

const users = Array.from({ length: 500 }, (_, i) => ({ id: i + 1, full_name: `User Number${i + 1}` }));

/** An organization with many users, linkifiers (some with pathological patterns) and custom emoji. */
export const HOSTILE_CONTEXT: RenderContext = {
  users,
  groups: [
    { id: 1, name: 'backend' },
    { id: 2, name: 'design' },
  ],
  channels: [
    { id: 1, name: 'general' },
    { id: 2, name: 'engineering' },
  ],
  topics: [{ channel_id: 2, topic: 'deploys', latest_message_id: 4242 }],
  linkifiers: [
    { id: 1, pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/issues/{id}' },
    { id: 2, pattern: '(?P<a>(a+)+)b', url_template: 'https://x.example.com/{a}' },
    { id: 3, pattern: '(?P<a>(a|aa)+)c', url_template: 'https://x.example.com/{a}' },
    { id: 4, pattern: '(?P<x>[a-z]*)*z', url_template: 'https://x.example.com/{x}' },
    { id: 5, pattern: '(?P<w>\\w)', url_template: 'https://x.example.com/{w}' },
  ],
  custom_emoji: Array.from({ length: 50 }, (_, i) => ({ id: i + 1, name: `custom${i}`, source_url: `/user_avatars/1/emoji/${i}.png` })),
  server_url: 'https://chat.example.com',
};

export interface HostileShape {
  name: string;
  content: string;
}

export const HOSTILE_SHAPES: HostileShape[] = [
  { name: '5000 x 😀', content: '😀'.repeat(5000) },
  { name: '😀 with spaces', content: fill('😀 ') },
  { name: 'mixed emoji', content: fill('👍🏽🇫🇷👨‍👩‍👧') },
  { name: 'backtick runs 1..139', content: runsUpTo(139, (i) => '`'.repeat(i)) },
  { name: 'backtick runs 1..139 + text', content: runsUpTo(138, (i) => '`'.repeat(i) + 'a', '') },
  { name: 'backtick runs 139..1', content: runsUpTo(139, (i) => '`'.repeat(140 - i)) },
  { name: 'backtick runs on lines', content: runsUpTo(139, (i) => '`'.repeat(i), '\n') },
  { name: 'tilde runs 1..139', content: runsUpTo(139, (i) => '~'.repeat(i), '\n') },
  { name: 'asterisk runs 1..139', content: runsUpTo(139, (i) => '*'.repeat(i)) },
  { name: 'underscore runs 1..139', content: runsUpTo(139, (i) => '_'.repeat(i)) },
  { name: 'dollar runs 1..139', content: runsUpTo(139, (i) => '$'.repeat(i)) },
  { name: 'bracket runs 1..139', content: runsUpTo(139, (i) => '['.repeat(i) + ']'.repeat(i)) },
  { name: 'nested lists (99 deep)', content: runsUpTo(99, (i) => ' '.repeat((i - 1) * 2) + '* item') },
  { name: 'nested lists, repeated', content: fill(runsUpTo(20, (i) => ' '.repeat((i - 1) * 2) + '* x', '\n') + '\n') },
  { name: 'nested ordered lists', content: runsUpTo(99, (i) => ' '.repeat((i - 1) * 3) + '1. item', '\n') },
  { name: 'nested quotes (99 deep)', content: '>'.repeat(99) + ' x\n' + fill('>'.repeat(99) + ' y\n', 9000) },
  { name: 'quotes per line', content: runsUpTo(99, (i) => '> '.repeat(i) + 'x', '\n') },
  { name: 'nested quote fences', content: runsUpTo(99, (i) => '`'.repeat(3 + 99 - i) + 'quote', '\n') + '\nx' },
  { name: 'list in quote in list', content: runsUpTo(60, (i) => ' '.repeat((i - 1) * 2) + (i % 2 ? '* ' : '> ') + 'x', '\n') },
  { name: 'long table', content: '| a | b | c |\n|---|---|---|\n' + fill('| x | **y** | `z` |\n', 9900) },
  { name: 'wide table', content: '|' + fill('a|', 4900) + '\n|' + fill('-|', 4900) + '\n' },
  { name: 'table with pipes in code', content: '| a | b |\n|---|---|\n' + fill('| `|` | `a|b` |\n', 9900) },
  { name: '2000 user mentions', content: fill('@**User Number17** ') },
  { name: 'distinct user mentions', content: runsUpTo(500, (i) => `@**User Number${i}**`).slice(0, MAX_MESSAGE_LENGTH) },
  { name: 'silent mentions by id', content: fill('@_**User Number3|3** ') },
  { name: 'unknown mentions', content: fill('@**nobody here** ') },
  { name: 'group mentions', content: fill('@*backend* ') },
  { name: 'channel and topic links', content: fill('#**engineering>deploys** ') },
  { name: 'emoji names', content: fill(':smile: ') },
  { name: 'custom emoji names', content: fill(':custom7: ') },
  { name: 'unknown emoji names', content: fill(':nonesuch: ') },
  { name: 'emoticons', content: fill(':) ') },
  { name: 'bare links', content: fill('https://example.com/a/b?c=d ') },
  { name: 'image links', content: fill('https://example.com/x.png ') },
  { name: 'markdown links', content: fill('[a](https://example.com/) ') },
  { name: 'domain-like words', content: fill('a.b.c.example.com ') },
  { name: 'linkifier matches', content: fill('#1234 ') },
  { name: 'linkifier (a+)+b', content: fill('a'.repeat(99) + 'b ') },
  { name: 'linkifier (a+)+b, no b', content: 'a'.repeat(MAX_MESSAGE_LENGTH) },
  { name: 'linkifier every word char', content: fill('ab ') },
  { name: 'timestamps', content: fill('<time:2024-01-01T00:00:00Z> ') },
  { name: 'inline math', content: fill('$$x^2$$ ') },
  // An opener that never closes: every later formula is found by the restarting loop.
  { name: 'math after an unclosed $$', content: `$$ ${fill('$$x$$ ', MAX_MESSAGE_LENGTH - 3)}` },
  { name: 'distinct inline math', content: runsUpTo(1000, (i) => `$$x^{${i}}$$`).slice(0, MAX_MESSAGE_LENGTH) },
  { name: 'strong and emphasis', content: fill('**a** *b* ') },
  { name: 'unclosed emphasis', content: fill('*a **b ') },
  { name: 'spoilers', content: fill('```spoiler x\ny\n```\n') },
  { name: 'code blocks', content: fill('```python\nx = 1\n```\n') },
  { name: 'headings', content: fill('# a\n') },
  { name: 'paragraphs', content: fill('a\n\n') },
  { name: 'hard breaks', content: fill('a\n') },
  { name: 'html-like', content: fill('<a href="x">') },
  { name: 'entities', content: fill('&amp;&#123;') },
];

/** Plain text of the same size, for a baseline. */
export function plainOfSize(content: string): string {
  return fill('lorem ipsum ', [...content].length);
}
