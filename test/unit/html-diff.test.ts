// content_html_diff (digest 1.14): marks on text only, the new rendering's tags kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { highlightHtmlDifferences } from '../../src/messages/history/html-diff.ts';

const tags = (html: string) => html.match(/<[^>]*>/g) ?? [];
const withoutMarks = (html: string) =>
  tags(html).filter((t) => !/^<\/?span( class="highlight_text_(inserted|deleted)")?>$/.test(t) && t !== '<div>' && t !== '</div>');

test('added, removed and replaced words', () => {
  assert.equal(
    highlightHtmlDifferences('<p>Hello world</p>', '<p>Hello world again</p>'),
    '<div><p>Hello world <span class="highlight_text_inserted">again</span></p></div>',
  );
  assert.equal(highlightHtmlDifferences('<p>a b c</p>', '<p>a c</p>'), '<div><p>a <span class="highlight_text_deleted">b</span> c</p></div>');
  assert.equal(highlightHtmlDifferences('<p>same</p>', '<p>same</p>'), '<div><p>same</p></div>');
  assert.equal(highlightHtmlDifferences('', '<p>new</p>'), '<div><p><span class="highlight_text_inserted">new</span></p></div>');
});

test('removed markup is dropped, so the result has exactly the new tags', () => {
  const before = '<p>x <strong>bold &amp; brave</strong> y</p>\n<ul>\n<li>one</li>\n</ul>';
  const after = '<blockquote>\n<p>x <em>brave</em> z</p>\n</blockquote>';
  const diff = highlightHtmlDifferences(before, after);
  assert.deepEqual(withoutMarks(diff), tags(after));
  assert.match(diff, /highlight_text_deleted">bold &amp;/);
});

test('very different long texts finish quickly, shown as replaced', () => {
  const words = (prefix: string) => Array.from({ length: 8000 }, (_, i) => `${prefix}${i}`).join(' ');
  // Timed in CPU, which a loaded machine does not stretch.
  const before = process.threadCpuUsage();
  const diff = highlightHtmlDifferences(`<p>${words('a')}</p>`, `<p>${words('b')}</p>`);
  const used = process.threadCpuUsage(before);
  assert.ok((used.user + used.system) / 1000 < 5000);
  assert.deepEqual(withoutMarks(diff), ['<p>', '</p>']);
  assert.ok(diff.includes('b7999') && diff.includes('a7999'));
});
