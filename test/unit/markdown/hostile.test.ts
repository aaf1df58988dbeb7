// Hostile inputs: whatever the input, the output has no script, no event
// handlers, no script/data URLs and balanced tags.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderSync } from '../../../src/markdown/index.ts';
import type { RenderContext } from '../../../src/markdown/index.ts';
import { checkHtml } from './html-check.ts';

const XSS = '<img src=x onerror=alert(1)>';

// An organization whose own data is hostile too.
const context: RenderContext = {
  users: [
    { id: 1, full_name: XSS },
    { id: 2, full_name: '"><script>alert(1)</script>' },
    { id: 3, full_name: 'Zoe' },
  ],
  groups: [{ id: 4, name: '<script>alert(1)</script>' }],
  channels: [
    { id: 5, name: '"><svg onload=alert(1)>' },
    { id: 6, name: 'javascript:alert(1)' },
  ],
  topics: [{ channel_id: 5, topic: '"><img src=x onerror=alert(1)>', latest_message_id: 9 }],
  linkifiers: [
    { id: 1, pattern: '#(?P<id>[0-9]+)', url_template: 'javascript:alert({id})' },
    { id: 2, pattern: 'T(?P<id>[0-9]+)', url_template: 'https://tracker.example/{id}' },
    { id: 3, pattern: 'D(?P<id>[a-z]+)', url_template: 'data:text/html,{id}' },
    // Reserved and fragment expansion keep `:` and `/`: the matched text chooses the scheme.
    { id: 4, pattern: '!(?P<u>.+)', url_template: '{+u}' },
    { id: 5, pattern: '~(?P<u>\\S+)', url_template: '{#u}' },
    { id: 6, pattern: 'Q(?P<u>[a-z]+)', url_template: '{u}:alert(1)' },
  ],
  custom_emoji: [
    { id: 1, name: 'evil', source_url: 'javascript:alert(1)' },
    { id: 2, name: 'quote', source_url: '/user_avatars/1/emoji/"onerror="alert(1).png' },
    { id: 3, name: 'evil_upper', source_url: 'JaVaScRiPt:alert(1)' },
    { id: 4, name: 'evil_space', source_url: ' javascript:alert(1)' },
    { id: 5, name: 'evil_data', source_url: 'data:image/svg+xml,<svg onload=alert(1)>' },
  ],
  server_url: 'http://chat.example',
  image_proxy: null,
};

export const HOSTILE: string[] = [
  '<script>alert(1)</script>',
  XSS,
  '<svg/onload=alert(1)>',
  '<a href="javascript:alert(1)">x</a>',
  '[x](javascript:alert(1))',
  '[x](JaVaScRiPt:alert(1))',
  '[x]( javascript:alert(1) )',
  '[x](java\tscript:alert(1))',
  '[x](&#106;avascript:alert(1))',
  '[x](javascript&colon;alert(1))',
  '[x](vbscript:msgbox(1))',
  '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '[x](<javascript:alert(1)>)',
  '![x](javascript:alert(1))',
  '<javascript:alert(1)>',
  'javascript:alert(1)',
  '[a](http://x.com" onmouseover="alert(1))',
  '[a](http://x.com "title\\" onmouseover=\\"alert(1)")',
  '[a](http://x.com \'a" onmouseover="alert(1)\')',
  '[<img src=x onerror=alert(1)>](http://x.com)',
  '[x](http://x.com/<script>)',
  'http://x.com/"onmouseover=alert(1)',
  'http://x.com/<script>alert(1)</script>',
  'http://x.com/a.png?"onerror=alert(1)',
  'https://www.youtube.com/watch?v="onerror=alert(1)',
  '`<script>alert(1)</script>`',
  '```\n</code></pre><script>alert(1)</script>\n```',
  '```"><script>alert(1)</script>\nx\n```',
  '```js"onmouseover="alert(1)\nx\n```',
  '```spoiler <img src=x onerror=alert(1)>\n<script>alert(1)</script>\n```',
  '```quote\n<script>alert(1)</script>\n```',
  '```math\n\\href{javascript:alert(1)}{x}\n```',
  '$$\\href{javascript:alert(1)}{x}$$',
  '$$\\url{javascript:alert(1)}$$',
  '$$\\htmlClass{x}{y} \\htmlStyle{color:red}{y} \\htmlId{a}{b} \\htmlData{a=b}{c}$$',
  '$$\\includegraphics{javascript:alert(1)}$$',
  '$$<script>alert(1)</script>$$',
  '<time:"><script>alert(1)</script>>',
  '<time:1496701800" onmouseover="alert(1)>',
  '@**<img src=x onerror=alert(1)>**',
  '@**"><script>alert(1)</script>**',
  '@_**<img src=x onerror=alert(1)>|1**',
  '@*<script>alert(1)</script>*',
  '#**"><svg onload=alert(1)>**',
  '#**"><svg onload=alert(1)>>"><img src=x onerror=alert(1)>**',
  '#**"><svg onload=alert(1)>>x@5**',
  '#**javascript:alert(1)**',
  ':evil: :quote: :"onerror=alert(1):',
  'see #123 and T42 and Dabc',
  '!javascript:alert(1) !JAVASCRIPT:alert(1) ! javascript:alert(1) !data:text/html,x ~javascript:alert(1) Qjavascript',
  ':evil_upper: :evil_space: :evil_data:',
  '```quote\n```spoiler h\n<script>alert(1)</script>\n```\n```',
  '```quote\n```spoiler h\n',
  '```quote\n```python\n</code></pre></div><script>alert(1)</script>\n```\n```',
  '````quote\n```quote\n```spoiler\n```math\n\\href{javascript:alert(1)}{x}',
  '```spoiler\n```quote\n> ```spoiler x\n',
  '| <script> | `|` |\n|---|---|\n| <img src=x onerror=alert(1)> | x |',
  '&lt;script&gt;alert(1)&lt;/script&gt;',
  '&#x3C;script&#x3E;alert(1)&#x3C;/script&#x3E;',
  '&#60;script&#62;',
  '\u0002wzxhzdk:0\u0003<script>',
  '\u0002klzzwxh:0000\u0003',
  '[x](http://a.com/\u0002wzxhzdk:0\u0003)',
  '> <script>alert(1)</script>\n> @**Zoe**',
  '* <script>alert(1)</script>\n  * [x](javascript:alert(1))',
  '1. <b onclick=alert(1)>x</b>',
  '# <script>alert(1)</script>',
  '    <script>alert(1)</script>',
  '~~<script>~~ **<script>** *<script>*',
  '<<script>script>alert(1)<</script>/script>',
  '<scr<script>ipt>alert(1)</scr</script>ipt>',
  '"><iframe src="javascript:alert(1)">',
  '<!--<script>alert(1)//-->',
  '<![CDATA[<script>alert(1)</script>]]>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  'x\u0000y<script>',
  '[x](http://example.com/image.png "<script>")',
  'http://example.com/" onerror="alert(1).png',
  '[](javascript:alert(1))',
  '[  ](data:image/svg+xml,<svg onload=alert(1)>)',
  'mailto:x@y.com?subject=<script>',
  'x@y.com"onmouseover="alert(1)',
  '/me <script>alert(1)</script>',
];

test('hostile inputs produce safe, balanced HTML', () => {
  for (const input of HOSTILE) {
    for (const variant of [input, `text ${input} text`, `> ${input}`, `* ${input}`, `**${input}**`]) {
      const { html } = renderSync(variant, context);
      assert.deepEqual(checkHtml(html), [], `input ${JSON.stringify(variant)} gave ${html}`);
      assert.doesNotMatch(html, /<script/i);
    }
  }
});

test('script-like links render as text', () => {
  assert.equal(renderSync('[x](javascript:alert(1))', context).html, '<p>[x](javascript:alert(1))</p>');
  assert.equal(renderSync('see #123', context).html, '<p>see #123</p>');
  assert.equal(renderSync('T42', context).html, '<p><a href="https://tracker.example/42">T42</a></p>');
});

test('linkifiers, custom emoji and nested fences stay safe', () => {
  assert.equal(renderSync('!javascript:alert(1)', context).html, '<p>!javascript:alert(1)</p>');
  assert.equal(renderSync('!https://ok.example/x', context).html, '<p><a href="https://ok.example/x">!https://ok.example/x</a></p>');
  assert.equal(renderSync(':evil_upper: :evil_data:', context).html, '<p>:evil_upper: :evil_data:</p>');
  // A spoiler or code block that ends a quote fence is not wrapped in a paragraph.
  assert.equal(
    renderSync('```quote\n```spoiler h\nx\n```\n```', context).html,
    '<blockquote>\n<div class="spoiler-block"><div class="spoiler-header">\n<p>h</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>x</p>\n</div></div>\n</blockquote>',
  );
  assert.equal(
    renderSync('````quote\n```\nx\n```\n````', context).html,
    '<blockquote>\n<div class="codehilite"><pre><span></span><code>x\n</code></pre></div>\n</blockquote>',
  );
});

test('the checker itself catches unsafe markup', () => {
  assert.notDeepEqual(checkHtml('<p onclick="x">a</p>'), []);
  assert.notDeepEqual(checkHtml('<a href="javascript:alert(1)">a</a>'), []);
  assert.notDeepEqual(checkHtml('<a href="&#106;avascript:x">a</a>'), []);
  assert.notDeepEqual(checkHtml('<p><em>a</p></em>'), []);
  assert.notDeepEqual(checkHtml('<div>'), []);
  assert.notDeepEqual(checkHtml('<script>x</script>'), []);
  assert.notDeepEqual(checkHtml('<p><div>x</div></p>'), [], 'a block inside a paragraph');
  assert.deepEqual(checkHtml('<p>a<br>\nb <img src="/x.png"></p>'), []);
});

test('random input never yields unsafe markup', () => {
  const alphabet = [
    '<',
    '>',
    '"',
    "'",
    '&',
    '[',
    ']',
    '(',
    ')',
    '`',
    '*',
    '~',
    '$',
    ':',
    '@',
    '#',
    '\n',
    ' ',
    'a',
    'javascript:',
    'http://x.co/',
    'script',
    'onerror=',
    '|',
    '-',
    '>',
    '```',
    '$$',
    '**',
    '\\',
    '#**',
    '@**',
    '```quote\n',
    '```spoiler h\n',
    '```math\n',
    '```python\n',
    '```\n',
    '> ',
    '* ',
    '    ',
  ];
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let i = 0; i < 300; i++) {
    let s = '';
    const n = 1 + Math.floor(rnd() * 60);
    for (let j = 0; j < n; j++) s += alphabet[Math.floor(rnd() * alphabet.length)];
    let html: string;
    try {
      html = renderSync(s, context).html;
    } catch (err) {
      if ((err as Error).name === 'MarkdownRenderError') continue;
      throw err;
    }
    assert.deepEqual(checkHtml(html), [], `input ${JSON.stringify(s)} gave ${html}`);
  }
});
