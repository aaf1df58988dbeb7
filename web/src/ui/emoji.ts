// Emoji: names and codes come from the server's own table (a lazily loaded chunk);
// unicode emoji show as the system's glyphs, custom emoji as their images.

import type { Store } from '../state.ts';

export interface EmojiChoice {
  name: string;
  code: string;
  type: string;
  url?: string;
}

export const POPULAR = ['+1', 'tada', 'heart', 'joy', 'smile', 'working_on_it', 'check', 'eyes', 'thinking', 'octopus', 'rocket'];

let table: [string, string][] | null = null;
let loading: Promise<[string, string][]> | null = null;

export function loadEmoji(): Promise<[string, string][]> {
  loading ??= import('virtual:emoji-names').then((m) => (table = m.default as [string, string][]));
  return loading;
}

export function emojiTable(): [string, string][] | null {
  return table;
}

export function codeToChar(code: string): string {
  try {
    return String.fromCodePoint(...code.split('-').map((h) => parseInt(h, 16)));
  } catch {
    return '';
  }
}

/** Unicode and custom emoji whose names contain the query, prefix matches first. */
export function searchEmoji(store: Store, query: string, limit = 60): EmojiChoice[] {
  const q = query.toLowerCase().replace(/^:/, '');
  const out: EmojiChoice[] = [];
  for (const e of Object.values(store.realmEmoji)) {
    if (!e.deactivated && e.name.includes(q)) out.push({ name: e.name, code: e.id, type: 'realm_emoji', url: e.source_url });
  }
  const rows = table ?? [];
  const prefix: EmojiChoice[] = [];
  const inner: EmojiChoice[] = [];
  for (const [name, code] of rows) {
    if (q === '' || name.startsWith(q)) prefix.push({ name, code, type: 'unicode_emoji' });
    else if (name.includes(q)) inner.push({ name, code, type: 'unicode_emoji' });
    if (prefix.length >= limit) break;
  }
  if (q === '') {
    const popular = POPULAR.map((n) => rows.find((r) => r[0] === n)).filter((r): r is [string, string] => !!r);
    return [...popular.map(([name, code]) => ({ name, code, type: 'unicode_emoji' })), ...prefix].slice(0, limit);
  }
  return [...out, ...prefix, ...inner].slice(0, limit);
}

/** Replaces the server's emoji spans (text `:name:`) with the glyph itself. */
export function showEmojiGlyphs(root: HTMLElement): void {
  for (const span of root.querySelectorAll<HTMLElement>('span.emoji')) {
    if (span.dataset.glyph) continue;
    const cls = [...span.classList].find((c) => c.startsWith('emoji-'));
    const glyph = cls ? codeToChar(cls.slice('emoji-'.length)) : '';
    if (glyph) {
      span.textContent = glyph;
      span.dataset.glyph = '1';
    }
  }
}
