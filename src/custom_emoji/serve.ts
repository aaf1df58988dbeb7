// GET /user_avatars/<realm_id>/emoji/images/[still/]<file>: the emoji images,
// outside /api/v1 so that <img> tags (which send no credentials) can load them,
// as the reference server serves them. Deactivated emoji stay: old messages show them.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import { IMAGE_TYPES } from './image.ts';
import { emojiKey } from './format.ts';

const FILE = /^\d{1,15}-[0-9a-f]{16}\.(png|gif|jpg|webp)$/;
const MIME_BY_EXT = Object.fromEntries(Object.values(IMAGE_TYPES).map((t) => [t.ext, t.mime]));

async function serveEmoji(svc: Services, req: FastifyRequest, reply: FastifyReply, still: boolean) {
  const { realm, file } = req.params as { realm: string; file: string };
  const ext = FILE.exec(file)?.[1];
  if (!/^\d{1,15}$/.test(realm) || !ext) return reply.callNotFound();
  const data = await svc.storage.get(emojiKey(Number(realm), still ? `still/${file}` : file));
  if (!data) return reply.callNotFound();
  // A file name is never reused for other bytes.
  return reply
    .header('Content-Type', MIME_BY_EXT[ext]!)
    .header('Cache-Control', 'public, max-age=31536000, immutable')
    .header('X-Content-Type-Options', 'nosniff')
    .header('Content-Security-Policy', "default-src 'none'")
    .send(data);
}

export function registerEmojiImageRoutes(app: FastifyInstance, svc: Services): void {
  const methods: ('GET' | 'HEAD')[] = ['GET', 'HEAD'];
  app.route({ method: methods, url: '/user_avatars/:realm/emoji/images/:file', handler: (req, reply) => serveEmoji(svc, req, reply, false) });
  app.route({ method: methods, url: '/user_avatars/:realm/emoji/images/still/:file', handler: (req, reply) => serveEmoji(svc, req, reply, true) });
}
