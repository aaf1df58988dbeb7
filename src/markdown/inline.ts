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
export type InlinePattern =
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
    };

const PREFIX = `${STX}klzzwxh:`;
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
    let start = 0;
    while (patternIndex < this.patterns.length) {
      const [next, matched, nextStart] = this.applyPattern(this.patterns[patternIndex]!, text, patternIndex, start);
      text = next;
      start = nextStart;
      if (!matched) patternIndex++;
    }
    return text;
  }

  private applyPattern(
    pattern: InlinePattern,
    data: string,
    patternIndex: number,
    startIndex: number,
  ): [string, boolean, number] {
    let node: InlineNode;
    let start: number;
    let end: number;
    if (pattern.kind === 'new') {
      // Like Python's finditer: the first match whose handler accepts it wins.
      pattern.re.lastIndex = startIndex;
      for (;;) {
        const m = pattern.re.exec(data);
        if (!m) return [data, false, 0];
        if (m[0].length === 0) pattern.re.lastIndex++;
        const r = pattern.handle(m, data);
        if (r) {
          ({ node, start, end } = r);
          break;
        }
      }
    } else {
      const rest = data.slice(startIndex);
      const m = pattern.re.exec(rest);
      if (!m) return [data, false, 0];
      const r = pattern.handle(m);
      if (r === null) return [data, true, startIndex + m.index + m[0].length];
      node = r;
      start = startIndex + m.index;
      end = start + m[0].length;
    }
    if (typeof node !== 'string' && !(node.text instanceof Atomic)) {
      for (const child of [node, ...node.children]) {
        if (child.text) child.text = this.handleInline(child.text, patternIndex + 1);
        if (child.tail) child.tail = this.handleInline(child.tail, patternIndex);
      }
    }
    const ph = this.stash(node);
    return [data.slice(0, start) + ph + data.slice(end), true, 0];
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
      for (const [el, lst] of insertQueue) lst.forEach((n, i) => el.insert(i, n));
    }
  }
}
