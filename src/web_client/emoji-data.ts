// GET /static/generated/emoji/emoji_api.json: every Unicode emoji's names,
// canonical first (`{"code_to_names": {"1f600": ["grinning", "happy"], ...}}`),
// the file register's `server_emoji_data_url` points to. Mobile clients fetch it
// for emoji autocompletion; the reference server ships it as a static file, so
// it needs no credentials and may be cached. It changes only with an upgrade.

import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { emojiCodeToNames } from '../markdown/emoji.ts';
import { sendCompressible } from './serve.ts';

export const EMOJI_DATA_PATH = '/static/generated/emoji/emoji_api.json';
const TYPE = 'application/json';

let built: { data: Buffer; gzipped?: Buffer; etag: string } | undefined;

function build(): NonNullable<typeof built> {
  const data = Buffer.from(JSON.stringify({ code_to_names: Object.fromEntries(emojiCodeToNames()) }));
  return { data, etag: `"${createHash('sha256').update(data).digest('base64url').slice(0, 27)}"` };
}

async function serveEmojiData(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  built ??= build();
  reply.type(TYPE).header('Cache-Control', 'public, max-age=86400').header('ETag', built.etag).header('X-Content-Type-Options', 'nosniff');
  if (req.headers['if-none-match'] === built.etag) return reply.code(304).send();
  return sendCompressible(req, reply, built, TYPE);
}

export function registerEmojiDataRoute(app: FastifyInstance): void {
  app.route({ method: ['GET', 'HEAD'], url: EMOJI_DATA_PATH, handler: serveEmojiData });
}
