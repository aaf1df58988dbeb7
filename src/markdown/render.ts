// The synchronous renderer: Markdown text + context -> HTML and findings.
// Pipeline (as in the reference server): line preprocessors, block parsing,
// highlighting of indented code, inline patterns, prettify, link previews,
// serialization, then stashed raw HTML is put back.

import { BlockParser } from './blocks.ts';
import { MarkdownRenderError } from './errors.ts';
import { formatCode } from './highlight.ts';
import { InlineProcessor } from './inline.ts';
import { renderTex } from './math.ts';
import { buildPatterns, Lookup, type Findings } from './patterns.ts';
import { CODE_SPAN_RE } from './code-spans.ts';
import { fencedBlocks, hangingLists, normalizeWhitespace } from './preprocess.ts';
import { addPreviews, proxyMedia, type LinkFacts } from './previews.ts';
import { HtmlStash } from './stash.ts';
import { type El, prettify, serialize, serializeChildren, str } from './tree.ts';
import type { RenderContext, RenderResult } from './types.ts';
import { ETX, pyStrip, stripChars, STX } from './util.ts';

const UNESCAPE_RE = new RegExp(`${STX}(\\d+)${ETX}`, 'g');

function unescapeText(text: string): string {
  return text.replace(UNESCAPE_RE, (_m, n: string) => String.fromCodePoint(Number(n)));
}

/** Indented code blocks are highlighted like fenced ones (without a language). */
function highlightIndentedCode(root: El, stash: HtmlStash, highlight: boolean): void {
  for (const pre of [...root.iter('pre')]) {
    const code = pre.children[0];
    if (pre.children.length !== 1 || code!.tag !== 'code' || code!.text === null) continue;
    const text = str(code!.text).replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
    // Indented blocks use upstream CodeHilite, which drops a `#!lang` / `:::lang` first line.
    const lines = stripChars(text, '\n').split('\n');
    const m = /^(?:::+|#!)((?:\/\w+)*[/ ])?([\w#.+-]*)/.exec(lines[0] ?? '');
    let lang: string | null = null;
    if (m) {
      lang = m[2]!.toLowerCase() || null;
      if (!m[1]) lines.shift();
    }
    const html = formatCode(null, lines.join('\n'), highlight, lang);
    pre.children = [];
    pre.tag = 'p';
    pre.text = stash.store(html);
  }
}

export interface RenderSyncOptions {
  /**
   * Python-Markdown's own loop: every pattern restarts at 0 after each match,
   * code spans by the reference's regex. Quadratic; tests compare against it.
   */
  pythonLoop?: boolean;
}

export function renderSync(content: string, ctx: RenderContext, options: RenderSyncOptions = {}): RenderResult {
  try {
    return renderUnguarded(content, ctx, options);
  } catch (err) {
    // Inline markup nested thousands deep (`*a *a ... a* a*`) can still exhaust the stack.
    if (err instanceof RangeError && /call stack/i.test(err.message)) {
      throw new MarkdownRenderError('too_large', 'Message is nested too deeply to render');
    }
    throw err;
  }
}

function renderUnguarded(content: string, ctx: RenderContext, options: RenderSyncOptions): RenderResult {
  const findings: Findings = {
    userIds: new Set(),
    silentUserIds: new Set(),
    groupIds: new Set(),
    streamWildcard: false,
    topicWildcard: false,
  };
  let html = '';
  let facts: LinkFacts = { hasLink: false, hasImage: false, uploadPathIds: [], linksForPreview: [] };
  if (pyStrip(content)) {
    const stash = new HtmlStash();
    const highlight = ctx.highlight_code !== false;
    const source = content.replaceAll(STX, '').replaceAll(ETX, '');
    let lines = hangingLists(source.split('\n'));
    lines = normalizeWhitespace(lines);
    lines = fencedBlocks(lines, {
      stash,
      formatCode: (lang, text) => formatCode(lang, text, highlight),
      renderTex,
    });
    const root = new BlockParser().parseDocument(lines.join('\n'));
    highlightIndentedCode(root, stash, highlight);
    const lookup = new Lookup(ctx);
    let patterns = buildPatterns(lookup, findings, stash, () => inline);
    if (options.pythonLoop) {
      patterns = patterns.map((p) => ({
        ...p,
        ...(p.name === 'backtick' ? { re: new RegExp(CODE_SPAN_RE) } : {}),
        barrier: undefined,
        resumesAtPlaceholder: undefined,
      }));
    }
    const inline: InlineProcessor = new InlineProcessor(patterns);
    inline.serializeNode = serialize;
    inline.run(root);
    prettify(root);
    for (const el of root.iter()) {
      if (el.text && el.tag !== 'code' && typeof el.text === 'string') el.text = unescapeText(el.text);
      if (el.tail && typeof el.tail === 'string') el.tail = unescapeText(el.tail);
    }
    facts = addPreviews(root, ctx);
    proxyMedia(root, ctx);
    html = pyStrip(stash.restore(pyStrip(serializeChildren(root))));
  }
  return {
    html,
    mentions: {
      user_ids: [...findings.userIds].sort((a, b) => a - b),
      silent_user_ids: [...findings.silentUserIds].filter((id) => !findings.userIds.has(id)).sort((a, b) => a - b),
      group_ids: [...findings.groupIds].sort((a, b) => a - b),
      stream_wildcard: findings.streamWildcard,
      topic_wildcard: findings.topicWildcard,
    },
    is_me_message: content.startsWith('/me '),
    has_link: facts.hasLink,
    has_image: facts.hasImage,
    has_attachment: facts.uploadPathIds.length > 0,
    attachment_path_ids: facts.uploadPathIds,
    links_for_preview: facts.linksForPreview,
  };
}
