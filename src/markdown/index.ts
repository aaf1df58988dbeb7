// Confab's Markdown renderer: the chat flavor of the reference server, byte for
// byte (see README.md in this folder).
//
// The renderer is pure: it never touches the database. Rendering a message is
//
//   1. refs = collectReferences(content)      — names/ids the text mentions, found cheaply
//   2. context = <caller resolves refs>       — users, groups, channels, topics, linkifiers,
//                                               custom emoji, server URL, sender settings
//   3. result = await render(content, context) — HTML + what was found (mentions, links, ...)
//
// or all three at once with renderMessage(content, resolve). render() runs in a
// pool of worker threads with a size limit and a deadline and rejects with a
// MarkdownRenderError (reason "too_large" | "timeout" | "failed" | "closed");
// pass { fallback: true } to get escaped plain text instead of the error.
//
// Message flags come from result.mentions: user_ids → "mentioned", group_ids →
// members "mentioned", stream_wildcard / topic_wildcard → the wildcard flags.
// has_link / has_image / has_attachment feed the `has:` narrows.

import { MarkdownRenderError } from './errors.ts';
import { RenderPool, type RenderPoolOptions } from './pool.ts';
import { renderSync as renderInThread } from './render.ts';
import {
  GROUP_MENTIONS_RE,
  MENTIONS_RE,
  parseIdSyntax,
  STREAM_LINK,
  STREAM_TOPIC_LINK,
  STREAM_TOPIC_MESSAGE_LINK,
  STREAM_WILDCARDS,
  TOPIC_WILDCARDS,
} from './mentions.ts';
import type { References, RenderContext, RenderResult } from './types.ts';
import { escapeHtml } from './util.ts';

export type * from './types.ts';
export { MarkdownRenderError, type MarkdownRenderErrorReason } from './errors.ts';
export { RenderPool, type RenderHold, type RenderPoolOptions } from './pool.ts';
export { topicLinks, type TopicLink } from './topic-links.ts';

export interface RenderOptions {
  /** On timeout, size or failure, return escaped plain text instead of rejecting. */
  fallback?: boolean;
  /** Pool to render in; default: the shared pool (see defaultRenderPool()). */
  pool?: RenderPool;
  /** Whose render (e.g. the author): the pool lets keys take turns. */
  key?: string;
}

/** The names the emoji pattern (patterns.ts) could match: after any colon, so overlapping ones too. */
const EMOJI_NAMES = /:(?=([\p{L}\p{N}_\-+]+):)/gu;

/** Finds what a message refers to, without rendering it. */
export function collectReferences(content: string): References {
  const userNames = new Set<string>();
  const userIds = new Set<number>();
  for (const m of content.matchAll(MENTIONS_RE)) {
    const name = m[3]!;
    const id = parseIdSyntax(name);
    if (id) userIds.add(id.id);
    else if (!STREAM_WILDCARDS.has(name) && !TOPIC_WILDCARDS.has(name)) userNames.add(name);
  }
  const groupNames = new Set<string>();
  for (const m of content.matchAll(GROUP_MENTIONS_RE)) groupNames.add(m[3]!);
  const channelNames = new Set<string>();
  const topics = new Map<string, { channel_name: string; topic: string }>();
  for (const m of content.matchAll(STREAM_LINK)) channelNames.add(m.groups!.stream_name!);
  // Message links first: their text would also read as a topic link.
  const withoutMessageLinks = content.replace(STREAM_TOPIC_MESSAGE_LINK, (_m, channel: string) => {
    channelNames.add(channel);
    return ' ';
  });
  for (const m of withoutMessageLinks.matchAll(STREAM_TOPIC_LINK)) {
    const { stream_name: channel_name, topic_name: topic } = m.groups!;
    channelNames.add(channel_name!);
    topics.set(`${channel_name}\n${topic}`, { channel_name: channel_name!, topic: topic! });
  }
  const uploads = new Set<string>();
  for (const m of content.matchAll(/\/user_uploads\/([^\s()<>"'\]]+)/g)) uploads.add(m[1]!);
  return {
    user_names: [...userNames],
    user_ids: [...userIds],
    group_names: [...groupNames],
    channel_names: [...channelNames],
    topics: [...topics.values()],
    emoji_names: [...new Set(Array.from(content.matchAll(EMOJI_NAMES), (m) => m[1]!))],
    upload_path_ids: [...uploads],
  };
}

let sharedPool: RenderPool | null = null;

/** The process-wide pool used by render() when no pool is given. */
export function defaultRenderPool(options?: RenderPoolOptions): RenderPool {
  sharedPool ??= new RenderPool(options);
  return sharedPool;
}

/** Stops the shared pool's workers (for shutdown and tests). */
export async function closeDefaultRenderPool(): Promise<void> {
  const pool = sharedPool;
  sharedPool = null;
  await pool?.close();
}

/** Renders in a worker thread, with the pool's size and time limits. */
export async function render(content: string, context: RenderContext, options: RenderOptions = {}): Promise<RenderResult> {
  const pool = options.pool ?? defaultRenderPool();
  try {
    return await pool.render(content, context, options.key);
  } catch (err) {
    if (options.fallback && err instanceof MarkdownRenderError && err.reason !== 'closed') return plainTextResult(content);
    throw err;
  }
}

/** collectReferences → resolve (the caller's database lookups) → render. */
export async function renderMessage(
  content: string,
  resolve: (refs: References) => Promise<RenderContext>,
  options: RenderOptions = {},
): Promise<RenderResult> {
  return render(content, await resolve(collectReferences(content)), options);
}

/**
 * Renders on the calling thread: no deadline, so only for trusted input,
 * tools and tests. Inputs over maxInputLength are refused.
 */
export function renderSync(content: string, context: RenderContext, maxInputLength = 100_000): RenderResult {
  if (content.length > maxInputLength) {
    throw new MarkdownRenderError('too_large', `Message is too long to render (over ${maxInputLength} characters)`);
  }
  return renderInThread(content, context);
}

/** Escaped paragraphs: what a message shows when it cannot be rendered. */
export function plainTextHtml(content: string): string {
  return content
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => `<p>${escapeHtml(p).replaceAll('\n', '<br>\n')}</p>`)
    .join('\n');
}

function plainTextResult(content: string): RenderResult {
  return {
    html: plainTextHtml(content),
    mentions: { user_ids: [], silent_user_ids: [], group_ids: [], stream_wildcard: false, topic_wildcard: false },
    is_me_message: content.startsWith('/me '),
    has_link: false,
    has_image: false,
    has_attachment: false,
    attachment_path_ids: [],
    links_for_preview: [],
  };
}
