// Inline previews below a paragraph for links to images, videos and YouTube,
// link previews (Open Graph / oEmbed data fetched in the background and given
// back in url_embed_data), and the message facts that depend on links
// (has_link, has_image, uploads, links to fetch). External media go through the
// image proxy when one is configured (proxyMedia).

import { createHmac } from 'node:crypto';
import { El } from './tree.ts';
import { isImageUrl, isVideoUrl, urlsplit, youtubeId } from './links.ts';
import type { RenderContext, UrlEmbedData } from './types.ts';

const PREVIEW_LIMIT = 24;
const INLINE_IMAGE_CLASSES = ['message_inline_image', 'message_inline_ref', 'inline-preview-twitter'];

interface FoundLink {
  url: string;
  text: string | null;
  a: El;
  parent: El;
  grandparent: El | null;
  inBlockquote: boolean;
}

export interface LinkFacts {
  hasLink: boolean;
  hasImage: boolean;
  uploadPathIds: string[];
  linksForPreview: string[];
}

/** Breadth-first, like the reference server's walk_tree_with_family. */
function findLinks(root: El): FoundLink[] {
  const found: FoundLink[] = [];
  const queue: { el: El; parent: { el: El } | null; inQuote: boolean }[] = [{ el: root, parent: null, inQuote: false }];
  // An index, not shift(): shifting is linear, quadratic over thousands of elements.
  for (let next = 0; next < queue.length; next++) {
    const cur = queue[next]!;
    const inQuote = cur.inQuote || cur.el.tag === 'blockquote';
    for (const child of cur.el.children) {
      queue.push({ el: child, parent: { el: cur.el }, inQuote });
      if (child.tag === 'a') {
        found.push({
          url: child.get('href') ?? '',
          text: child.text === null ? null : String(child.text),
          a: child,
          parent: cur.el,
          grandparent: cur.parent?.el ?? null,
          inBlockquote: inQuote,
        });
      }
    }
  }
  return found;
}

function uploadPathId(url: string, serverUrl: string | undefined): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url, 'http://relative.invalid/');
  } catch {
    return null;
  }
  const sameServer = parsed.host === 'relative.invalid' || (serverUrl !== undefined && serverUrl !== '' && parsed.host === safeHost(serverUrl));
  if (!sameServer || !parsed.pathname.startsWith('/user_uploads/')) return null;
  return decodeURIComponent(parsed.pathname.slice('/user_uploads/'.length));
}

function safeHost(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

/** Camo URL: HMAC-SHA1 of the URL under the shared key, then the URL in hex. */
export function proxiedUrl(url: string, ctx: RenderContext): string {
  const proxy = ctx.image_proxy;
  if (!proxy) return url;
  let parts: ReturnType<typeof urlsplit>;
  try {
    parts = urlsplit(url);
  } catch {
    return url;
  }
  if (!parts.scheme && !parts.netloc) return url; // relative: served by us
  if (ctx.server_url && parts.netloc === safeHost(ctx.server_url)) return url;
  const digest = createHmac('sha1', proxy.key).update(url).digest('hex');
  return `${proxy.base_url}${digest}/${Buffer.from(url, 'utf8').toString('hex')}`;
}

/** Points every external <img>/<video> at the proxy. */
export function proxyMedia(root: El, ctx: RenderContext): void {
  if (!ctx.image_proxy) return;
  for (const el of root.iter()) {
    if ((el.tag === 'img' || el.tag === 'video') && el.get('src')) el.set('src', proxiedUrl(el.get('src')!, ctx));
  }
}

export function addPreviews(root: El, ctx: RenderContext): LinkFacts {
  const links = findLinks(root);
  const facts: LinkFacts = { hasLink: links.length > 0, hasImage: false, uploadPathIds: [], linksForPreview: [] };
  for (const url of new Set(links.map((l) => l.url))) {
    const id = uploadPathId(url, ctx.server_url);
    if (id !== null) facts.uploadPathIds.push(id);
  }
  if (!links.length || ctx.image_previews === false) return facts;
  const previewable = new Set(links.filter((l) => !l.inBlockquote).map((l) => l.url));
  if (previewable.size > PREVIEW_LIMIT) return facts;
  const uploads = ctx.uploaded_images ?? {};
  const done = new Set<string>();

  const isImage = (url: string) => {
    if (url.startsWith('/user_uploads/')) return url.slice('/user_uploads/'.length) in uploads;
    return isImageUrl(url);
  };

  const insertionIndex = (grandparent: El, parent: El, parentIndex: number): number => {
    const parentLinks = [...parent.iter('a')].map((a) => a.get('href'));
    let i = parentIndex;
    for (;;) {
      i++;
      if (i >= grandparent.children.length) return i;
      const uncle = grandparent.children[i]!;
      const classes = (uncle.get('class') ?? '').split(/\s+/);
      if (uncle.tag !== 'div' || !classes.some((c) => INLINE_IMAGE_CLASSES.includes(c))) return i;
      const link = uncle.children.find((c) => c.tag === 'a');
      if (!link || !parentLinks.includes(link.get('href'))) return i;
    }
  };

  const placement = (link: FoundLink) => {
    const urlEqText = link.text === null || link.url === link.text;
    const info: { parent: El; title: string | null; index: number | null; remove: El | null } = {
      parent: root,
      title: urlEqText ? null : link.text,
      index: null,
      remove: null,
    };
    if (link.parent.tag === 'li') {
      info.parent = link.parent;
      if (!link.parent.text && !link.a.tail && urlEqText) info.remove = link.a;
    } else if (link.parent.tag === 'p' && link.grandparent) {
      const gp = link.grandparent;
      info.parent = gp;
      const text = link.parent.text === null ? '' : String(link.parent.text);
      if (link.parent.children.length === 1 && (!text || text === '\n') && !link.a.tail && urlEqText) {
        info.remove = link.parent;
      }
      const idx = gp.children.indexOf(link.parent);
      if (idx >= 0) info.index = insertionIndex(gp, link.parent, idx);
    }
    return info;
  };

  const addDiv = (parent: El, index: number | null, cls: string): El => {
    const div = new El('div', { class: cls });
    if (index === null) parent.append(div);
    else parent.insert(index, div);
    return div;
  };

  for (const link of links) {
    const url = link.url;
    if (!previewable.has(url) || done.has(url)) continue;
    done.add(url);
    if (isVideoUrl(url)) {
      const info = placement(link);
      const a = addDiv(info.parent, info.index, 'message_inline_image message_inline_video').sub('a', { href: url });
      if (info.title) a.set('title', info.title);
      a.sub('video', { src: url, preload: 'metadata' });
      if (info.remove) info.parent.remove(info.remove);
      continue;
    }
    if (isImage(url)) {
      const info = placement(link);
      const a = addDiv(info.parent, info.index, 'message_inline_image').sub('a', { href: url });
      if (info.title !== null) a.set('title', info.title);
      const img = a.sub('img');
      const upload = url.startsWith('/user_uploads/') ? uploads[url.slice('/user_uploads/'.length)] : undefined;
      if (upload?.thumbnail_url) {
        // The reference's thumbnailed markup, attributes in its (sorted) order.
        if (upload.animated) img.set('data-animated', 'true');
        if (upload.content_type) img.set('data-original-content-type', upload.content_type);
        img.set('data-original-dimensions', `${upload.original_width_px}x${upload.original_height_px}`);
        img.set('src', upload.thumbnail_url);
      } else if (upload) {
        img.set('class', 'image-loading-placeholder');
        img.set('src', '/static/images/loading/loader-black.svg');
        img.set('data-original-dimensions', `${upload.original_width_px}x${upload.original_height_px}`);
      } else {
        img.set('src', actualImageUrl(url));
      }
      facts.hasImage = true;
      if (info.remove) info.parent.remove(info.remove);
      continue;
    }
    const yt = youtubeId(url);
    if (yt) {
      const info = placement(link);
      const a = addDiv(info.parent, info.index, 'youtube-video message_inline_image').sub('a', { href: url });
      if (info.title !== null) a.set('title', info.title);
      a.set('data-id', yt);
      a.sub('img', { src: `https://i.ytimg.com/vi/${yt}/mqdefault.jpg` });
      facts.hasImage = true;
      // No `continue`: the link's text may still become the video's title.
    }
    if (!ctx.url_embed_previews || ctx.sent_by_bot || isOwnLink(url, ctx)) continue;
    const data = ctx.url_embed_data?.[url];
    if (data === undefined) {
      if (!facts.linksForPreview.includes(url)) facts.linksForPreview.push(url);
      continue;
    }
    if (data === null) continue;
    if (yt) {
      if (data.title) link.a.text = link.text === url ? `YouTube - ${data.title}` : link.text;
      continue;
    }
    if (addEmbed(root, url, data, ctx)) facts.hasImage ||= data.type === 'photo' || data.type === 'video';
    if (vimeoId(url) && data.title) link.a.text = link.text === url ? `Vimeo - ${data.title}` : link.text;
  }
  return facts;
}

/** Relative links and links into the organization get no link preview. */
function isOwnLink(url: string, ctx: RenderContext): boolean {
  let netloc: string;
  try {
    netloc = urlsplit(url).netloc;
  } catch {
    return true;
  }
  return netloc === '' || (ctx.server_url !== undefined && netloc === safeHost(ctx.server_url));
}

const VIMEO_RE = /^((http|https)?:\/\/(www\.)?vimeo.com\/(?:channels\/(?:\w+\/)?|groups\/([^/]*)\/videos\/|)(\d+)(?:|\/\?))$/;

export function vimeoId(url: string): string | null {
  return VIMEO_RE.exec(url)?.[5] ?? null;
}

/** CSS url("...") with the reference's escaping of backslash, quote and newline. */
function cssUrl(url: string): string {
  return `url("${url.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\a ')}")`;
}

/** The reference's add_embed: oEmbed photos and players, else the Open Graph card. Whether one was added. */
function addEmbed(root: El, url: string, data: UrlEmbedData, ctx: RenderContext): boolean {
  if (!data.image) return false;
  if (data.type === 'photo' || data.type === 'video') {
    const video = data.type === 'video';
    const a = root.sub('div', { class: video ? 'embed-video message_inline_image' : 'message_inline_image' }).sub('a', { href: url });
    if (data.title != null) a.set('title', data.title);
    if (video && data.html != null) a.set('data-id', data.html);
    a.sub('img', { src: data.image });
    return true;
  }
  const container = root.sub('div', { class: 'message_embed' });
  container.sub('a', { class: 'message_embed_image', href: url, style: `background-image: ${cssUrl(proxiedUrl(data.image, ctx))}` });
  const box = container.sub('div', { class: 'data-container' });
  if (data.title) {
    const title = box.sub('div', { class: 'message_embed_title' }).sub('a', { href: url, title: data.title });
    title.text = data.title;
  }
  if (data.description) box.sub('div', { class: 'message_embed_description' }).text = data.description;
  return false;
}

/** GitHub "blob" pages of images point at the raw file. */
function actualImageUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.hostname === 'github.com' || u.hostname.endsWith('.github.com')) {
      const parts = u.pathname.split('/');
      if (parts.length > 3 && parts[3] === 'blob') {
        return new URL([...parts.slice(0, 3), ...parts.slice(4)].join('/'), 'https://raw.githubusercontent.com').href;
      }
    }
  } catch {
    // not an absolute URL
  }
  return url;
}
