// Fenced code blocks: the reference server highlights with Pygments and tags the
// block with the Pygments language name. We highlight with highlight.js and emit
// Pygments' short token classes (`k`, `s2`, `nf`, ...) so clients' existing
// stylesheets apply. Token boundaries can differ from Pygments'; see README.

import hljs from 'highlight.js';
import { escapeHtml, stripChars } from './util.ts';

// Pygments display names (`data-code-language`) for common aliases. Unknown
// languages keep the author's spelling, as the reference server does.
const PYGMENTS_NAMES: Record<string, string> = {
  python: 'Python',
  py: 'Python',
  py3: 'Python',
  python3: 'Python',
  sage: 'Python',
  bazel: 'Python',
  starlark: 'Python',
  python2: 'Python 2.x',
  py2: 'Python 2.x',
  pycon: 'Python console session',
  pytb: 'Python Traceback',
  javascript: 'JavaScript',
  js: 'JavaScript',
  mjs: 'JavaScript',
  cjs: 'JavaScript',
  jsx: 'JSX',
  typescript: 'TypeScript',
  ts: 'TypeScript',
  tsx: 'TSX',
  json: 'JSON',
  json5: 'JSON5',
  jsonld: 'JSON-LD',
  php: 'PHP',
  php3: 'PHP',
  php4: 'PHP',
  php5: 'PHP',
  'css+php': 'CSS+PHP',
  'html+php': 'HTML+PHP',
  'javascript+php': 'JavaScript+PHP',
  'js+php': 'JavaScript+PHP',
  'xml+php': 'XML+PHP',
  tex: 'TeX',
  latex: 'TeX',
  html: 'HTML',
  xml: 'XML',
  css: 'CSS',
  scss: 'SCSS',
  sass: 'Sass',
  less: 'LessCss',
  c: 'C',
  h: 'C',
  cpp: 'C++',
  'c++': 'C++',
  cxx: 'C++',
  hpp: 'C++',
  csharp: 'C#',
  'c#': 'C#',
  cs: 'C#',
  java: 'Java',
  kotlin: 'Kotlin',
  scala: 'Scala',
  go: 'Go',
  golang: 'Go',
  rust: 'Rust',
  rs: 'Rust',
  ruby: 'Ruby',
  rb: 'Ruby',
  perl: 'Perl',
  pl: 'Perl',
  lua: 'Lua',
  r: 'S',
  swift: 'Swift',
  'objective-c': 'Objective-C',
  objc: 'Objective-C',
  haskell: 'Haskell',
  hs: 'Haskell',
  elixir: 'Elixir',
  erlang: 'Erlang',
  clojure: 'Clojure',
  ocaml: 'OCaml',
  fsharp: 'F#',
  dart: 'Dart',
  julia: 'Julia',
  matlab: 'Matlab',
  sql: 'SQL',
  mysql: 'MySQL',
  postgresql: 'PostgreSQL SQL dialect',
  postgres: 'PostgreSQL SQL dialect',
  sqlite3: 'sqlite3con',
  bash: 'Bash',
  sh: 'Bash',
  shell: 'Bash',
  zsh: 'Bash',
  ksh: 'Bash',
  console: 'Bash Session',
  'shell-session': 'Bash Session',
  powershell: 'PowerShell',
  ps1: 'PowerShell',
  bat: 'Batchfile',
  batch: 'Batchfile',
  dockerfile: 'Docker',
  docker: 'Docker',
  yaml: 'YAML',
  yml: 'YAML',
  toml: 'TOML',
  ini: 'INI',
  cfg: 'INI',
  diff: 'Diff',
  patch: 'Diff',
  udiff: 'Diff',
  markdown: 'Markdown',
  md: 'Markdown',
  rst: 'reStructuredText',
  nginx: 'Nginx configuration file',
  make: 'Makefile',
  makefile: 'Makefile',
  cmake: 'CMake',
  graphql: 'GraphQL',
  protobuf: 'Protocol Buffer',
  proto: 'Protocol Buffer',
  vim: 'VimL',
  text: 'Text only',
  plaintext: 'Text only',
  elisp: 'EmacsLisp',
  lisp: 'Common Lisp',
  scheme: 'Scheme',
  groovy: 'Groovy',
  nim: 'Nim',
  zig: 'Zig',
  vb: 'VB.net',
  'vb.net': 'VB.net',
  coffeescript: 'CoffeeScript',
  coffee: 'CoffeeScript',
  handlebars: 'Handlebars',
  django: 'Django/Jinja',
  jinja: 'Django/Jinja',
  erb: 'ERB',
  http: 'HTTP',
  apache: 'ApacheConf',
  asm: 'GAS',
  nasm: 'NASM',
  verilog: 'verilog',
  vhdl: 'vhdl',
  d: 'D',
  fortran: 'Fortran',
  pascal: 'Delphi',
  delphi: 'Delphi',
  prolog: 'Prolog',
};

// Pygments aliases that highlight.js spells differently.
const HLJS_ALIASES: Record<string, string> = {
  py2: 'python',
  python2: 'python',
  py3: 'python',
  python3: 'python',
  sage: 'python',
  bazel: 'python',
  'css+php': 'php',
  'html+php': 'php',
  'javascript+php': 'php',
  'js+php': 'php',
  'xml+php': 'php',
  tex: 'latex',
  console: 'shell',
  udiff: 'diff',
  sqlite3: 'sql',
  postgres: 'pgsql',
  postgresql: 'pgsql',
  golang: 'go',
  'objective-c': 'objectivec',
  'c#': 'csharp',
  'vb.net': 'vbnet',
  jinja: 'django',
};

// highlight.js scope -> Pygments short class. The first matching prefix wins.
const SCOPE_CLASSES: [string, string][] = [
  ['keyword', 'k'],
  ['built_in', 'nb'],
  ['type', 'kt'],
  ['literal', 'kc'],
  ['number', 'm'],
  ['operator', 'o'],
  ['punctuation', 'p'],
  ['regexp', 'sr'],
  ['subst', 'si'],
  ['symbol', 'ss'],
  ['char.escape', 'se'],
  ['string', 's'],
  ['title.function', 'nf'],
  ['title.class', 'nc'],
  ['title', 'nf'],
  ['class', ''],
  ['function', ''],
  ['doctag', 'sd'],
  ['comment', 'c'],
  ['meta', 'cp'],
  ['section', 'gh'],
  ['tag', 'nt'],
  ['name', 'nt'],
  ['selector-tag', 'nt'],
  ['selector-class', 'nc'],
  ['selector-id', 'nn'],
  ['selector', 'nt'],
  ['attribute', 'na'],
  ['attr', 'na'],
  ['variable.language', 'bp'],
  ['variable', 'nv'],
  ['template-variable', 'nv'],
  ['property', 'py'],
  ['params', ''],
  ['link', 'nl'],
  ['quote', 'ge'],
  ['emphasis', 'ge'],
  ['strong', 'gs'],
  ['addition', 'gi'],
  ['deletion', 'gd'],
  ['bullet', 'k'],
  ['code', 'sb'],
];

function classFor(scope: string | undefined, text: string): string {
  if (!scope) return '';
  for (const [prefix, cls] of SCOPE_CLASSES) {
    if (scope === prefix || scope.startsWith(prefix + '.') || scope.startsWith(prefix + '_')) {
      if (cls === 's') return text.startsWith('"') ? 's2' : text.startsWith("'") ? 's1' : 's';
      if (cls === 'm') return /^\d+$/.test(text) ? 'mi' : /^0x/i.test(text) ? 'mh' : /[.eE]/.test(text) ? 'mf' : 'm';
      if (cls === 'c') return text.startsWith('#!') ? 'ch' : text.includes('\n') ? 'cm' : 'c1';
      return cls;
    }
  }
  return '';
}

interface EmitterNode {
  scope?: string;
  children: (string | EmitterNode)[];
}

// Text highlight.js leaves unscoped is split the way Pygments' lexers do:
// names, numbers, operators and punctuation get their classes.
const FALLBACK_TOKEN = /([A-Za-z_][A-Za-z0-9_]*)|(\d+\.\d*|\.\d+|\d+)|([-+*/%=<>!&|^~?@]+)|([()[\]{},;:.]+)|(\s+)|([\s\S])/g;

interface LexerStyle {
  name: string;
  pseudo: ReadonlySet<string>;
  /** TeX's lexer only marks braces. */
  bracesOnly?: boolean;
  /** highlight.js scopes this lexer does not have (PHP is lexed "startinline": `<?php` is plain code). */
  ignoreScopes?: ReadonlySet<string>;
}

const PYTHON_PSEUDO = new Set(['self', 'cls']);
const STYLES: Record<string, LexerStyle> = {
  python: { name: 'n', pseudo: PYTHON_PSEUDO },
  php: { name: 'nx', pseudo: new Set(['this']), ignoreScopes: new Set(['meta']) },
  javascript: { name: 'nx', pseudo: new Set(['this']) },
  typescript: { name: 'nx', pseudo: new Set(['this']) },
  latex: { name: '', pseudo: new Set(), bracesOnly: true },
};
const DEFAULT_STYLE: LexerStyle = { name: 'n', pseudo: new Set() };

function lexUnscoped(text: string, style: LexerStyle, out: [string, string][]): void {
  if (style.bracesOnly) {
    for (const part of text.split(/([{}])/)) if (part) out.push([part === '{' || part === '}' ? 'nb' : '', part]);
    return;
  }
  for (const m of text.matchAll(FALLBACK_TOKEN)) {
    const prev = out[out.length - 1];
    if (m[1]) out.push([style.pseudo.has(m[1]) ? 'bp' : style.name, m[1]]);
    else if (m[2]) out.push([m[2].includes('.') ? 'mf' : 'mi', m[2]]);
    else if (m[3]) out.push(['o', m[3]]);
    else if (m[4]) out.push(['p', m[4]]);
    else if (m[5] && prev && prev[0] === 'k' && (prev[1] === 'def' || prev[1] === 'class') && !m[5].includes('\n')) out.push(['w', m[5]]);
    else out.push(['', m[0]]);
  }
}

function flatten(node: EmitterNode, inherited: string, out: [string, string][], style: LexerStyle): void {
  for (const child of node.children) {
    if (typeof child === 'string') {
      if (inherited) out.push([inherited, child]);
      else lexUnscoped(child, style, out);
    } else {
      const own = style.ignoreScopes?.has(child.scope ?? '') ? '' : classFor(child.scope, nodeText(child));
      flatten(child, own || inherited, out, style);
    }
  }
}

function nodeText(node: EmitterNode): string {
  return node.children.map((c) => (typeof c === 'string' ? c : nodeText(c))).join('');
}

/** Pygments' HtmlFormatter escaping. */
function pygEscape(s: string): string {
  return escapeHtml(s).replaceAll("'", '&#39;');
}

function formatTokens(tokens: [string, string][]): string {
  // Merge neighbours of one class, then wrap each line piece separately:
  // Pygments never lets a span cross a newline.
  const merged: [string, string][] = [];
  for (const [cls, text] of tokens) {
    const prev = merged[merged.length - 1];
    if (prev && prev[0] === cls) prev[1] += text;
    else merged.push([cls, text]);
  }
  let html = '';
  for (const [cls, text] of merged) {
    html += text
      .split('\n')
      .map((part) => (part && cls ? `<span class="${cls}">${pygEscape(part)}</span>` : pygEscape(part)))
      .join('\n');
  }
  return html;
}

function hljsLanguage(lang: string): string | null {
  const name = HLJS_ALIASES[lang] ?? lang;
  return hljs.getLanguage(name) ? name : null;
}

function tokenize(lang: string | null, code: string): [string, string][] {
  const language = lang ? hljsLanguage(lang) : null;
  if (!language) return [['', code]];
  const result = hljs.highlight(code, { language, ignoreIllegals: true }) as unknown as {
    _emitter: { rootNode: EmitterNode };
  };
  const out: [string, string][] = [];
  flatten(result._emitter.rootNode, '', out, STYLES[language] ?? DEFAULT_STYLE);
  return out;
}

// Python-Markdown's CodeHilite header: a first line like `#!python` or `:::python`
// names the language (the reference server keeps the line in the output).
const SHEBANG_RE = /^(?:::+|#!)(?:(?:\/\w+)*[/ ])?([\w#.+-]*)/;

export function pygmentsName(lang: string): string {
  return PYGMENTS_NAMES[lang.toLowerCase()] ?? lang;
}

/**
 * Renders a code block the way the reference server's CodeHilite does:
 * `<div class="codehilite"[ data-code-language="…"]><pre><span></span><code>…\n</code></pre></div>`.
 */
export function formatCode(lang: string | null, text: string, highlight: boolean, guessed: string | null = null): string {
  let src = stripChars(text, '\n');
  let effective = lang ?? guessed;
  if (!effective && guessed === null) {
    const m = SHEBANG_RE.exec(src.split('\n', 1)[0]!);
    if (m) effective = m[1]!.toLowerCase();
  }
  src += '\n';
  let body = formatTokens(highlight && effective ? tokenize(effective.toLowerCase(), src) : [['', src]]);
  let attrs = ' class="codehilite"';
  if (lang) {
    // The reference server re-serializes tagged blocks with lxml, which leaves quotes unescaped.
    body = body.replaceAll('&quot;', '"').replaceAll('&#39;', "'");
    attrs += ` data-code-language="${escapeHtml(pygmentsName(lang))}"`;
  }
  return `<div${attrs}><pre><span></span><code>${body}</code></pre></div>`;
}
