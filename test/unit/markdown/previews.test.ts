// Link previews in the renderer (issue 18): which links wait for a fetch, and
// the reference's markup once the fetched data is given back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderSync } from '../../../src/markdown/render.ts';
import type { RenderContext } from '../../../src/markdown/types.ts';

const ctx = (extra: Partial<RenderContext> = {}): RenderContext => ({ server_url: 'https://chat.example.com', url_embed_previews: true, ...extra });

test('links without data are listed for fetching; own, relative and bot links are not', () => {
  const r = renderSync('https://a.example/x and https://chat.example.com/page and [rel](/help) https://a.example/x', ctx());
  assert.deepEqual(r.links_for_preview, ['https://a.example/x']);
  assert.deepEqual(renderSync('https://a.example/x', ctx({ sent_by_bot: true })).links_for_preview, []);
  assert.deepEqual(renderSync('https://a.example/x', ctx({ url_embed_previews: false })).links_for_preview, []);
  assert.deepEqual(renderSync('> https://a.example/x', ctx()).links_for_preview, [], 'quoted links get no preview');
});

test('an oEmbed video (Vimeo) becomes an embed-video with its player and a titled link', () => {
  const url = 'https://vimeo.com/246979354';
  const html = '<iframe src="https://player.vimeo.com/video/246979354"></iframe>';
  const r = renderSync(url, ctx({ url_embed_data: { [url]: { type: 'video', html, title: 'Big Buck', image: 'https://i.vimeocdn.com/t.jpg' } } }));
  assert.equal(
    r.html,
    `<p><a href="${url}">Vimeo - Big Buck</a></p>\n` +
      `<div class="embed-video message_inline_image"><a data-id="${html.replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')}" href="${url}" title="Big Buck"><img src="https://i.vimeocdn.com/t.jpg"></a></div>`,
  );
  assert.equal(r.has_image, true);
});

test('YouTube keeps its inline preview; fetched data only retitles the link', () => {
  const url = 'https://www.youtube.com/watch?v=abc123';
  const r = renderSync(url, ctx({ url_embed_data: { [url]: { title: 'A talk', image: 'https://i.ytimg.com/x.jpg' } } }));
  assert.equal(
    r.html,
    `<p><a href="${url}">YouTube - A talk</a></p>\n<div class="youtube-video message_inline_image"><a data-id="abc123" href="${url}"><img src="https://i.ytimg.com/vi/abc123/mqdefault.jpg"></a></div>`,
  );
  assert.deepEqual(r.links_for_preview, []);
});

test('a card with a proxied image; null data or no image adds nothing', () => {
  const url = 'https://a.example/post';
  const proxy = { base_url: '/external_content/', key: 'k' };
  const r = renderSync(url, ctx({ image_proxy: proxy, url_embed_data: { [url]: { title: 'T', description: 'D', image: 'https://a.example/i.png' } } }));
  assert.match(
    r.html,
    /<div class="message_embed"><a class="message_embed_image" href="https:\/\/a.example\/post" style="background-image: url\(&quot;\/external_content\/[0-9a-f]{40}\/[0-9a-f]+&quot;\)"><\/a><div class="data-container"><div class="message_embed_title"><a href="https:\/\/a.example\/post" title="T">T<\/a><\/div><div class="message_embed_description">D<\/div><\/div><\/div>$/,
  );
  assert.equal(renderSync(url, ctx({ url_embed_data: { [url]: null } })).html, `<p><a href="${url}">${url}</a></p>`);
  assert.equal(renderSync(url, ctx({ url_embed_data: { [url]: { title: 'T' } } })).html, `<p><a href="${url}">${url}</a></p>`);
});
