// Inline processing, a port of Python-Markdown's InlineProcessor algorithm.
// Patterns run in priority order over each text node. A match is replaced by a
// placeholder for the node it produced, so later patterns cannot see inside it;
// the text of a produced node is processed by the patterns after the one that
// made it. Byte-compatible output depends on keeping this exact order of work.

import { Atomic, El, str, type Text } from './tree.ts';
import { STX, ETX } from './util.ts';

export type InlineNode = El | string;

/**
 * New-style patterns search from a position and report the matched span;
 * old-style ones see only the text from the current start and replace their
 * whole match. Returning null means "no match here, keep looking after it".
 */
export type InlinePattern = (
  | {
      kind: 'new';
      name: string;
      re: RegExp; // must have the g flag (searched via lastIndex)
      handle(m: RegExpExecArray, data: string): { node: InlineNode; start: number; end: number } | null;
    }
  | {
      kind: 'old';
      name: string;
      re: RegExp; // without g
      handle(m: RegExpExecArray): InlineNode | null;
    }
) & {
  /**
   * After a match at `start` was replaced by a placeholder, a position at or
   * before `start` such that every attempt of this pattern (regex and handler)
   * that begins before it reads only text before `start`: those attempts end as
   * they did before the replacement, so the search resumes there instead of at
   * 0 (see "Linear time" in README.md). Without it the search restarts at 0, as
   * Python-Markdown does.
   */
  barrier?(data: string, start: number): number;
  /**
   * True when, after a match, the search may go on right after it in the
   * unchanged text: Python's restart would resume at the placeholder (nothing
   * before it can match anew), the placeholder's characters cannot begin a
   * match the handler accepts, and no lookaround reads across it. A function
   * decides per match (the regex's span, before the handler runs) from the
   * characters around it. Such a pattern runs in
   * one pass; the text is rebuilt once. `data.slice(since, start)` is the
   * text since the previous placeholder (or the text's start), unchanged.
   */
  resumesAtPlaceholder?: boolean | ((charBefore: string, charAfter: string, data: string, start: number, since: number) => boolean);
};

/** Where a rejected match was found and where the search went on after it. */
interface Rejected {
  at: number;
  resume: number;
}

const PREFIX = `${STX}klzzwxh:`;
type Found = { node: InlineNode; start: number; end: number } | { resume: number };
/** find()'s answer when the one-pass loop must stop before a match. */
const REFUSED = Symbol('refused');

// Old-style patterns are written without the g flag; searching from an offset needs it.
const globalVersions = new WeakMap<RegExp, RegExp>();
function globalVersion(re: RegExp): RegExp {
  let g = globalVersions.get(re);
  if (!g) {
    g = new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g');
    globalVersions.set(re, g);
  }
  return g;
}
const PLACEHOLDER_RE = new RegExp(`${STX}klzzwxh:([0-9]+)${ETX}`, 'g');

export class InlineProcessor {
  private patterns: InlinePattern[];
  private stashed = new Map<string, InlineNode>();
  /** Serializes a stashed node for unescape() (links see placeholders in their href). */
  serializeNode: (node: El) => string = () => '';

  constructor(patterns: InlinePattern[]) {
    this.patterns = patterns;
  }

  private stash(node: InlineNode): string {
    const id = String(this.stashed.size).padStart(4, '0');
    this.stashed.set(id, node);
    return `${PREFIX}${id}${ETX}`;
  }

  /** Replaces inline placeholders with the text they stand for. */
  unescape(text: string): string {
    return text.replace(PLACEHOLDER_RE, (whole, id: string) => {
      const v = this.stashed.get(id);
      if (v === undefined) return whole;
      return typeof v === 'string' ? `\\${v}` : this.serializeNode(v);
    });
  }

  handleInline(data: Text, patternIndex = 0): Text {
    if (data instanceof Atomic) return data;
    let text = data;
    while (patternIndex < this.patterns.length) {
      const pattern = this.patterns[patternIndex]!;
      const through = pattern.resumesAtPlaceholder ? this.applyThrough(pattern, text, patternIndex) : null;
      text = through ? through.data : this.applyRestarting(pattern, text, patternIndex);
      if (through?.stopped) text = this.applyRestarting(pattern, text, patternIndex);
      patternIndex++;
    }
    return text;
  }

  /**
   * All matches of a pattern that resumes at its placeholder, in one pass
   * over the text, which is rebuilt once at the end. Stops before a match
   * after which the pattern would not resume there (then the caller goes on
   * restarting, from the text so far).
   */
  private applyThrough(pattern: InlinePattern, data: string, patternIndex: number): { data: string; stopped: boolean } {
    const parts: string[] = [];
    let last = 0;
    let base = 0;
    let from = 0;
    const resumes = pattern.resumesAtPlaceholder;
    // Judged on the regex's span before the handler runs: a refused match is
    // handled again by the restarting loop, and handlers may stash HTML.
    const refuses =
      typeof resumes === 'function'
        ? (start: number, end: number) => {
            // What precedes the match in the current text: a placeholder's end if one was just put there.
            const before = start > last ? data[start - 1]! : parts.length ? ETX : '';
            return !resumes(before, data[end] ?? '', data, start, last);
          }
        : undefined;
    for (;;) {
      const found = this.find(pattern, data, base, from, null, refuses);
      if (found === null) break;
      if (found === REFUSED) return { data: parts.length ? parts.join('') + data.slice(last) : data, stopped: true };
      if ('resume' in found) {
        base = from = found.resume;
        continue;
      }
      const { start, end } = found;
      parts.push(data.slice(last, start), this.placeholderFor(found.node, patternIndex));
      last = from = end;
      base = 0;
    }
    return { data: parts.length ? parts.join('') + data.slice(last) : data, stopped: false };
  }

  /** Python-Markdown's loop: after each replacement the search starts again (from the barrier). */
  private applyRestarting(pattern: InlinePattern, data: string, patternIndex: number): string {
    // Old-style patterns see the text from `base` on (Python's data[startIndex:]); `from` >= base is where to look.
    let base = 0;
    let from = 0;
    const rejected: Rejected[] = [];
    for (;;) {
      const found = this.find(pattern, data, base, from, rejected);
      if (found === null) return data;
      if ('resume' in found) {
        // An old-style rejection: Python goes on from the match's end.
        base = from = found.resume;
        continue;
      }
      const { start, end } = found;
      data = data.slice(0, start) + this.placeholderFor(found.node, patternIndex) + data.slice(end);
      // Python restarts at 0; attempts before the barrier would end as they did.
      const barrier = pattern.barrier ? Math.min(pattern.barrier(data, start), start) : 0;
      while (rejected.length && rejected[rejected.length - 1]!.at >= barrier) rejected.pop();
      base = rejected.length ? rejected[rejected.length - 1]!.resume : 0;
      from = Math.max(base, barrier);
    }
  }

  /** The next match the handler accepts, an old-style rejection, REFUSED (if `refuses` says so), or null. */
  private find(pattern: InlinePattern, data: string, base: number, from: number, rejected: Rejected[]): Found | null;
  private find(
    pattern: InlinePattern,
    data: string,
    base: number,
    from: number,
    rejected: null,
    refuses?: (start: number, end: number) => boolean,
  ): Found | typeof REFUSED | null;
  private find(
    pattern: InlinePattern,
    data: string,
    base: number,
    from: number,
    rejected: Rejected[] | null,
    refuses?: (start: number, end: number) => boolean,
  ): Found | typeof REFUSED | null {
    if (pattern.kind === 'new') {
      // Like Python's finditer: the first match whose handler accepts it wins.
      pattern.re.lastIndex = from;
      for (;;) {
        const m = pattern.re.exec(data);
        if (!m) return null;
        if (refuses?.(m.index, m.index + m[0].length)) return REFUSED;
        if (m[0].length === 0) pattern.re.lastIndex++;
        const r = pattern.handle(m, data);
        if (r) return r;
        rejected?.push({ at: m.index, resume: pattern.re.lastIndex });
      }
    }
    const rest = base ? data.slice(base) : data;
    const re = globalVersion(pattern.re);
    re.lastIndex = from - base;
    const m = re.exec(rest);
    if (!m) return null;
    const start = base + m.index;
    const end = start + m[0].length;
    if (refuses?.(start, end)) return REFUSED;
    const node = pattern.handle(m);
    if (node === null) {
      rejected?.push({ at: start, resume: end });
      return { resume: end };
    }
    return { node, start, end };
  }

  /** Processes a new node's own text and tails with the later patterns, then stashes it. */
  private placeholderFor(node: InlineNode, patternIndex: number): string {
    if (typeof node !== 'string' && !(node.text instanceof Atomic)) {
      for (const child of [node, ...node.children]) {
        if (child.text) child.text = this.handleInline(child.text, patternIndex + 1);
        if (child.tail) child.tail = this.handleInline(child.tail, patternIndex);
      }
    }
    return this.stash(node);
  }

  private processElementText(node: El, subnode: El, isText: boolean): void {
    let text: Text | null;
    if (isText) {
      text = subnode.text;
      subnode.text = null;
    } else {
      text = subnode.tail;
      subnode.tail = null;
    }
    const result = this.processPlaceholders(text, subnode, isText);
    const pos = !isText && node !== subnode ? node.children.indexOf(subnode) + 1 : 0;
    for (const child of result.reverse()) node.insert(pos, child);
  }

  private processPlaceholders(data: Text | null, parent: El, isText: boolean): El[] {
    const result: El[] = [];
    const linkText = (text: Text) => {
      if (!str(text)) return;
      if (result.length) {
        const last = result[result.length - 1]!;
        last.tail = last.tail ? str(last.tail) + str(text) : text;
      } else if (!isText) {
        parent.tail = parent.tail ? str(parent.tail) + str(text) : text;
      } else {
        parent.text = parent.text ? str(parent.text) + str(text) : text;
      }
    };
    const atomic = data instanceof Atomic;
    const s = str(data);
    let startIndex = 0;
    while (startIndex < s.length) {
      const index = s.indexOf(PREFIX, startIndex);
      if (index === -1) {
        const text = s.slice(startIndex);
        linkText(atomic ? new Atomic(text) : text);
        break;
      }
      PLACEHOLDER_RE.lastIndex = index;
      const m = PLACEHOLDER_RE.exec(s);
      const id = m ? m[1]! : null;
      const phEnd = m ? m.index + m[0].length : index + 1;
      const node = id !== null ? this.stashed.get(id) : undefined;
      if (node === undefined) {
        const end = index + PREFIX.length;
        linkText(s.slice(startIndex, end));
        startIndex = end;
        continue;
      }
      if (index > 0) linkText(s.slice(startIndex, index));
      if (typeof node === 'string') {
        linkText(node);
        startIndex = phEnd;
        continue;
      }
      for (const child of [node, ...node.children]) {
        if (child.tail && str(child.tail).trim()) this.processElementText(node, child, false);
        if (child.text && str(child.text).trim()) this.processElementText(child, child, true);
      }
      startIndex = phEnd;
      result.push(node);
    }
    return result;
  }

  /** Runs the patterns over every text and tail below root. */
  run(root: El): void {
    const stack: El[] = [root];
    while (stack.length) {
      const current = stack.pop()!;
      const insertQueue: [El, El[]][] = [];
      // Live iteration: nodes inserted after the current child are visited too.
      for (let i = 0; i < current.children.length; i++) {
        const child = current.children[i]!;
        if (child.text && !(child.text instanceof Atomic)) {
          const text = child.text;
          child.text = null;
          const lst = this.processPlaceholders(this.handleInline(text), child, true);
          stack.push(...lst);
          insertQueue.push([child, lst]);
        }
        if (child.tail) {
          const tail = this.handleInline(child.tail);
          const dummy = new El('d');
          child.tail = null;
          const tailResult = this.processPlaceholders(tail, dummy, false);
          if (dummy.tail) child.tail = dummy.tail;
          const pos = current.children.indexOf(child) + 1;
          for (const n of tailResult.reverse()) current.insert(pos, n);
        }
        if (child.children.length) stack.push(child);
      }
      for (const [el, lst] of insertQueue)
        lst.forEach((n, i) => {
          el.insert(i, n);
        });
    }
  }
}
