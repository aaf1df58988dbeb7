// `topic_links` of a message: linkifier matches and bare URLs in its topic,
// as the reference server computes them (linkifiers first, in order; no overlaps).

import { findLinkifier } from './patterns.ts';
import { urlsplit, urlunsplit, webLinkRegex } from './links.ts';
import type { Linkifier } from './types.ts';

export interface TopicLink {
  text: string;
  url: string;
}

interface Match extends TopicLink {
  index: number;
  precedence: number | null;
}

// Bare URLs are looked for in the pieces between these characters.
const SPLITTER = /[ !;),'"]/g;

export function topicLinks(topic: string, linkifiers: readonly Linkifier[]): TopicLink[] {
  const matches: Match[] = [];
  linkifiers.forEach((linkifier, precedence) => {
    let pos = 0;
    while (pos < topic.length) {
      const m = findLinkifier(linkifier, topic, pos);
      if (!m) break;
      // Resume before the delimiter after the match, so it can start the next one.
      pos = Math.max(m.resume, pos + 1);
      matches.push({ url: m.url, text: m.text, index: m.start, precedence });
    }
  });
  matches.sort((a, b) => a.precedence! - b.precedence! || a.index - b.index);

  const linkRe = webLinkRegex();
  let pos = 0;
  while (pos < topic.length) {
    SPLITTER.lastIndex = pos;
    const next = SPLITTER.exec(topic);
    const end = next ? next.index : topic.length;
    const piece = topic.slice(pos, end);
    const m = linkRe.exec(piece);
    if (m) {
      const text = m.groups!.url!;
      let url = text;
      try {
        const parts = urlsplit(text);
        if (!parts.scheme) {
          if (!parts.netloc) {
            const i = (parts.path + '/').indexOf('/');
            parts.netloc = parts.path.slice(0, i);
            parts.path = parts.path.slice(i);
          }
          url = urlunsplit({ ...parts, scheme: 'https' });
        }
      } catch {
        // keep the text as the URL
      }
      matches.push({ url, text, index: pos, precedence: null });
    }
    pos = end + 1;
  }

  const overlaps = (a: Match, b: Match) =>
    (b.index <= a.index && a.index < b.index + b.text.length) || (a.index <= b.index && b.index < a.index + a.text.length);
  const applied: Match[] = [];
  for (const m of matches) if (applied.every((old) => !overlaps(old, m))) applied.push(m);
  applied.sort((a, b) => a.index - b.index);
  return applied.map(({ text, url }) => ({ text, url }));
}
