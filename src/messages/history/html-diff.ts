// `content_html_diff` of the edit history (digest 1.14): the new rendering with
// what the edit added and removed marked, as the reference marks it:
// `<span class="highlight_text_inserted">` and `<span class="highlight_text_deleted">`,
// all in one `<div>`.
//
// Safe by construction: the output's tags are exactly the new rendering's tags,
// in order (removed tags are dropped, never replayed), and the marks wrap text
// only. Both inputs come from the server's renderer, so their text is escaped.

/** A tag, a word, or a run of whitespace. */
type Token = { tag: boolean; text: string };

function tokenize(html: string): Token[] {
  const tokens: Token[] = [];
  for (const part of html.split(/(<[^>]*>)/)) {
    if (part === '') continue;
    if (part.startsWith('<') && part.endsWith('>')) tokens.push({ tag: true, text: part });
    else for (const word of part.match(/\S+|\s+/g) ?? []) tokens.push({ tag: false, text: word });
  }
  return tokens;
}

type Op = { kind: 'equal' | 'insert' | 'delete'; token: Token };

/** Past this many differences the middle part is shown as replaced wholesale (bounded time and memory). */
const MAX_EDIT_DISTANCE = 2000;

const sameToken = (x: Token, y: Token) => x.tag === y.tag && x.text === y.text;

/** The shortest edit script between two token lists (Myers' algorithm, O((N+M)·D)). */
function diff(a: Token[], b: Token[]): Op[] {
  // Common ends first: most edits change a little in the middle.
  let start = 0;
  while (start < a.length && start < b.length && sameToken(a[start], b[start])) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && sameToken(a[endA - 1], b[endB - 1])) {
    endA--;
    endB--;
  }
  const head: Op[] = a.slice(0, start).map((token) => ({ kind: 'equal', token }));
  const tail: Op[] = a.slice(endA).map((token) => ({ kind: 'equal', token }));
  return [...head, ...middle(a.slice(start, endA), b.slice(start, endB)), ...tail];
}

function middle(a: Token[], b: Token[]): Op[] {
  const n = a.length;
  const m = b.length;
  const wholesale = (): Op[] => [...a.map((token): Op => ({ kind: 'delete', token })), ...b.map((token): Op => ({ kind: 'insert', token }))];
  if (n === 0 || m === 0) return wholesale();
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d]: the furthest x on each diagonal k in [-d, d] after d differences.
  const trace: Int32Array[] = [];
  let done = false;
  for (let d = 0; d <= max && !done; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && sameToken(a[x], b[y])) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        done = true;
        break;
      }
    }
    trace.push(v.slice(offset - d, offset + d + 1));
  }
  if (!done) return wholesale();
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d > 0; d--) {
    const before = trace[d - 1];
    const at = (k: number) => before[k + d - 1];
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: 'equal', token: a[--x] });
      y--;
    }
    if (x === prevX) ops.push({ kind: 'insert', token: b[--y] });
    else ops.push({ kind: 'delete', token: a[--x] });
  }
  while (x > 0 && y > 0) {
    ops.push({ kind: 'equal', token: a[--x] });
    y--;
  }
  return ops.reverse();
}

const INSERTED = 'highlight_text_inserted';
const DELETED = 'highlight_text_deleted';

/** The new rendering with the changes from the old one marked. */
export function highlightHtmlDifferences(before: string, after: string): string {
  let out = '';
  let open: string | null = null;
  let pending = '';
  const flush = () => {
    if (open !== null && pending !== '') {
      // Whitespace stays outside the mark, as words are what changed.
      const body = pending.trimEnd();
      out += body === '' ? pending : `<span class="${open}">${body}</span>${pending.slice(body.length)}`;
    } else {
      out += pending;
    }
    pending = '';
    open = null;
  };
  for (const { kind, token } of diff(tokenize(before), tokenize(after))) {
    if (token.tag) {
      // Removed tags are dropped; kept and added tags keep the new structure.
      if (kind === 'delete') continue;
      flush();
      out += token.text;
      continue;
    }
    if (token.text.trim() === '') {
      // Whitespace joins an open mark (removed whitespace only a removal's), else stays plain.
      if (open !== null && (kind !== 'delete' || open === DELETED)) pending += token.text;
      else if (kind !== 'delete') out += token.text;
      continue;
    }
    const mark = kind === 'insert' ? INSERTED : kind === 'delete' ? DELETED : null;
    if (mark !== open) flush();
    if (mark === null) {
      out += token.text;
    } else {
      open = mark;
      pending += token.text;
    }
  }
  flush();
  return `<div>${out}</div>`;
}
