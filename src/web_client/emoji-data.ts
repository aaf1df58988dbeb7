// GET /static/generated/emoji/emoji_api.json: every Unicode emoji's names,
// canonical first (`{"code_to_names": {"1f600": ["grinning", "happy"], ...}}`),
// the file register's `server_emoji_data_url` points to. Mobile clients fetch it
// for emoji autocompletion; the reference server ships it as a static file, so
// it needs no credentials and may be cached. It changes only with an upgrade.

import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { emojiCodeToNames } from '../markdown/emoji.ts';

const gzipAsync = promisify(gzip);

export const EMOJI_DATA_PATH = '/static/generated/emoji/emoji_api.json';

interface Built {
  body: Buffer;
  gzipped: Buffer;
  etag: string;
}

let built: Promise<Built> | undefined;

async function build(): Promise<Built> {
  const body = Buffer.from(JSON.stringify({ code_to_names: Object.fromEntries(emojiCodeToNames()) }));
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { body, gzipped: await gzipAsync(body, { level: 9 }), etag };
}

async function serveEmojiData(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  built ??= build();
  const { body, gzipped, etag } = await built;
  reply
    .header('Content-Type', 'application/json')
    .header('Cache-Control', 'public, max-age=86400')
    .header('ETag', etag)
    .header('Vary', 'Accept-Encoding')
    .header('X-Content-Type-Options', 'nosniff');
  if (req.headers['if-none-match'] === etag) return reply.code(304).send();
  if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) return reply.header('Content-Encoding', 'gzip').send(gzipped);
  return reply.send(body);
}

export function registerEmojiDataRoute(app: FastifyInstance): void {
  app.route({ method: ['GET', 'HEAD'], url: EMOJI_DATA_PATH, handler: serveEmojiData });
}
