// Python-Markdown's inline link syntax, `[text](href "title")`: the bracket
// and parenthesis scanning that decides where a link's text and target end.

// Python-Markdown's link syntax: [text](href "title"). Its scan for the
// closing bracket is plain bracket matching, so the matches are computed once
// per text instead of rescanning from every "[" (quadratic on "[[[[...").
let bracketData = '';
let bracketClose = new Map<number, number>();

function closingBracket(data: string, open: number): number | undefined {
  if (data !== bracketData) {
    bracketData = data;
    bracketClose = new Map();
    const stack: number[] = [];
    for (let i = 0; i < data.length; i++) {
      if (data[i] === '[') stack.push(i);
      else if (data[i] === ']' && stack.length) bracketClose.set(stack.pop()!, i);
    }
  }
  return bracketClose.get(open);
}

export function getLinkText(data: string, index: number): [string, number, boolean] {
  const close = closingBracket(data, index - 1);
  if (close === undefined) return ['', data.length, false];
  return [data.slice(index, close), close + 1, true];
}

const RE_LINK = /\(\s*(?:(<[^<>]*>)\s*(?:('[^']*'|"[^"]*")\s*)?\))?/sy;

export function getLink(data: string, index: number, unescapeText: (s: string) => string): [string, string | null, number, boolean] {
  let href = '';
  let title: string | null = null;
  let handled = false;
  RE_LINK.lastIndex = index;
  const m = RE_LINK.exec(data);
  if (m && m[1]) {
    href = m[1].slice(1, -1).trim();
    if (m[2]) title = m[2].slice(1, -1);
    index = m.index + m[0].length;
    handled = true;
  } else if (m) {
    let bracketCount = 1;
    let backtrackCount = 1;
    const startIndex = m.index + m[0].length;
    index = startIndex;
    let lastBracket = -1;
    let quote: string | null = null;
    let startQuote = -1;
    let exitQuote = -1;
    let ignoreMatches = false;
    let altQuote: string | null = null;
    let startAltQuote = -1;
    let exitAltQuote = -1;
    let last = '';
    for (let pos = index; pos < data.length; pos++) {
      const c = data[pos]!;
      if (c === '(') {
        if (!ignoreMatches) bracketCount++;
        else if (backtrackCount > 0) backtrackCount--;
      } else if (c === ')') {
        if ((exitQuote !== -1 && quote === last) || (exitAltQuote !== -1 && altQuote === last)) bracketCount = 0;
        else if (!ignoreMatches) bracketCount--;
        else if (backtrackCount > 0) {
          backtrackCount--;
          if (backtrackCount === 0) lastBracket = index + 1;
        }
      } else if (c === "'" || c === '"') {
        if (!quote) {
          ignoreMatches = true;
          backtrackCount = bracketCount;
          bracketCount = 1;
          startQuote = index + 1;
          quote = c;
        } else if (c !== quote && !altQuote) {
          startAltQuote = index + 1;
          altQuote = c;
        } else if (c === quote) {
          exitQuote = index + 1;
        } else if (altQuote && c === altQuote) {
          exitAltQuote = index + 1;
        }
      }
      index++;
      if (bracketCount === 0) {
        if (exitQuote >= 0 && quote === last) {
          href = data.slice(startIndex, startQuote - 1);
          title = data.slice(startQuote, exitQuote - 1);
        } else if (exitAltQuote >= 0 && altQuote === last) {
          href = data.slice(startIndex, startAltQuote - 1);
          title = data.slice(startAltQuote, exitAltQuote - 1);
        } else {
          href = data.slice(startIndex, index - 1);
        }
        break;
      }
      if (c !== ' ') last = c;
    }
    if (bracketCount !== 0 && backtrackCount === 0) {
      href = data.slice(startIndex, lastBracket - 1);
      index = lastBracket;
      bracketCount = 0;
    }
    handled = bracketCount === 0;
  }
  if (title !== null)
    title = unescapeText(title.trim())
      .replace(/^(["'])(.*)\1$/s, '$2')
      .replace(/\s/g, ' ');
  href = unescapeText(href).trim();
  return [href, title, index, handled];
}
