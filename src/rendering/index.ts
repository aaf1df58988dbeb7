// The server's side of Markdown: resolves what a text refers to (users, groups,
// channels, topics, linkifiers, custom emoji) against the organization's data,
// then renders it in the worker pool (markdown/ stays free of database code).
// Each domain contributes a resolver in resolvers.ts (Services.hooks.referenceResolvers, so
// that rendering, which channels use, does not import the domains above it).

import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Services } from '../services.ts';
import { collectReferences, render, topicLinks, type References, type RenderContext, type RenderResult, type TopicLink } from '../markdown/index.ts';
import { MarkdownRenderError } from '../markdown/index.ts';
import { realmUrl, settingsOf } from '../realm/queries.ts';
import { badRequest } from '../http/errors.ts';

/** `author`: who writes the text, when someone does; what they may not see stays unresolved. */
export type ReferenceResolver = (svc: Services, db: Executor, realm: Realm, refs: References, author: User | null) => Promise<Partial<RenderContext>>;

export interface RenderRequest {
  realm: Realm;
  content: string;
  /** The author: their settings (emoticons) shape the result. */
  author?: User | null;
  /** Where to read the organization's data (a transaction, inside actions). */
  db?: Executor;
  /**
   * What to do when the text cannot be rendered in time or size: 'error' (a
   * message is refused with a clear error) or 'plain' (a description shows as text).
   */
  onFailure?: 'error' | 'plain';
  /** Link previews fetched since the message was sent (previews/job.ts). */
  urlEmbedData?: RenderContext['url_embed_data'];
  /** A message's topic: its `topic_links` come with the result, from the same linkifiers. */
  topic?: string;
}

/** A rendered text, and the `topic_links` of the topic the request named. */
export interface Rendered extends RenderResult {
  topicLinks?: { topic: string; links: TopicLink[] };
}

export async function renderMarkdown(svc: Services, req: RenderRequest): Promise<Rendered> {
  const db = req.db ?? svc.db;
  const refs = collectReferences(req.content);
  const parts = await Promise.all(svc.hooks.referenceResolvers.map((resolve) => resolve(svc, db, req.realm, refs, req.author ?? null)));
  const context: RenderContext = Object.assign(
    {
      server_url: realmUrl(req.realm, svc.config),
      translate_emoticons: req.author?.settings.translate_emoticons === true,
      ...previewContext(svc, req),
    },
    ...parts,
  );
  // Each author's renders take turns with everyone else's (see markdown/pool.ts).
  const key = req.author ? `${req.realm.id}/${req.author.id}` : `${req.realm.id}`;
  try {
    const result: Rendered = await render(req.content, context, { pool: svc.markdown, fallback: req.onFailure === 'plain', key });
    if (req.topic !== undefined) result.topicLinks = { topic: req.topic, links: topicLinks(req.topic, context.linkifiers ?? []) };
    return result;
  } catch (err) {
    if (err instanceof MarkdownRenderError && err.reason !== 'closed') throw badRequest('Unable to render message');
    throw err;
  }
}

/** The organization's preview settings and Confab's image proxy (`/external_content/`, on every organization's host). */
function previewContext(svc: Services, req: RenderRequest): Partial<RenderContext> {
  const settings = settingsOf(req.realm);
  return {
    image_previews: settings.inline_image_preview,
    image_proxy: { base_url: '/external_content/', key: svc.imageProxyKey },
    url_embed_previews: settings.inline_url_embed_preview,
    url_embed_data: req.urlEmbedData,
    sent_by_bot: req.author?.is_bot === true,
  };
}

/**
 * Renders before an action's transaction opens (rendering is slow work, and on
 * PGlite a transaction holds every other request). The outcome is taken
 * inside, where the action would have rendered, so a refusal still comes
 * after the action's own checks. Only for authored text: it reads the
 * organization outside the transaction, as the reference server does.
 */
export async function prerender(svc: Services, req: Omit<RenderRequest, 'db'>): Promise<() => Rendered> {
  try {
    const result = await renderMarkdown(svc, req);
    return () => result;
  } catch (err) {
    return () => {
      throw err;
    };
  }
}

/** Just the HTML, for descriptions and profile fields (plain text when it cannot render). */
export async function renderHtml(svc: Services, realm: Realm, content: string, db?: Executor): Promise<string> {
  if (content === '') return '';
  return (await renderMarkdown(svc, { realm, content, db, onFailure: 'plain' })).html;
}

/**
 * Descriptions and profile texts rendered before a transaction opens; inside,
 * the returned function gives a text's HTML. A text given as a function is its
 * checked form: when the check refuses, nothing is rendered (the action
 * refuses it inside, in its own order).
 */
export async function prerenderHtml(svc: Services, realm: Realm, texts: Iterable<string | (() => string)>): Promise<(text: string) => string> {
  const html = new Map<string, string>();
  for (const t of texts) {
    let text: string;
    try {
      text = typeof t === 'string' ? t : t();
    } catch {
      continue;
    }
    if (!html.has(text)) html.set(text, await renderHtml(svc, realm, text));
  }
  return (text) => {
    const rendered = html.get(text);
    if (rendered === undefined) throw new Error('text was not rendered before the transaction');
    return rendered;
  };
}
