// What a web page says about itself, as the reference's url_preview parsers read
// it: Open Graph first (og:title, og:description, og:image), then the generic
// fallbacks (<title> or the first <h1>; <meta name="description"> or the first
// paragraph). A small tag scanner: only <meta>, <title>, <h1> and <p> matter.

import type { UrlEmbedData } from '../markdown/types.ts';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

function attributes(tag: string): Map<string, string> {
  const attrs = new Map<string, string>();
  const re = /([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
  for (const m of tag.matchAll(re)) {
    const name = m[1]!.toLowerCase();
    if (!attrs.has(name)) attrs.set(name, decodeEntities(m[2] ?? m[3] ?? m[4] ?? ''));
  }
  return attrs;
}

/** The text of the first element `tag` (markup inside removed), from `from` on. */
function firstText(html: string, tag: string, from = 0): { text: string; end: number } | null {
  const open = new RegExp(`<${tag}(?:\\s[^>]*)?>`, 'gi');
  open.lastIndex = from;
  const m = open.exec(html);
  if (!m) return null;
  const close = html.toLowerCase().indexOf(`</${tag}`, open.lastIndex);
  const inner = html.slice(open.lastIndex, close < 0 ? undefined : close);
  return { text: decodeEntities(inner.replace(/<[^>]*>/g, '')), end: m.index };
}

export function pageEmbedData(html: string): UrlEmbedData {
  const data: UrlEmbedData = {};
  const og: Record<string, string> = {};
  let descriptionMeta: string | undefined;
  for (const m of html.matchAll(/<meta\s([^>]*)>/gi)) {
    const attrs = attributes(m[1]!);
    const property = attrs.get('property');
    const content = attrs.get('content');
    if (content === undefined) continue;
    if (property === 'og:title' || property === 'og:description' || property === 'og:image') og[property.slice(3)] ??= content;
    if (attrs.get('name') === 'description' && descriptionMeta === undefined) descriptionMeta = content;
  }
  data.title = og.title ?? null;
  data.description = og.description ?? null;
  data.image = og.image ?? null;
  if (data.title === null) {
    const title = firstText(html, 'title') ?? firstText(html, 'h1');
    if (title && title.text !== '') data.title = title.text;
  }
  if (data.description === null) {
    if (descriptionMeta) data.description = descriptionMeta;
    else {
      const h1 = firstText(html, 'h1');
      const p = firstText(html, 'p', h1?.end ?? 0) ?? (h1 ? firstText(html, 'p') : null);
      if (p && p.text !== '') data.description = p.text;
    }
  }
  return data;
}
