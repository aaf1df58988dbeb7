// Where inline code spans are, found in linear time. Python-Markdown's
// backtick pattern, /(?<!\\)((?:\\{2})+)(?=`+)|(?<!\\)(`+)(.+?)(?<!`)\2(?!`)/s,
// rescans the rest of the text from every backtick run that has no closing
// run of its length (runs of every length from 1 to 139 take seconds); this
// matcher gives the same matches from one index of the runs.

/** The reference's pattern, for comparison in tests (quadratic on unclosed runs). */
export const CODE_SPAN_RE = /(?:(?<!\\)((?:\\{2})+)(?=`+)|(?<!\\)(`+)(.+?)(?<!`)\2(?!`))/gsu;

const BACKSLASH = 92;
const BACKTICK = 96;

/** A match in RegExp's shape: [whole, escaped backslashes, opening run, code]. */
export type CodeSpanMatch = RegExpExecArray;

/** The backtick pattern as a `{lastIndex, exec}` object for the inline engine. */
export function codeSpanMatcher(): RegExp {
  const matcher = {
    lastIndex: 0,
    exec(data: string): CodeSpanMatch | null {
      const m = findCodeSpan(data, matcher.lastIndex);
      matcher.lastIndex = m ? m.index + m[0].length : 0;
      return m;
    },
  };
  return matcher as unknown as RegExp;
}

function runLength(data: string, at: number, code: number): number {
  let i = at;
  while (data.charCodeAt(i) === code) i++;
  return i - at;
}

/** Maximal backtick runs from `from` on, by length: their starts in order. */
function indexRuns(data: string, from: number): Map<number, number[]> {
  const byLength = new Map<number, number[]>();
  let i = data.indexOf('`', from);
  while (i >= 0) {
    const len = runLength(data, i, BACKTICK);
    // A run that begins before `from` is no closing candidate of its full length.
    if (i > from || data.charCodeAt(i - 1) !== BACKTICK) {
      let list = byLength.get(len);
      if (!list) byLength.set(len, (list = []));
      list.push(i);
    }
    i = data.indexOf('`', i + len);
  }
  return byLength;
}

function match(data: string, index: number, end: number, escaped?: string, run?: string, code?: string): CodeSpanMatch {
  return Object.assign([data.slice(index, end), escaped, run, code], { index, input: data }) as unknown as CodeSpanMatch;
}

/** The first match at or after `from`, as the regex above would find it. */
export function findCodeSpan(data: string, from: number): CodeSpanMatch | null {
  let runs: Map<number, number[]> | null = null;
  // Per run length, how far the search for a closing run has got (openings come in order).
  const cursor = new Map<number, number>();
  const firstRunAfter = (len: number, after: number): number => {
    const list = runs!.get(len);
    if (!list) return -1;
    let i = cursor.get(len) ?? 0;
    while (i < list.length && list[i]! <= after) i++;
    cursor.set(len, i);
    return i < list.length ? list[i]! : -1;
  };
  for (let p = from; p < data.length; p++) {
    const c = data.charCodeAt(p);
    if (c !== BACKSLASH && c !== BACKTICK) {
      // Skip to the next character that can open a match.
      const next = nextCandidate(data, p + 1);
      if (next < 0) return null;
      p = next - 1;
      continue;
    }
    if (p > 0 && data.charCodeAt(p - 1) === BACKSLASH) continue;
    if (c === BACKSLASH) {
      const n = runLength(data, p, BACKSLASH);
      if (n % 2 === 0 && data.charCodeAt(p + n) === BACKTICK) return match(data, p, p + n, data.slice(p, p + n));
      continue;
    }
    const len = runLength(data, p, BACKTICK);
    runs ??= indexRuns(data, from);
    // Longest opening first (the regex's greedy `+ backtracks), the nearest closing run of that length.
    for (let k = len; k >= 1; k--) {
      const close = firstRunAfter(k, p + len - 1);
      if (close >= 0) return match(data, p, close + k, undefined, '`'.repeat(k), data.slice(p + k, close));
    }
    // Later starts in this run open shorter runs with the same closings after them: they fail too.
    p += len - 1;
  }
  return null;
}

function nextCandidate(data: string, from: number): number {
  const a = data.indexOf('`', from);
  const b = data.indexOf('\\', from);
  if (a < 0) return b;
  if (b < 0) return a;
  return Math.min(a, b);
}
