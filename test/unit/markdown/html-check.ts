// A small checker for rendered HTML: tags balance, no dangerous tags,
// attributes or URLs. Text is always escaped by the renderer, so every "<"
// in the output must begin a tag.

const VOID = new Set(['br', 'img', 'hr']);
const FORBIDDEN_TAGS = new Set([
  'script',
  'style',
  'iframe',
  'object',
  'embed',
  'form',
  'input',
  'textarea',
  'button',
  'link',
  'meta',
  'base',
  'frame',
  'frameset',
  'applet',
  'template',
  'noscript',
  'title',
  'xmp',
  'plaintext',
  'foreignobject',
  'animate',
  'set',
  'svg:script',
  'audio',
  'source',
  'select',
  'option',
  'marquee',
  'body',
  'html',
  'head',
]);
// Block elements a browser would not keep inside a paragraph (it would close the <p> early).
const BLOCK = new Set(['p', 'div', 'blockquote', 'ul', 'ol', 'li', 'table', 'pre', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr']);
const URL_ATTRS = new Set(['href', 'src', 'xlink:href', 'action', 'formaction', 'data', 'poster', 'background']);

function decodeEntities(s: string): string {
  return s
    .replace(/&#x([0-9a-f]+);?/gi, (_m, h: string) => String.fromCodePoint(Math.min(parseInt(h, 16), 0x10ffff)))
    .replace(/&#([0-9]+);?/g, (_m, d: string) => String.fromCodePoint(Math.min(parseInt(d, 10), 0x10ffff)))
    .replace(/&colon;/gi, ':')
    .replace(/&tab;/gi, '\t')
    .replace(/&newline;/gi, '\n')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}

/** Returns the problems found (empty when the HTML is safe and balanced). */
export function checkHtml(html: string): string[] {
  const problems: string[] = [];
  const stack: string[] = [];
  const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9:-]*)((?:\s+[a-zA-Z_:][-a-zA-Z0-9_:.]*(?:="[^"]*")?)*)\s*(\/?)>/y;
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt < 0) break;
    TAG.lastIndex = lt;
    const m = TAG.exec(html);
    if (!m) {
      problems.push(`unescaped "<" at ${lt}: ${JSON.stringify(html.slice(lt, lt + 40))}`);
      i = lt + 1;
      continue;
    }
    const [, closing, rawName, attrs] = m;
    const name = rawName!.toLowerCase();
    if (FORBIDDEN_TAGS.has(name)) problems.push(`forbidden tag <${name}>`);
    if (closing) {
      const top = stack.pop();
      if (top !== name) problems.push(`</${name}> closes <${top ?? 'nothing'}>`);
    } else {
      for (const a of attrs!.matchAll(/([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:="([^"]*)")?/g)) {
        const attr = a[1]!.toLowerCase();
        const value = decodeEntities(a[2] ?? '');
        if (attr.startsWith('on')) problems.push(`event handler attribute ${attr}`);
        if (attr === 'srcdoc' || attr === 'formaction') problems.push(`dangerous attribute ${attr}`);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters hidden in a URL are what it looks for
        const compact = value.replace(/[\x00-\x20\x7f-\x9f]/g, '').toLowerCase();
        if (URL_ATTRS.has(attr)) {
          if (/^(javascript|vbscript|livescript):/.test(compact)) problems.push(`script URL in ${attr}: ${value}`);
          if (compact.startsWith('data:') && !(name === 'img' && /^data:image\/(png|gif|jpeg|webp);/.test(compact))) {
            problems.push(`data: URL in ${attr}: ${value}`);
          }
        }
        if (attr === 'style' && /expression\(|javascript:|url\(/i.test(value)) problems.push(`unsafe style: ${value}`);
      }
      if (stack.includes('p') && BLOCK.has(name)) problems.push(`<${name}> inside <p>`);
      if (!VOID.has(name)) stack.push(name);
    }
    i = lt + m[0].length;
  }
  if (stack.length) problems.push(`unclosed tags: ${stack.join(', ')}`);
  return problems;
}
