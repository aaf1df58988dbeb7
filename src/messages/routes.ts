import { z } from 'zod';
import type { Router, PublicContext } from '../http/router.ts';
import { p } from '../http/params.ts';
import { sendMessage } from './send/send.ts';
import { fetchMessage, fetchMessages, matchesNarrow } from './fetch/fetch.ts';
import { parseNarrow } from './fetch/narrow.ts';
import { channelViewer } from '../channels/access.ts';
import { searcherFor, type Searcher } from './fetch/search.ts';
import { renderMarkdown } from '../rendering/index.ts';

/** `type`: `direct` and `private` are direct messages; `channel` and `stream` channel messages. */
const messageType = p.choice(['direct', 'private', 'stream', 'channel'] as const);

const narrow = p.json(z.unknown()).map((value) => parseNarrow(value));

/** The user (or spectator) a read is for. */
async function searcher(ctx: PublicContext): Promise<Searcher> {
  const realm = ctx.realm!;
  return { realm, viewer: ctx.user ? await channelViewer(ctx.svc.db, realm, ctx.user) : null };
}

export function messageRoutes(r: Router): void {
  r.route(
    'POST',
    '/messages',
    {
      type: messageType,
      to: p.str().optional(),
      content: p.str(),
      topic: p.str().optional().alias('subject'),
      queue_id: p.str().optional(),
      local_id: p.str().optional(),
      read_by_sender: p.bool().optional(),
    },
    async (ctx, q) => ({
      ...(await sendMessage(ctx.svc, ctx.realm, ctx.user, {
        type: q.type === 'direct' || q.type === 'private' ? 'private' : 'stream',
        to: q.to,
        topic: q.topic,
        content: q.content,
        queue_id: q.queue_id,
        local_id: q.local_id,
        read_by_sender: q.read_by_sender,
        clientName: ctx.request.clientName,
      })),
    }),
    { incomingWebhookBots: true },
  );

  r.publicRoute(
    'GET',
    '/messages',
    'optional',
    {
      anchor: p.str().optional(),
      include_anchor: p.bool().default(true),
      num_before: p.int(z.int().min(0)).optional(),
      num_after: p.int(z.int().min(0)).optional(),
      narrow: narrow.default([]),
      client_svcavatar: p.bool().optional(),
      apply_markdown: p.bool().default(true),
      message_ids: p.intList().optional(),
      allow_empty_topic_name: p.bool().default(false),
      use_first_unread_anchor: p.bool().optional(),
    },
    async (ctx, q) => ({
      ...(await fetchMessages(ctx.svc.db, await searcherFor(ctx.svc.db, ctx.svc.viewers, ctx.realm!, ctx.user, q.narrow), {
        ...q,
        client_svcavatar: q.client_svcavatar ?? ctx.user !== null,
      })),
    }),
  );

  r.publicRoute(
    'GET',
    '/messages/{message_id}',
    'optional',
    { apply_markdown: p.bool().default(true), allow_empty_topic_name: p.bool().default(false) },
    async (ctx, q) =>
      fetchMessage(ctx.svc.db, await searcher(ctx), q.message_id, { applyMarkdown: q.apply_markdown, allowEmptyTopicName: q.allow_empty_topic_name }),
  );

  r.route('GET', '/messages/matches_narrow', { msg_ids: p.intList(), narrow }, async (ctx, q) =>
    matchesNarrow(ctx.svc.db, { realm: ctx.realm, viewer: await channelViewer(ctx.svc.db, ctx.realm, ctx.user) }, q.msg_ids, q.narrow),
  );

  r.route('POST', '/messages/render', { content: p.str() }, async (ctx, q) => ({
    rendered: (await renderMarkdown(ctx.svc, { realm: ctx.realm, content: q.content, author: ctx.user, onFailure: 'error' })).html,
  }));
}
