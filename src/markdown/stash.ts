// Raw HTML that the parser must not touch (rendered code blocks, math, spoiler
// frames) is stored here and represented in the text by a placeholder; the
// placeholders are swapped back in after serialization.

import { STX, ETX } from './util.ts';
import { isBlockLevel } from './tree.ts';

// `<p>PH<br>\n</p>` is a block that ended a ```quote fence (its closing `> `
// line leaves a trailing newline): treated like `<p>PH</p>`, so a code block or
// spoiler frame is never put inside a paragraph (the reference would nest
// `<div>` in `<p>`, and a spoiler's closing `</div></div>` would close the `<p>`).
const PLACEHOLDER_RE = new RegExp(`<p>${STX}wzxhzdk:(\\d+)${ETX}(<br>\n)?</p>|${STX}wzxhzdk:(\\d+)${ETX}`, 'g');

export class HtmlStash {
  blocks: string[] = [];

  store(html: string): string {
    this.blocks.push(html);
    return placeholder(this.blocks.length - 1);
  }

  /** Substitutes stashed HTML back; stashed HTML may hold placeholders itself (up to 50 deep). */
  restore(text: string, depth = 0): string {
    if (!this.blocks.length || depth >= 50 || !text.includes(STX)) return text;
    return text.replace(PLACEHOLDER_RE, (whole, inP: string | undefined, br: string | undefined, bare: string | undefined) => {
      const stored = this.blocks[Number(inP ?? bare)];
      if (stored === undefined) return whole;
      // One pass over the text, then only into the blocks that hold placeholders.
      const html = this.restore(stored, depth + 1);
      if (inP !== undefined) return isBlockLevelHtml(stored) ? html : `<p>${html}${br ?? ''}</p>`;
      return html;
    });
  }
}

export function placeholder(i: number): string {
  return `${STX}wzxhzdk:${i}${ETX}`;
}

function isBlockLevelHtml(html: string): boolean {
  const m = /^<\/?([^ >]+)/.exec(html);
  if (!m) return false;
  if ('!?@%'.includes(m[1]![0]!)) return true;
  return isBlockLevel(m[1]!);
}
