// A link's preview data, fetched as the reference's get_link_embed_data does:
// the oEmbed answer of the video sites it embeds (YouTube, Vimeo) when it has a
// player and a thumbnail, else the page's own metadata (page-data.ts). Every
// request goes through THE outbound client: the address rules of
// ALLOW_PRIVATE_URLS, a time limit and a size limit. Any failure: no preview.

import type { Services } from '../services.ts';
import type { UrlEmbedData } from '../markdown/types.ts';
import { outboundRequest, type OutboundRequest, type OutboundResponse } from '../net/outbound.ts';
import { pageEmbedData } from './page-data.ts';

const USER_AGENT = 'Mozilla/5.0 (compatible; ConfabURLPreview; +https://github.com/confab)';

/** oEmbed endpoints of the video sites the reference embeds, by the URLs they answer for. */
const OEMBED: { pattern: RegExp; endpoint: string }[] = [
  { pattern: /^https?:\/\/(?:[^/]+\.)?(?:youtube\.com\/(?:watch|shorts\/|v\/|embed\/)|youtu\.be\/)/i, endpoint: 'https://www.youtube.com/oembed' },
  { pattern: /^https?:\/\/(?:[^/]+\.)?vimeo\.com\//i, endpoint: 'https://vimeo.com/api/oembed.json' },
];

async function get(svc: Services, url: string, accept: string): Promise<OutboundResponse | null> {
  const limits = svc.config.previewFetch;
  const req: OutboundRequest = { url, headers: { accept, 'user-agent': USER_AGENT }, timeoutMs: limits.timeoutMs, maxBytes: limits.maxPageBytes };
  try {
    const res = await outboundRequest(req, { allowPrivate: svc.config.allowPrivateUrls });
    return res.status >= 200 && res.status < 300 ? res : null;
  } catch {
    return null;
  }
}

async function oembedData(svc: Services, url: string): Promise<UrlEmbedData | null> {
  const provider = OEMBED.find((p) => p.pattern.test(url));
  if (!provider) return null;
  const query = new URLSearchParams({ url, maxwidth: '640', maxheight: '480', format: 'json' });
  const res = await get(svc, `${provider.endpoint}?${query}`, 'application/json');
  if (!res) return null;
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(res.body.toString('utf8'));
  } catch {
    return null;
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const image = str(data.url) ?? str(data.image);
  if (data.type === 'photo' && image) return { type: 'photo', image, title: str(data.title), description: str(data.description) };
  const html = str(data.html);
  const thumbnail = str(data.thumbnail_url);
  if (data.type === 'video' && html && thumbnail) {
    return { type: 'video', image: thumbnail, html: stripCdata(html), title: str(data.title), description: str(data.description) };
  }
  return { title: str(data.title), description: str(data.description) };
}

/** SoundCloud wraps its player in CDATA; the reference strips it. */
function stripCdata(html: string): string {
  return html.startsWith('<![CDATA[') && html.endsWith(']]>') ? html.slice(9, -3) : html;
}

function isHtml(res: OutboundResponse): boolean {
  const type = String(res.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (type) return type === 'text/html' || type === 'application/xhtml+xml';
  // No type given: HTML only if it looks like it.
  return /^\s*(?:<!doctype html|<html|<head)/i.test(res.body.subarray(0, 1000).toString('utf8'));
}

/** The preview of one link, or null when it has none. */
export async function fetchLinkEmbedData(svc: Services, url: string): Promise<UrlEmbedData | null> {
  if (!/^https?:\/\//i.test(url)) return null;
  const base = await oembedData(svc, url);
  if (base?.type) return base;
  const page = await get(svc, url, 'text/html,application/xhtml+xml');
  if (!page || !isHtml(page)) return null;
  const found = pageEmbedData(page.body.toString('utf8'));
  const data: UrlEmbedData = { title: base?.title ?? found.title, description: base?.description ?? found.description, image: found.image };
  if (data.image) {
    try {
      data.image = new URL(data.image, page.url).href;
    } catch {
      data.image = null;
    }
  }
  return data;
}
