// Serving stored files, outside /api/v1 as the reference does:
//   /user_uploads/<realm_id>/<path>            an upload, to its owner and to whoever may read a message linking it
//   /user_uploads/download/<realm_id>/<path>   the same, as a download
//   /user_uploads/thumbnail/<path_id>/<format> its thumbnail, to the same people
//   /user_uploads/temporary/<token>/<filename> a link from GET /api/v1/user_uploads/<realm_id>/<path>,
//                                              valid for a minute without credentials
//   /user_avatars/<realm_id>/<user_id>[-medium].png, /user_avatars/<realm_id>/realm/<icon|logo|night_logo>.png
// Uploads need credentials through the router's one authentication function;
// spectators get nothing. (Fastify hands over path parameters already decoded.) Avatars, icons and logos are public, as <img> tags load them.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import { ApiError, badRequest, unauthorized } from '../http/errors.ts';
import { authenticate } from '../auth/authenticate.ts';
import { subdomainFromHost } from '../realm/queries.ts';
import { attachmentByPath } from './queries.ts';
import { mayReadAttachment } from './access.ts';
import { fileKey, thumbnailKey } from './actions.ts';
import { THUMBNAIL_FORMAT } from './images.ts';
import { avatarKey, realmImageKey } from './profile-images.ts';

/** Types a browser may show in place (the reference's INLINE_MIME_TYPES); everything else downloads. */
const INLINE_MIME_TYPES = new Set([
  'audio/aac',
  'audio/flac',
  'audio/mp4',
  'audio/mpeg',
  'audio/wav',
  'audio/webm',
  'image/apng',
  'image/avif',
  'image/gif',
  'image/jpeg',
  'image/png',
  'image/webp',
  'text/plain',
  'video/mp4',
  'video/webm',
]);
const THUMBNAIL_FORMATS = new Set<string>(Object.values(THUMBNAIL_FORMAT));
const TEMPORARY_URL_SECONDS = 60;

const notFoundPage = (reply: FastifyReply) => reply.code(404).type('text/html; charset=utf-8').send('<p>File not found.</p>');
const forbiddenPage = (reply: FastifyReply) => reply.code(403).type('text/html; charset=utf-8').send('<p>You are not authorized to view this file.</p>');

/** RFC 6266 with RFC 8187 for names beyond ASCII, as the reference writes it. */
function disposition(fileName: string, download: boolean): string {
  const kind = download ? 'attachment' : 'inline';
  if (/^[\x20-\x7e]*$/.test(fileName)) return `${kind}; filename="${fileName.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
  return `${kind}; filename*=utf-8''${encodeURIComponent(fileName)}`;
}

async function sendStored(svc: Services, reply: FastifyReply, key: string, type: string, fileName: string, download: boolean) {
  const found = await svc.storage.stream(key);
  if (!found) return notFoundPage(reply);
  const inline = !download && INLINE_MIME_TYPES.has(type.split(';', 1)[0]!);
  return reply
    .header('Content-Type', inline ? type : 'application/octet-stream')
    .header('Content-Length', found.size)
    .header('Content-Disposition', disposition(fileName, !inline))
    .header('Cache-Control', 'private, immutable')
    .header('X-Content-Type-Options', 'nosniff')
    .header('Content-Security-Policy', "default-src 'none'")
    .send(found.body);
}

/** Who asks, and whether they may read the upload at `pathId`; answers the refusal itself when not. */
async function readableUpload(svc: Services, req: FastifyRequest, reply: FastifyReply, pathId: string) {
  const caller = await authenticate(svc, req, subdomainFromHost(req.headers.host, svc.config.externalUrl), 'any');
  if (!caller) throw unauthorized();
  const attachment = /^\d{1,15}\//.test(pathId) ? await attachmentByPath(svc.db, caller.realm.id, pathId) : undefined;
  if (!attachment) return void notFoundPage(reply);
  if (!(await mayReadAttachment(svc.db, caller.realm, caller.user, attachment))) return void forbiddenPage(reply);
  return attachment;
}

function answerError(reply: FastifyReply, err: unknown) {
  if (err instanceof ApiError) return reply.code(err.status).headers(err.headers).send(err.body());
  throw err;
}

/** A short-lived token naming one path: `<expiry>.<path in base64url>.<signature>`. */
class TemporaryUrls {
  readonly #secret = randomBytes(32);

  #sign(payload: string): string {
    return createHmac('sha256', this.#secret).update(payload).digest('base64url');
  }

  url(pathId: string): string {
    const payload = `${Math.floor(Date.now() / 1000) + TEMPORARY_URL_SECONDS}.${Buffer.from(pathId).toString('base64url')}`;
    return `/user_uploads/temporary/${payload}.${this.#sign(payload)}/${pathId.split('/').pop()}`;
  }

  /** The path a valid, unexpired token names; undefined otherwise. */
  pathOf(token: string): string | undefined {
    const [expiry, path, signature] = token.split('.');
    if (!expiry || !path || !signature) return undefined;
    const expected = Buffer.from(this.#sign(`${expiry}.${path}`));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    if (Number(expiry) < Date.now() / 1000) return undefined;
    return Buffer.from(path, 'base64url').toString();
  }
}

export function registerUploadFileRoutes(app: FastifyInstance, svc: Services): void {
  const temporary = new TemporaryUrls();
  const methods: ('GET' | 'HEAD')[] = ['GET', 'HEAD'];

  app.route({
    method: methods,
    url: '/user_uploads/*',
    handler: async (req, reply) => {
      reply.header('Cache-Control', 'private, no-cache');
      const parts = (req.params as { '*': string })['*'].split('/');
      try {
        if (parts[0] === 'temporary' && parts.length === 3) {
          const pathId = temporary.pathOf(parts[1]!);
          if (pathId === undefined) throw badRequest('Invalid token');
          if (pathId.split('/').pop() !== parts[2]) throw badRequest('Invalid filename');
          const attachment = await attachmentByPath(svc.db, Number(pathId.split('/')[0]), pathId);
          if (!attachment) return notFoundPage(reply);
          return await sendStored(svc, reply, fileKey(pathId), attachment.content_type, attachment.file_name, false);
        }
        if (parts[0] === 'thumbnail') {
          const format = parts.at(-1)!;
          const pathId = parts.slice(1, -1).join('/');
          if (!THUMBNAIL_FORMATS.has(format)) return notFoundPage(reply);
          const attachment = await readableUpload(svc, req, reply, pathId);
          if (!attachment) return reply;
          return await sendStored(svc, reply, thumbnailKey(pathId, format), 'image/webp', `${attachment.file_name}.webp`, false);
        }
        const download = parts[0] === 'download';
        const pathId = (download ? parts.slice(1) : parts).join('/');
        const attachment = await readableUpload(svc, req, reply, pathId);
        if (!attachment) return reply;
        return await sendStored(svc, reply, fileKey(pathId), attachment.content_type, attachment.file_name, download);
      } catch (err) {
        return answerError(reply, err);
      }
    },
  });

  // GET /api/v1/user_uploads/<realm_id>/<path>: the temporary URL (digest: get-file-temporary-url).
  app.route({
    method: methods,
    url: '/api/v1/user_uploads/:realm/*',
    handler: async (req, reply) => {
      reply.header('Cache-Control', 'max-age=0, no-cache, no-store, must-revalidate, private');
      const { realm, '*': rest } = req.params as { realm: string; '*': string };
      try {
        const pathId = `${realm}/${rest}`;
        const attachment = await readableUpload(svc, req, reply, pathId);
        if (!attachment) return reply;
        return reply.send({ result: 'success', msg: '', url: temporary.url(pathId) });
      } catch (err) {
        return answerError(reply, err);
      }
    },
  });

  const servePublicImage = async (reply: FastifyReply, key: string) => {
    const data = await svc.storage.get(key);
    if (!data) return reply.callNotFound();
    // The URL carries the version: a new image has a new URL.
    return reply.header('Content-Type', 'image/png').header('Cache-Control', 'public, max-age=86400').header('X-Content-Type-Options', 'nosniff').send(data);
  };
  app.route({
    method: methods,
    url: '/user_avatars/:realm/:file',
    handler: (req, reply) => {
      const { realm, file } = req.params as { realm: string; file: string };
      if (!/^\d{1,15}$/.test(realm) || !/^\d{1,15}(-medium)?\.png$/.test(file)) return reply.callNotFound();
      return servePublicImage(reply, avatarKey(Number(realm), file));
    },
  });
  app.route({
    method: methods,
    url: '/user_avatars/:realm/realm/:file',
    handler: (req, reply) => {
      const { realm, file } = req.params as { realm: string; file: string };
      if (!/^\d{1,15}$/.test(realm) || !/^(icon|logo|night_logo)\.png$/.test(file)) return reply.callNotFound();
      return servePublicImage(reply, realmImageKey(Number(realm), file));
    },
  });
}
