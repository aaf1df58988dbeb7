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

// The maximal backtick runs of the last text searched, by length: their starts
// in order. The inline engine searches one text again from each match's end.
let indexed = '';
let runsByLength = new Map<number, number[]>();

function runs(data: string): Map<number, number[]> {
  if (data === indexed) return runsByLength;
  const byLength = new Map<number, number[]>();
  let i = data.indexOf('`');
  while (i >= 0) {
    const len = runLength(data, i, BACKTICK);
    let list = byLength.get(len);
    if (!list) byLength.set(len, (list = []));
    list.push(i);
    i = data.indexOf('`', i + len);
  }
  indexed = data;
  runsByLength = byLength;
  return byLength;
}

/** Start of the first maximal run of exactly `len` backticks that starts after `after`, or -1. */
function firstRunAfter(data: string, len: number, after: number): number {
  const list = runs(data).get(len);
  if (!list) return -1;
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo < list.length ? list[lo]! : -1;
}

function match(data: string, index: number, end: number, escaped?: string, run?: string, code?: string): CodeSpanMatch {
  return Object.assign([data.slice(index, end), escaped, run, code], { index, input: data }) as unknown as CodeSpanMatch;
}

/** The first match at or after `from`, as the regex above would find it. */
export function findCodeSpan(data: string, from: number): CodeSpanMatch | null {
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
    // Longest opening first (the regex's greedy `+ backtracks), the nearest closing run of that length.
    for (let k = len; k >= 1; k--) {
      const close = firstRunAfter(data, k, p + len - 1);
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
