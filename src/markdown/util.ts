// Small helpers shared by the renderer. The renderer mirrors Python-Markdown's
// processing model (that is what the reference server runs), so a few of its
// conventions live here: placeholder markers, Python's notion of whitespace,
// and its entity-preserving escaping.

/** Start/end of text markers used for placeholders; stripped from all input. */
export const STX = '\u0002';
export const ETX = '\u0003';

/** Python's str.isspace() set (differs from JS \s: adds \x1c-\x1f and \x85, lacks \ufeff). */
export const PY_WS = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const WS_CHAR = new RegExp(`^[${PY_WS}]$`);

// Loops rather than /\s+$/-style regexes, which take quadratic time on long
// runs of whitespace that are followed by something else.
function isWs(c: string): boolean {
  return WS_CHAR.test(c);
}
export function pyStrip(s: string): string {
  return pyRStrip(pyLStrip(s));
}
export function pyLStrip(s: string): string {
  let a = 0;
  while (a < s.length && isWs(s[a]!)) a++;
  return a ? s.slice(a) : s;
}
export function pyRStrip(s: string): string {
  let b = s.length;
  while (b > 0 && isWs(s[b - 1]!)) b--;
  return b < s.length ? s.slice(0, b) : s;
}
/** Python's str.strip(chars). */
export function stripChars(s: string, chars: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && chars.includes(s[a]!)) a++;
  while (b > a && chars.includes(s[b - 1]!)) b--;
  return s.slice(a, b);
}

/** Python \w for str patterns: Unicode letters, numbers and underscore. */
export const WORD = '[\\p{L}\\p{N}_]';

// An ampersand that does not already start an entity is escaped; existing
// entities pass through (Python-Markdown's serializer does the same).
const RE_AMP = /&(?!(?:#[0-9]+|#x[0-9a-f]+|[0-9a-z]+);)/gi;

export function escapeCdata(text: string): string {
  if (text.includes('&')) text = text.replace(RE_AMP, '&amp;');
  if (text.includes('<')) text = text.replaceAll('<', '&lt;');
  if (text.includes('>')) text = text.replaceAll('>', '&gt;');
  return text;
}

export function escapeAttr(text: string): string {
  return escapeCdata(text).replaceAll('"', '&quot;');
}

/** Plain, complete HTML escaping for text we generate ourselves. */
export function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/** Django's escape(): also escapes the apostrophe. */
export function djangoEscape(text: string): string {
  return escapeHtml(text).replaceAll("'", '&#x27;');
}

/** Python-Markdown's code_escape (no quote escaping). */
export function codeEscape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** Python's str.expandtabs(tabsize). */
export function expandTabs(s: string, size: number): string {
  if (!s.includes('\t')) return s;
  let out = '';
  let col = 0;
  for (const ch of s) {
    if (ch === '\t') {
      const n = size - (col % size);
      out += ' '.repeat(n);
      col += n;
    } else {
      out += ch;
      col = ch === '\n' || ch === '\r' ? 0 : col + 1;
    }
  }
  return out;
}

/**
 * A pure string function with its recent answers kept (at most `max`, then
 * forgotten at once): hostile messages repeat one link thousands of times.
 */
export function memoized<T>(fn: (s: string) => T, max = 1000): (s: string) => T {
  const answers = new Map<string, T>();
  return (s) => {
    let v = answers.get(s);
    if (v === undefined && !answers.has(s)) {
      v = fn(s);
      if (answers.size >= max) answers.clear();
      answers.set(s, v);
    }
    return v as T;
  };
}
