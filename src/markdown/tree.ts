// A minimal element tree with the text/tail model of Python's ElementTree,
// which the block and inline processors are written against, plus the HTML
// serializer and "prettify" pass whose whitespace the reference output shows.

import { escapeAttr, escapeCdata } from './util.ts';

/** Text that later inline patterns must leave alone (Python-Markdown's AtomicString). */
export class Atomic {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

export type Text = string | Atomic;

export function str(t: Text | null | undefined): string {
  return t == null ? '' : typeof t === 'string' ? t : t.value;
}

export class El {
  tag: string;
  /**
   * Attributes as [name, value, name, value, ...] kept sorted by name, the order
   * they are serialized in. A hostile message makes thousands of elements: a flat
   * array costs far less to build and collect than a Map and a sort per element.
   */
  private attrs: string[] = [];
  text: Text | null = null;
  tail: Text | null = null;
  children: El[] = [];

  constructor(tag: string, attrs?: Record<string, string>) {
    this.tag = tag;
    if (attrs) for (const k in attrs) this.set(k, attrs[k]!);
  }

  append(child: El): El {
    this.children.push(child);
    return child;
  }

  sub(tag: string, attrs?: Record<string, string>): El {
    return this.append(new El(tag, attrs));
  }

  insert(index: number, child: El): void {
    this.children.splice(index, 0, child);
  }

  remove(child: El): void {
    const i = this.children.indexOf(child);
    if (i >= 0) this.children.splice(i, 1);
  }

  get last(): El | null {
    return this.children.length ? this.children[this.children.length - 1]! : null;
  }

  get(name: string): string | undefined {
    const a = this.attrs;
    for (let i = 0; i < a.length; i += 2) if (a[i] === name) return a[i + 1];
    return undefined;
  }

  set(name: string, value: string): void {
    const a = this.attrs;
    let i = 0;
    while (i < a.length && a[i]! < name) i += 2;
    if (a[i] === name) a[i + 1] = value;
    else a.splice(i, 0, name, value);
  }

  /** Serialized attributes, each with its leading space ("" when none). */
  attributesHtml(): string {
    const a = this.attrs;
    let out = '';
    for (let i = 0; i < a.length; i += 2) {
      const k = a[i]!;
      const v = escapeAttr(a[i + 1]!);
      out += k === v ? ' ' + v : ' ' + k + '="' + v + '"';
    }
    return out;
  }

  /** Depth-first iteration over this element and its descendants. */
  *iter(tag?: string): Generator<El> {
    // An explicit stack: nested `yield*` costs the depth per element, quadratic in deep trees.
    const stack: El[] = [this];
    while (stack.length) {
      const el = stack.pop()!;
      if (!tag || el.tag === tag) yield el;
      for (let i = el.children.length - 1; i >= 0; i--) stack.push(el.children[i]!);
    }
  }

  /** Concatenated text content (ElementTree's itertext). */
  textContent(): string {
    let s = str(this.text);
    for (const c of this.children) s += c.textContent() + str(c.tail);
    return s;
  }
}

const BLOCK_LEVEL = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'details',
  'div',
  'dl',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'hr',
  'main',
  'menu',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'table',
  'ul',
  'canvas',
  'colgroup',
  'dd',
  'body',
  'dt',
  'group',
  'html',
  'iframe',
  'li',
  'legend',
  'math',
  'map',
  'noscript',
  'output',
  'object',
  'option',
  'progress',
  'script',
  'style',
  'summary',
  'tbody',
  'td',
  'textarea',
  'tfoot',
  'th',
  'thead',
  'tr',
  'video',
]);

export function isBlockLevel(tag: string): boolean {
  return BLOCK_LEVEL.has(tag.toLowerCase());
}

const EMPTY = new Set(['area', 'base', 'basefont', 'br', 'col', 'frame', 'hr', 'img', 'input', 'isindex', 'link', 'meta', 'param']);

// Serialization builds one string by concatenation (V8 joins ropes cheaply):
// a hostile message can hold thousands of elements, and this runs once per render.
function serializeInto(el: El): string {
  let out = '<' + el.tag + el.attributesHtml() + '>';
  if (el.text) out += escapeCdata(str(el.text));
  for (const c of el.children) out += serializeInto(c);
  if (!EMPTY.has(el.tag)) out += '</' + el.tag + '>';
  if (el.tail) out += escapeCdata(str(el.tail));
  return out;
}

export function serialize(el: El): string {
  return serializeInto(el);
}

/** Serializes only the children (and text) of a container element. */
export function serializeChildren(el: El): string {
  let out = el.text ? escapeCdata(str(el.text)) : '';
  for (const c of el.children) out += serializeInto(c);
  return out;
}

function blank(t: Text | null): boolean {
  return !t || str(t).trim() === '';
}

function prettifyEl(el: El): void {
  if (isBlockLevel(el.tag) && el.tag !== 'code' && el.tag !== 'pre') {
    if (blank(el.text) && el.children.length && isBlockLevel(el.children[0]!.tag)) el.text = '\n';
    for (const c of el.children) if (isBlockLevel(c.tag)) prettifyEl(c);
  }
  if (blank(el.tail)) el.tail = '\n';
}

/** Python-Markdown's PrettifyTreeprocessor: newlines between blocks and after <br>. */
export function prettify(root: El): void {
  prettifyEl(root);
  for (const br of root.iter('br')) {
    br.tail = blank(br.tail) ? '\n' : '\n' + str(br.tail);
  }
  for (const pre of root.iter('pre')) {
    const code = pre.children[0];
    if (code && code.tag === 'code' && !code.children.length && code.text != null) {
      code.text = new Atomic(str(code.text).trimEnd() + '\n');
    }
  }
}
