// Links: recognising bare URLs in text, and deciding which hrefs are allowed.
// URL splitting follows Python's urllib.parse, because the reference server's
// sanitizer (and therefore which inputs become links) is defined in its terms.

import { createRequire } from 'node:module';
import { WORD } from './util.ts';

const require = createRequire(import.meta.url);

const SAFELISTED_SCHEMES = [
  'bitcoin',
  'geo',
  'im',
  'irc',
  'ircs',
  'magnet',
  'mailto',
  'matrix',
  'mms',
  'news',
  'nntp',
  'openpgp4fpr',
  'sip',
  'sms',
  'smsto',
  'ssh',
  'tel',
  'urn',
  'webcal',
  'wtai',
  'xmpp',
];
/** The only schemes a link may use; everything else (javascript:, data:, ...) renders as text. */
export const ALLOWED_SCHEMES: ReadonlySet<string> = new Set(['http', 'https', 'ftp', 'file', ...SAFELISTED_SCHEMES]);

export interface SplitUrl {
  scheme: string;
  netloc: string;
  path: string;
  query: string;
  fragment: string;
}

const SCHEME_CHARS = /^[A-Za-z0-9+\-.]+$/;
const USES_NETLOC = new Set([
  '',
  'ftp',
  'http',
  'gopher',
  'nntp',
  'telnet',
  'imap',
  'wais',
  'file',
  'mms',
  'https',
  'shttp',
  'snews',
  'prospero',
  'rtsp',
  'rtsps',
  'rtspu',
  'rsync',
  'svn',
  'svn+ssh',
  'sftp',
  'nfs',
  'git',
  'git+ssh',
  'ws',
  'wss',
  'itms-services',
]);

/** Python's urllib.parse.urlsplit; throws on a malformed IPv6 netloc as Python does. */
export function urlsplit(url: string): SplitUrl {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: browsers strip leading control characters from a URL, so must we
  url = url.replace(/[\t\r\n]/g, '').replace(/^[\x00-\x20]+/, '');
  let scheme = '';
  let netloc = '';
  let query = '';
  let fragment = '';
  const i = url.indexOf(':');
  if (i > 0 && /^[A-Za-z]/.test(url) && SCHEME_CHARS.test(url.slice(0, i))) {
    scheme = url.slice(0, i).toLowerCase();
    url = url.slice(i + 1);
  }
  if (url.startsWith('//')) {
    let delim = url.length;
    for (const c of '/?#') {
      const d = url.indexOf(c, 2);
      if (d >= 0) delim = Math.min(delim, d);
    }
    netloc = url.slice(2, delim);
    url = url.slice(delim);
    if (netloc.includes('[') !== netloc.includes(']')) throw new Error('Invalid IPv6 URL');
  }
  const h = url.indexOf('#');
  if (h >= 0) {
    fragment = url.slice(h + 1);
    url = url.slice(0, h);
  }
  const q = url.indexOf('?');
  if (q >= 0) {
    query = url.slice(q + 1);
    url = url.slice(0, q);
  }
  return { scheme, netloc, path: url, query, fragment };
}

export function urlunsplit(u: SplitUrl): string {
  let url = u.path;
  if (u.netloc) {
    if (url && !url.startsWith('/')) url = '/' + url;
    url = '//' + u.netloc + url;
  } else if (url.startsWith('//')) {
    url = '//' + url;
  } else if (u.scheme && USES_NETLOC.has(u.scheme) && (!url || url.startsWith('/'))) {
    url = '//' + url;
  }
  if (u.scheme) url = u.scheme + ':' + url;
  if (u.query) url += '?' + u.query;
  if (u.fragment) url += '#' + u.fragment;
  return url;
}

/**
 * The reference server's sanitize_url: null means "not a link" (render the
 * text), "" means unparseable. Scheme-less URLs are taken as http.
 */
export function sanitizeUrl(url: string, depth = 0): string | null {
  let parts: SplitUrl;
  try {
    parts = urlsplit(url.replaceAll(' ', '%20'));
  } catch {
    return '';
  }
  const { netloc, path, query, fragment } = parts;
  let scheme = parts.scheme;
  if (!scheme && !netloc && path.includes('@')) {
    scheme = 'mailto';
  } else if (!scheme && !netloc && path.startsWith('/')) {
    return urlunsplit({ scheme: '', netloc: '', path, query, fragment });
  } else if (!scheme && !netloc && !path && !query && fragment) {
    return urlunsplit({ scheme: '', netloc: '', path: '', query: '', fragment });
  }
  if (!scheme) return depth > 0 ? null : sanitizeUrl('http://' + url, depth + 1);
  if (!ALLOWED_SCHEMES.has(scheme)) return null;
  return urlunsplit({ scheme, netloc, path, query, fragment });
}

/** Links into this server are made relative, so they open in the current tab. */
export function relativeToServer(href: string, serverUrl: string | undefined): string {
  if (!serverUrl) return href;
  let base = serverUrl;
  while (base.endsWith('/')) base = base.slice(0, -1);
  const prefix = base + '/';
  if (href.startsWith(prefix + '#') || href.startsWith(prefix + 'user_uploads/')) return href.slice(prefix.length);
  return href;
}

let linkRegex: RegExp | null = null;

/**
 * Bare URLs, domains with a known TLD, e-mail addresses and bitcoin addresses.
 * Parentheses may nest up to six deep, so Wikipedia-style URLs keep their ")".
 */
export function webLinkRegex(): RegExp {
  if (linkRegex) return linkRegex;
  // File extensions that are also TLDs would make "views.py" a link.
  const falsePositives = new Set(['java', 'md', 'mov', 'py', 'zip']);
  const tlds = (require('tlds') as string[])
    .filter((t) => !falsePositives.has(t))
    .sort((a, b) => b.length - a.length)
    .map((t) => t.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&'));
  const inner = '[^\\s()"]*';
  const parenGroup = '[^\\s()"]*?(?:\\(%s\\)[^\\s()"]*?)*';
  let nested = parenGroup;
  for (let i = 0; i < 6; i++) nested = nested.replace('%s', parenGroup);
  nested = nested.replace('%s', inner);
  const w = WORD.slice(1, -1); // the class body, to combine with other characters
  const source =
    `(?<![^\\s'"\\(,:<])` +
    `(?<url>` +
    `(?:(?:https?://[${w}.:@-]+?|(?:(?:[${w}-]+\\.)+(?:${tlds.join('|')})))(?:/${nested})?)` +
    `|(?:[${w}.-]+@[${w}.-]+\\.[${w}]+)` +
    `|(?:bitcoin:[13][a-km-zA-HJ-NP-Z1-9]{25,34})` +
    `)` +
    `(?=[!:;?),.'">]*(?:$|\\s))`;
  linkRegex = new RegExp(source, 'u');
  return linkRegex;
}

const IMAGE_EXTENSIONS = ['.bmp', '.gif', '.jpe', '.jpeg', '.jpg', '.png', '.webp'];

export function isImageUrl(url: string): boolean {
  let parts: SplitUrl;
  try {
    parts = urlsplit(url);
  } catch {
    return false;
  }
  if (parts.netloc === 'pasteboard.co') return false;
  const path = parts.path.toLowerCase();
  return IMAGE_EXTENSIONS.some((ext) => path.endsWith(ext));
}

export function isVideoUrl(url: string): boolean {
  // Python's mimetypes.guess_type looks at the path's extension, ignoring query/fragment.
  let path: string;
  try {
    const p = urlsplit(url);
    path = p.scheme ? p.path : url.split(/[?#]/, 1)[0]!;
  } catch {
    return false;
  }
  return /\.(mp4|m4v|mp4v|mpg4|webm)$/i.test(path);
}

export function youtubeId(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  let id: string | null = null;
  if (u.protocol === 'http:' || u.protocol === 'https:') {
    const host = u.hostname;
    if (['m.youtube.com', 'www.youtube.com', 'www.youtube-nocookie.com', 'youtube.com', 'youtube-nocookie.com'].includes(host)) {
      if ((u.pathname === '/watch' || u.pathname === '/watch_popup') && u.searchParams.get('v')) id = u.searchParams.get('v');
      else if (u.pathname === '/watch_videos' && u.searchParams.get('video_ids')) id = u.searchParams.get('video_ids')!.split(',', 1)[0]!;
      else if (/^\/(embed|shorts|v)\//.test(u.pathname)) id = u.pathname.split('/')[2] ?? null;
    } else if (host === 'youtu.be' && u.pathname.startsWith('/')) {
      id = u.pathname.slice(1);
    }
  }
  return id !== null && /^[0-9A-Za-z_-]+$/.test(id) ? id : null;
}
