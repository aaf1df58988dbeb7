// The flavor's own rules, with the expected HTML of the reference server
// (zulip-api-digest.md section 6) and the facts reported for message flags.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { closeDefaultRenderPool, collectReferences, plainTextHtml, renderMessage, renderSync, topicLinks } from '../../../src/markdown/index.ts';
import type { RenderContext } from '../../../src/markdown/index.ts';

after(() => closeDefaultRenderPool());

const ctx: RenderContext = {
  users: [
    { id: 10, full_name: 'King Hamlet' },
    { id: 11, full_name: 'Othello' },
    { id: 12, full_name: 'Gone User', is_active: false },
  ],
  groups: [
    { id: 5, name: 'support' },
    { id: 6, name: 'retired', deactivated: true },
  ],
  channels: [
    { id: 1, name: 'Denmark' },
    { id: 2, name: 'core team' },
  ],
  topics: [{ channel_id: 1, topic: 'some topic', latest_message_id: 123 }],
  linkifiers: [
    { id: 1, pattern: '#(?P<id>[0-9]+)', url_template: 'https://trac.example.com/ticket/{id}' },
    { id: 2, pattern: '(?P<org>[a-z]+)/(?P<repo>[a-z]+)#(?P<id>[0-9]+)', url_template: 'https://github.com/{org}/{repo}/issues/{id}' },
  ],
  custom_emoji: [
    { id: 1, name: 'green_tick', source_url: '/user_avatars/2/emoji/images/1.png' },
    { id: 2, name: 'old_logo', source_url: '/user_avatars/2/emoji/images/2.png', deactivated: true },
  ],
  server_url: 'http://zulip.testserver',
};

const html = (md: string, c: RenderContext = ctx) => renderSync(md, c).html;

test('user mentions', () => {
  const r = renderSync('@**king hamlet** and @**King Hamlet|10** and @**|11**', ctx);
  assert.equal(
    r.html,
    '<p><span class="user-mention" data-user-id="10">@King Hamlet</span> and ' +
      '<span class="user-mention" data-user-id="10">@King Hamlet</span> and ' +
      '<span class="user-mention" data-user-id="11">@Othello</span></p>',
  );
  assert.deepEqual(r.mentions.user_ids, [10, 11]);
  assert.equal(html('@_**King Hamlet**'), '<p><span class="user-mention silent" data-user-id="10">King Hamlet</span></p>');
  assert.deepEqual(renderSync('@_**King Hamlet**', ctx).mentions, {
    user_ids: [],
    silent_user_ids: [10],
    group_ids: [],
    stream_wildcard: false,
    topic_wildcard: false,
  });
  assert.equal(html('@**Invalid user**'), '<p>@<strong>Invalid user</strong></p>');
  // With an id, the name must match that user's name exactly.
  assert.equal(html('@**Othello|10**'), '<p>@<strong>Othello|10</strong></p>');
  assert.equal(html('@**king hamlet|10**'), '<p>@<strong>king hamlet|10</strong></p>');
  // Deactivated users render but are not notified.
  const gone = renderSync('@**Gone User**', ctx);
  assert.equal(gone.html, '<p><span class="user-mention silent" data-user-id="12">Gone User</span></p>');
  assert.deepEqual(gone.mentions.user_ids, []);
  // Mentions must start after whitespace or punctuation.
  assert.equal(html('a@**King Hamlet**'), '<p>a@<strong>King Hamlet</strong></p>');
});

test('mentions inside quotes are silent', () => {
  const r = renderSync('> @**King Hamlet** said @*support*', ctx);
  assert.equal(
    r.html,
    '<blockquote>\n<p><span class="user-mention silent" data-user-id="10">King Hamlet</span> said ' +
      '<span class="user-group-mention silent" data-user-group-id="5">support</span></p>\n</blockquote>',
  );
  assert.deepEqual(r.mentions.user_ids, []);
  assert.deepEqual(r.mentions.group_ids, []);
});

test('wildcard mentions', () => {
  for (const w of ['all', 'everyone', 'channel', 'stream']) {
    const r = renderSync(`@**${w}**`, ctx);
    assert.equal(r.html, `<p><span class="user-mention channel-wildcard-mention" data-user-id="*">@${w}</span></p>`);
    assert.equal(r.mentions.stream_wildcard, true);
  }
  const silent = renderSync('@_**all**', ctx);
  assert.equal(silent.html, '<p><span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span></p>');
  assert.equal(silent.mentions.stream_wildcard, false);
  const topic = renderSync('@**topic**', ctx);
  assert.equal(topic.html, '<p><span class="topic-mention">@topic</span></p>');
  assert.equal(topic.mentions.topic_wildcard, true);
  assert.equal(html('@_**topic**'), '<p><span class="topic-mention silent">topic</span></p>');
});

test('group mentions', () => {
  const r = renderSync('@*support* @_*Support* @*retired* @*nobody*', ctx);
  assert.equal(
    r.html,
    '<p><span class="user-group-mention" data-user-group-id="5">@support</span> ' +
      '<span class="user-group-mention silent" data-user-group-id="5">support</span> ' +
      '<span class="user-group-mention silent" data-user-group-id="6">retired</span> @<em>nobody</em></p>',
  );
  assert.deepEqual(r.mentions.group_ids, [5]);
});

test('channel, topic and message links', () => {
  assert.equal(html('#**Denmark**'), '<p><a class="stream" data-stream-id="1" href="/#narrow/channel/1-Denmark">#Denmark</a></p>');
  assert.equal(html('#**core team**'), '<p><a class="stream" data-stream-id="2" href="/#narrow/channel/2-core-team">#core team</a></p>');
  assert.equal(
    html('#**Denmark>some topic**'),
    '<p><a class="stream-topic" data-stream-id="1" href="/#narrow/channel/1-Denmark/topic/some.20topic/with/123">#Denmark &gt; some topic</a></p>',
  );
  assert.equal(
    html('#**Denmark>other.topic**'),
    '<p><a class="stream-topic" data-stream-id="1" href="/#narrow/channel/1-Denmark/topic/other.2Etopic">#Denmark &gt; other.topic</a></p>',
  );
  assert.equal(
    html('#**Denmark>**'),
    '<p><a class="stream-topic" data-stream-id="1" href="/#narrow/channel/1-Denmark/topic/">#Denmark &gt; <em>general chat</em></a></p>',
  );
  assert.equal(
    html('#**Denmark>danish@123**'),
    '<p><a class="message-link" href="/#narrow/channel/1-Denmark/topic/danish/near/123">#Denmark &gt; danish @ 💬</a></p>',
  );
  assert.equal(html('#**Nowhere**'), '<p>#<strong>Nowhere</strong></p>');
  assert.equal(renderSync('#**Denmark**', ctx).has_link, true);
});

test('emoji', () => {
  assert.equal(html(':airplane:'), '<p><span aria-label="airplane" class="emoji emoji-2708" role="img" title="airplane">:airplane:</span></p>');
  assert.equal(html('💩'), '<p><span aria-label="poop" class="emoji emoji-1f4a9" role="img" title="poop">:poop:</span></p>');
  assert.equal(html(':green_tick:'), '<p><img alt=":green_tick:" class="emoji" src="/user_avatars/2/emoji/images/1.png" title="green tick"></p>');
  assert.equal(html(':zulip:'), '<p><img alt=":zulip:" class="emoji" src="/static/generated/emoji/images/emoji/unicode/zulip.png" title="zulip"></p>');
  // The reference server's curated names, canonical and alias alike.
  assert.equal(
    html(':holiday_tree: 🎄 :big_smile:'),
    '<p><span aria-label="holiday tree" class="emoji emoji-1f384" role="img" title="holiday tree">:holiday_tree:</span> ' +
      '<span aria-label="holiday tree" class="emoji emoji-1f384" role="img" title="holiday tree">:holiday_tree:</span> ' +
      '<span aria-label="big smile" class="emoji emoji-1f604" role="img" title="big smile">:big_smile:</span></p>',
  );
  assert.equal(html(':thumbs_up:'), '<p><span aria-label="thumbs up" class="emoji emoji-1f44d" role="img" title="thumbs up">:thumbs_up:</span></p>');
  assert.equal(html(':old_logo: :not_an_emoji:'), '<p>:old_logo: :not_an_emoji:</p>');
  assert.equal(html(':)'), '<p>:)</p>');
  assert.equal(html(':)', { translate_emoticons: true }), '<p><span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span></p>');
});

test('a text-presentation character is an emoji only with its selector or keycap', () => {
  assert.equal(html('1 # * © 2024 ™ ☺'), '<p>1 # * © 2024 ™ ☺</p>');
  assert.equal(
    html('©\uFE0F 1\uFE0F\u20E3'),
    '<p><span aria-label="copyright" class="emoji emoji-00a9" role="img" title="copyright">:copyright:</span> ' +
      '<span aria-label="one" class="emoji emoji-0031-20e3" role="img" title="one">:one:</span></p>',
  );
});

test('repeated linkifier matches each expand their own values', () => {
  assert.equal(
    html('#224 #225 #224'),
    '<p><a href="https://trac.example.com/ticket/224">#224</a> <a href="https://trac.example.com/ticket/225">#225</a> ' +
      '<a href="https://trac.example.com/ticket/224">#224</a></p>',
  );
});

test('linkifiers, links and autolinks', () => {
  assert.equal(html('fix #224'), '<p>fix <a href="https://trac.example.com/ticket/224">#224</a></p>');
  assert.equal(html('issue#124 and #1124z'), '<p>issue#124 and #1124z</p>');
  assert.equal(html('see zulip/zulip#123.'), '<p>see <a href="https://github.com/zulip/zulip/issues/123">zulip/zulip#123</a>.</p>');
  assert.equal(html('[hello](https://github.com)'), '<p><a href="https://github.com">hello</a></p>');
  assert.equal(html('[call me](tel:+14155551234)'), '<p><a href="tel:+14155551234">call me</a></p>');
  assert.equal(html('[foo](http://zulip.testserver/#narrow/channel/1-Denmark)'), '<p><a href="#narrow/channel/1-Denmark">foo</a></p>');
  assert.equal(html('example.com'), '<p><a href="http://example.com">example.com</a></p>');
  assert.equal(html('mail a@b.com'), '<p>mail <a href="mailto:a@b.com">a@b.com</a></p>');
});

test('topic links', () => {
  assert.deepEqual(topicLinks('fix #224 and https://example.com/x, zulip/zulip#5', ctx.linkifiers!), [
    { text: '#224', url: 'https://trac.example.com/ticket/224' },
    { text: 'https://example.com/x', url: 'https://example.com/x' },
    { text: 'zulip/zulip#5', url: 'https://github.com/zulip/zulip/issues/5' },
  ]);
  assert.deepEqual(topicLinks('see example.org', []), [{ text: 'example.org', url: 'https://example.org' }]);
  assert.deepEqual(topicLinks('nothing here', ctx.linkifiers!), []);
});

test('time, /me, escaped HTML, math', () => {
  assert.equal(html('<time:1496701800>'), '<p><time datetime="2017-06-05T22:30:00Z">1496701800</time></p>');
  assert.equal(html('<time:2017-06-05T18:30:00-04:00>'), '<p><time datetime="2017-06-05T22:30:00Z">2017-06-05T18:30:00-04:00</time></p>');
  const me = renderSync('/me takes a walk', ctx);
  assert.equal(me.html, '<p>/me takes a walk</p>');
  assert.equal(me.is_me_message, true);
  assert.equal(renderSync('/met', ctx).is_me_message, false);
  assert.equal(html('<h1>stay normal</h1> thanks'), '<p>&lt;h1&gt;stay normal&lt;/h1&gt; thanks</p>');
  assert.match(html('$$x^2$$'), /^<p><span class="katex">/);
  assert.equal(html('$$\\error{x}$$'), '<p><span class="tex-error">$$\\error{x}$$</span></p>');
});

test('math: a formula rendered before renders the same; inline and display do not share', () => {
  const inline = html('$$y^3$$');
  assert.equal(html('$$y^3$$'), inline);
  assert.equal(html('$$\\error{x}$$ $$\\error{x}$$'), '<p><span class="tex-error">$$\\error{x}$$</span> <span class="tex-error">$$\\error{x}$$</span></p>');
  const display = html('```math\ny^3\n```');
  assert.match(display, /katex-display/);
  assert.doesNotMatch(inline, /katex-display/);
  assert.equal(html('```math\ny^3\n```'), display);
});

test('code blocks carry the language and highlighting classes', () => {
  assert.equal(
    html('```python\nx = 1\n```'),
    '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="n">x</span> <span class="o">=</span> <span class="mi">1</span>\n</code></pre></div>',
  );
  assert.equal(
    html('```inventedlanguage\nx = 1\n```'),
    '<div class="codehilite" data-code-language="inventedlanguage"><pre><span></span><code>x = 1\n</code></pre></div>',
  );
  assert.equal(
    renderSync('```python\nx = 1\n```', { highlight_code: false }).html,
    '<div class="codehilite" data-code-language="Python"><pre><span></span><code>x = 1\n</code></pre></div>',
  );
});

test('message facts for flags and narrows', () => {
  const plain = renderSync('hello', ctx);
  assert.deepEqual([plain.has_link, plain.has_image, plain.has_attachment], [false, false, false]);
  const upload = renderSync('[f.txt](/user_uploads/2/ab/x/f.txt)', ctx);
  assert.equal(upload.html, '<p><a href="/user_uploads/2/ab/x/f.txt">f.txt</a></p>');
  assert.deepEqual([upload.has_link, upload.has_attachment, upload.attachment_path_ids], [true, true, ['2/ab/x/f.txt']]);
  const image = renderSync('[pic](/user_uploads/2/ab/x/pic.png)', {
    ...ctx,
    uploaded_images: { '2/ab/x/pic.png': { original_width_px: 640, original_height_px: 480 } },
  });
  assert.equal(image.has_image, true);
  assert.equal(
    image.html,
    '<p><a href="/user_uploads/2/ab/x/pic.png">pic</a></p>\n<div class="message_inline_image"><a href="/user_uploads/2/ab/x/pic.png" title="pic">' +
      '<img class="image-loading-placeholder" data-original-dimensions="640x480" src="/static/images/loading/loader-black.svg"></a></div>',
  );
  const external = renderSync('https://example.com/a.png', ctx);
  assert.equal(external.has_image, true);
  assert.equal(external.html, '<div class="message_inline_image"><a href="https://example.com/a.png"><img src="https://example.com/a.png"></a></div>');
  assert.equal(renderSync('https://example.com/a.png', { ...ctx, image_previews: false }).has_image, false);
});

test('collectReferences finds what needs resolving', () => {
  const refs = collectReferences(
    '@**King Hamlet** @_**Othello|11** @**all** @*support* #**Denmark** #**core team>some topic** #**x>y@5** :green_tick: /user_uploads/2/ab/f.txt',
  );
  assert.deepEqual(refs.user_names, ['King Hamlet']);
  assert.deepEqual(refs.user_ids, [11]);
  assert.deepEqual(refs.group_names, ['support']);
  // Names with ">" are kept too: a channel may be called that.
  for (const name of ['Denmark', 'core team', 'x']) assert.ok(refs.channel_names.includes(name), name);
  assert.deepEqual(refs.topics, [{ channel_name: 'core team', topic: 'some topic' }]);
  assert.deepEqual(refs.emoji_names, ['green_tick']);
  assert.deepEqual(refs.upload_path_ids, ['2/ab/f.txt']);
  assert.deepEqual(collectReferences('plain: no emoji').emoji_names, []);
  // Overlapping candidates too: which of them the emoji pattern tries depends on the others.
  assert.deepEqual(collectReferences(':a:b: :a: 10:30:00 :c+1-x:').emoji_names, ['a', 'b', '30', 'c+1-x']);
});

test('renderMessage resolves references then renders in a worker', async () => {
  let asked: unknown;
  const r = await renderMessage('hi @**King Hamlet**', async (refs) => {
    asked = refs.user_names;
    return { users: [{ id: 10, full_name: 'King Hamlet' }] };
  });
  assert.deepEqual(asked, ['King Hamlet']);
  assert.equal(r.html, '<p>hi <span class="user-mention" data-user-id="10">@King Hamlet</span></p>');
  assert.deepEqual(r.mentions.user_ids, [10]);
});

test('plain-text fallback escapes everything', () => {
  assert.equal(plainTextHtml('a <b>\nc\n\n\nd & e'), '<p>a &lt;b&gt;<br>\nc</p>\n<p>d &amp; e</p>');
});
