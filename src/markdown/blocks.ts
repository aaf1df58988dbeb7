// Block structure, following Python-Markdown's block parser with the reference
// server's choices: 2-space list indentation, "sane" lists that keep `start`,
// hash headings that need a space, CommonMark-style separate blockquotes,
// tables, no setext headings. The source is split into blocks at blank lines
// and each block goes to the first processor whose test accepts it.

import { Atomic, El, str } from './tree.ts';
import { codeEscape, pyLStrip, pyRStrip, pyStrip, stripChars } from './util.ts';
import { MENTIONS_RE, GROUP_MENTIONS_RE } from './mentions.ts';
import { MarkdownRenderError } from './errors.ts';

/** Deeper nesting (quotes, lists) is refused; the reference server hits Python's recursion limit. */
export const MAX_NESTING = 100;

interface Processor {
  test(parent: El, block: string): boolean;
  /** Returns false when it declined after all (the next processor is tried). */
  // biome-ignore lint/suspicious/noConfusingVoidType: processors that never decline return nothing
  run(parent: El, blocks: string[]): boolean | void;
}

const LIST_TYPES = ['ul', 'ol'];

export class BlockParser {
  state: string[] = [];
  private processors: Processor[];

  constructor() {
    this.processors = [
      emptyBlock(),
      listIndent(this),
      codeBlock(),
      hashHeader(this),
      table(),
      horizontalRule(this),
      list(this, 'ol'),
      list(this, 'ul'),
      blockQuote(this),
      paragraph(this),
    ];
  }

  isState(s: string): boolean {
    return this.state.length > 0 && this.state[this.state.length - 1] === s;
  }

  parseDocument(text: string): El {
    const root = new El('div');
    this.parseChunk(root, text);
    return root;
  }

  parseChunk(parent: El, text: string): void {
    this.parseBlocks(parent, text.split('\n\n'));
  }

  private depth = 0;

  parseBlocks(parent: El, blocks: string[]): void {
    if (++this.depth > MAX_NESTING) {
      throw new MarkdownRenderError('too_large', `Message is nested more than ${MAX_NESTING} levels deep`);
    }
    try {
      while (blocks.length) {
        for (const p of this.processors) {
          if (p.test(parent, blocks[0]!) && p.run(parent, blocks) !== false) break;
        }
      }
    } finally {
      this.depth--;
    }
  }
}

function detab(text: string, width: number): [string, string] {
  const lines = text.split('\n');
  const out: string[] = [];
  for (const line of lines) {
    if (line.startsWith(' '.repeat(width))) out.push(line.slice(width));
    else if (!pyStrip(line)) out.push('');
    else break;
  }
  return [out.join('\n'), lines.slice(out.length).join('\n')];
}

function looseDetab(text: string, width: number, level: number): string {
  const pad = ' '.repeat(width * level);
  return text
    .split('\n')
    .map((l) => (l.startsWith(pad) ? l.slice(pad.length) : l))
    .join('\n');
}

function isCodeBlock(el: El | null): boolean {
  return !!el && el.tag === 'pre' && el.children.length > 0 && el.children[0]!.tag === 'code';
}

function emptyBlock(): Processor {
  return {
    test: (_p, block) => !block || block.startsWith('\n'),
    run(parent, blocks) {
      const block = blocks.shift()!;
      let filler = '\n\n';
      if (block) {
        filler = '\n';
        const rest = block.slice(1);
        if (rest) blocks.unshift(rest);
      }
      const sibling = parent.last;
      if (isCodeBlock(sibling)) {
        const code = sibling!.children[0]!;
        code.text = new Atomic(str(code.text) + filler);
      }
    },
  };
}

function listIndent(parser: BlockParser): Processor {
  const width = 2;
  const INDENT_RE = /^((?: {2})+)/;
  const getLevel = (parent: El, block: string): [number, El] => {
    const m = INDENT_RE.exec(block);
    const indent = m ? m[1]!.length / width : 0;
    let level = parser.isState('list') ? 1 : 0;
    while (indent > level) {
      const child = parent.last;
      if (child && (LIST_TYPES.includes(child.tag) || child.tag === 'li')) {
        if (LIST_TYPES.includes(child.tag)) level++;
        parent = child;
      } else break;
    }
    return [level, parent];
  };
  return {
    test: (parent, block) =>
      block.startsWith(' '.repeat(width)) &&
      !parser.isState('detabbed') &&
      (parent.tag === 'li' || (parent.last !== null && LIST_TYPES.includes(parent.last.tag))),
    run(parent, blocks) {
      let block = blocks.shift()!;
      const [level, sibling] = getLevel(parent, block);
      block = looseDetab(block, width, level);
      parser.state.push('detabbed');
      if (parent.tag === 'li') {
        const last = parent.last;
        if (last && LIST_TYPES.includes(last.tag)) parser.parseBlocks(last, [block]);
        else parser.parseBlocks(parent, [block]);
      } else if (sibling.tag === 'li') {
        parser.parseBlocks(sibling, [block]);
      } else if (sibling.children.length && sibling.last!.tag === 'li') {
        const li = sibling.last!;
        if (li.text) {
          const p = new El('p');
          p.text = li.text;
          li.text = '';
          li.insert(0, p);
        }
        parser.parseChunk(li, block);
      } else {
        parser.parseBlocks(sibling.sub('li'), [block]);
      }
      parser.state.pop();
    },
  };
}

function codeBlock(): Processor {
  return {
    test: (_p, block) => block.startsWith('    '),
    run(parent, blocks) {
      const sibling = parent.last;
      let block = blocks.shift()!;
      let rest: string;
      if (isCodeBlock(sibling)) {
        const code = sibling!.children[0]!;
        [block, rest] = detab(block, 4);
        code.text = new Atomic(`${str(code.text)}\n${codeEscape(pyRStrip(block))}\n`);
      } else {
        const code = parent.sub('pre').sub('code');
        [block, rest] = detab(block, 4);
        code.text = new Atomic(`${codeEscape(pyRStrip(block))}\n`);
      }
      if (rest) blocks.unshift(rest);
    },
  };
}

function hashHeader(parser: BlockParser): Processor {
  const RE = /(?:^|\n)(#{1,6})\s((?:\\.|[^\\])*?)#*(?:\n|$)/;
  return {
    test: (_p, block) => RE.test(block),
    run(parent, blocks) {
      const block = blocks.shift()!;
      const m = RE.exec(block)!;
      const before = block.slice(0, m.index);
      const after = block.slice(m.index + m[0].length);
      if (before) parser.parseBlocks(parent, [before]);
      parent.sub(`h${m[1]!.length}`).text = pyStrip(m[2]!);
      if (after) blocks.unshift(after);
    },
  };
}

// Tables (Python-Markdown's tables extension).
function table(): Processor {
  const END_BORDER = /(?<!\\)(?:\\\\)*\|$/;
  let border = false;
  let separator: string[] = [];
  const splitRow = (row: string): string[] => {
    if (border) {
      if (row.startsWith('|')) row = row.slice(1);
      row = row.replace(END_BORDER, '');
    }
    return splitCells(row);
  };
  const stripSpaces = (s: string) => stripChars(s, ' ');
  return {
    test(_p, block) {
      // Rows are stripped only as far as they are read: every block is tested,
      // and stripping all its lines each time made a long block quadratic.
      const firstEnd = block.indexOf('\n');
      if (firstEnd < 0) return false;
      const secondEnd = block.indexOf('\n', firstEnd + 1);
      const header = stripSpaces(block.slice(0, firstEnd));
      border = header.startsWith('|') || END_BORDER.test(header);
      const cols = splitRow(header).length;
      let isTable = cols > 1;
      if (!isTable && cols === 1 && border) {
        const rows = block.split('\n');
        for (let i = 1; i < rows.length; i++) {
          const row = stripSpaces(rows[i]!);
          isTable = row.startsWith('|') || END_BORDER.test(row);
          if (!isTable) break;
        }
      }
      if (isTable) {
        const row = splitRow(stripSpaces(block.slice(firstEnd + 1, secondEnd < 0 ? undefined : secondEnd)));
        isTable = row.length === cols && /^[|:\- ]*$/.test(row.join(''));
        if (isTable) separator = row;
      }
      return isTable;
    },
    run(parent, blocks) {
      const lines = blocks.shift()!.split('\n');
      const align = separator.map((c) => {
        c = stripSpaces(c);
        if (c.startsWith(':') && c.endsWith(':')) return 'center';
        if (c.startsWith(':')) return 'left';
        if (c.endsWith(':')) return 'right';
        return null;
      });
      const t = parent.sub('table');
      const build = (row: string, section: El) => {
        const tr = section.sub('tr');
        const cells = splitRow(row);
        align.forEach((a, i) => {
          const c = tr.sub(section.tag === 'thead' ? 'th' : 'td');
          c.text = stripSpaces(cells[i] ?? '');
          if (a) c.set('style', `text-align: ${a};`);
        });
      };
      build(stripSpaces(lines[0]!), t.sub('thead'));
      const tbody = t.sub('tbody');
      const rows = lines.slice(2);
      if (!rows.length) {
        const tr = tbody.sub('tr');
        for (let i = 0; i < align.length; i++) tr.sub('td');
      }
      for (const row of rows) build(stripSpaces(row), tbody);
    },
  };
}

/** Splits a table row at pipes that are neither escaped nor inside a code span. */
function splitCells(row: string): string[] {
  const pipes: number[] = [];
  const tics: number[] = [];
  const ticPoints: [number, number, number][] = [];
  const RE = /(?:(\\\\)|(\\`+)|(`+)|(\\\|)|(\|))/g;
  for (let m = RE.exec(row); m; m = RE.exec(row)) {
    if (m[2]) {
      tics.push(m[2].length - 1);
      ticPoints.push([m.index, m.index + m[2].length - 1, 1]);
    } else if (m[3]) {
      tics.push(m[3].length);
      ticPoints.push([m.index, m.index + m[3].length - 1, 0]);
    } else if (m[5]) {
      pipes.push(m.index);
    }
  }
  const regions: [number, number][] = [];
  let pos = 0;
  while (pos < tics.length) {
    const size = tics[pos]! - ticPoints[pos]![2];
    const idx = size === 0 ? -1 : tics.slice(pos + 1).indexOf(size);
    if (idx < 0) {
      pos++;
      continue;
    }
    regions.push([ticPoints[pos]![0], ticPoints[pos + idx + 1]![1]]);
    pos += idx + 2;
  }
  const cells: string[] = [];
  let start = 0;
  for (const pipe of pipes) {
    let inCode = false;
    for (const [a, b] of regions) {
      if (pipe < a) break;
      if (pipe <= b) {
        inCode = true;
        break;
      }
    }
    if (inCode) continue;
    cells.push(row.slice(start, pipe));
    start = pipe + 1;
  }
  cells.push(row.slice(start));
  return cells;
}

/** `---`, `* * *`, `___` (runs separated by at most two spaces), alone on a line. */
function hrLine(line: string): boolean {
  const m = /^ {0,3}([-_*])/.exec(line);
  if (!m) return false;
  const ch = m[1]!;
  const body = stripChars(line.slice(m[0].length - 1), ' ');
  if (!body) return false;
  let count = 0;
  let spaces = 0;
  for (const c of body) {
    if (c === ch) {
      count++;
      spaces = 0;
    } else if (c === ' ') {
      if (++spaces > 2) return false;
    } else return false;
  }
  return count >= 3;
}

function horizontalRule(parser: BlockParser): Processor {
  let match: { start: number; end: number } | null = null;
  return {
    test(_p, block) {
      // Line by line without splitting the whole block: a rule is usually found early.
      for (let offset = 0; offset <= block.length; ) {
        let end = block.indexOf('\n', offset);
        if (end < 0) end = block.length;
        if (hrLine(block.slice(offset, end))) {
          match = { start: offset, end };
          return true;
        }
        offset = end + 1;
      }
      return false;
    },
    run(parent, blocks) {
      const block = blocks.shift()!;
      const pre = stripChars(block.slice(0, match!.start), '\n');
      if (pre) parser.parseBlocks(parent, [pre]);
      parent.sub('hr');
      const post = block.slice(match!.end).replace(/^\n+/, '');
      if (post) blocks.unshift(post);
    },
  };
}

function list(parser: BlockParser, tag: 'ol' | 'ul'): Processor {
  const width = 2;
  const RE = tag === 'ol' ? /^ {0,1}\d+\.[ ]+(.*)/ : /^ {0,1}[*+-][ ]+(.*)/;
  const CHILD_RE = tag === 'ol' ? /^ {0,1}((\d+\.))[ ]+(.*)/ : /^ {0,1}(([*+-]))[ ]+(.*)/;
  const INDENT_RE = /^ {2,3}((\d+\.)|[*+-])[ ]+.*/;
  let startsWith = '1';
  const getItems = (block: string): string[] => {
    const items: string[] = [];
    for (const line of block.split('\n')) {
      const m = CHILD_RE.exec(line);
      if (m) {
        if (!items.length && tag === 'ol') startsWith = /\d+/.exec(m[1]!)![0];
        items.push(m[3]!);
      } else if (INDENT_RE.test(line)) {
        if (items.length && items[items.length - 1]!.startsWith(' '.repeat(width))) items[items.length - 1] += '\n' + line;
        else items.push(line);
      } else if (items.length) {
        items[items.length - 1] += '\n' + line;
      } else {
        items.push(line);
      }
    }
    return items;
  };
  return {
    test: (_p, block) => RE.test(block),
    run(parent, blocks) {
      const items = getItems(blocks.shift()!);
      const sibling = parent.last;
      let lst: El;
      if (sibling && sibling.tag === tag) {
        lst = sibling;
        const lastLi = lst.last!;
        if (lastLi.text) {
          const p = new El('p');
          p.text = lastLi.text;
          lastLi.text = '';
          lastLi.insert(0, p);
        }
        const lch = lastLi.last;
        if (lch && lch.tail) {
          const p = lastLi.sub('p');
          p.text = pyLStrip(str(lch.tail));
          lch.tail = '';
        }
        const li = lst.sub('li');
        parser.state.push('looselist');
        parser.parseBlocks(li, [items.shift()!]);
        parser.state.pop();
      } else if (LIST_TYPES.includes(parent.tag)) {
        lst = parent;
      } else {
        lst = parent.sub(tag);
        if (tag === 'ol' && startsWith !== '1') lst.set('start', startsWith);
      }
      parser.state.push('list');
      for (const item of items) {
        if (item.startsWith(' '.repeat(width)) && lst.children.length) parser.parseBlocks(lst.last!, [item]);
        else parser.parseBlocks(lst.sub('li'), [item]);
      }
      parser.state.pop();
    },
  };
}

function blockQuote(parser: BlockParser): Processor {
  // A line starting with `>`, unless everything from there on is empty quote lines.
  const RE = /(^|\n)(?!(?:[ ]{0,3}>\s*(?:$|\n))*(?:$|\n))[ ]{0,3}>[ ]?(.*)/;
  const LINE_RE = new RegExp(RE.source);
  const clean = (line: string): string => {
    // Mentions inside quotes never notify.
    line = line.replace(MENTIONS_RE, (_m, _s, _w, name: string) => `@_**${name}**`);
    line = line.replace(GROUP_MENTIONS_RE, (_m, _s, _w, name: string) => `@_*${name}*`);
    const m = LINE_RE.exec(line);
    if (pyStrip(line) === '>') return '';
    return m && m.index === 0 ? m[2]! : line;
  };
  return {
    test: (_p, block) => RE.test(block),
    run(parent, blocks) {
      let block = blocks.shift()!;
      const m = RE.exec(block);
      if (m) {
        const before = block.slice(0, m.index);
        parser.parseBlocks(parent, [before]);
        block = block.slice(m.index).split('\n').map(clean).join('\n');
      }
      const quote = parent.sub('blockquote');
      parser.state.push('blockquote');
      parser.parseChunk(quote, block);
      parser.state.pop();
    },
  };
}

function paragraph(parser: BlockParser): Processor {
  return {
    test: () => true,
    run(parent, blocks) {
      const block = blocks.shift()!;
      if (!pyStrip(block)) return;
      if (parser.isState('list')) {
        const sibling = parent.last;
        if (sibling) sibling.tail = sibling.tail ? `${str(sibling.tail)}\n${block}` : `\n${block}`;
        else parent.text = parent.text ? `${str(parent.text)}\n${block}` : pyLStrip(block);
      } else {
        parent.sub('p').text = pyLStrip(block);
      }
    },
  };
}
