// GET /external_content/<hmac>/<hex url>: Confab's image proxy, in the form the
// reference's Camo proxy answers (zerver/lib/camo.py): the URL a message showed,
// signed with the server's key, so that readers' browsers never contact other
// hosts and nobody can make the server fetch a URL it did not sign. The fetch
// goes through THE outbound client (address rules, time and size limits) and
// the answer streams through; only images pass.

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import { OutboundError, outboundStream } from '../net/outbound.ts';

/** The signature of a URL under the proxy key (HMAC-SHA1, hex), as markdown/previews.ts writes it. */
function signature(key: string, url: string): Buffer {
  return createHmac('sha1', key).update(url).digest();
}

/** The URL a proxied path stands for, if its signature is right. */
export function verifiedUrl(key: string, digest: string, hex: string): string | null {
  if (!/^[0-9a-f]{40}$/i.test(digest) || !/^(?:[0-9a-f]{2})+$/i.test(hex)) return null;
  const url = Buffer.from(hex, 'hex').toString('utf8');
  return timingSafeEqual(Buffer.from(digest, 'hex'), signature(key, url)) ? url : null;
}

function fail(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).header('Content-Type', 'text/plain; charset=utf-8').header('Cache-Control', 'no-store').send(message);
}

async function proxy(svc: Services, req: FastifyRequest, reply: FastifyReply) {
  const { digest, hex } = req.params as { digest: string; hex: string };
  const url = verifiedUrl(svc.imageProxyKey, digest, hex);
  if (url === null) return fail(reply, 403, 'Bad signature');
  const limits = svc.config.previewFetch;
  let upstream: Awaited<ReturnType<typeof outboundStream>>;
  try {
    upstream = await outboundStream(
      { url, headers: { accept: 'image/*' }, timeoutMs: limits.timeoutMs, maxBytes: limits.maxImageBytes },
      { allowPrivate: svc.config.allowPrivateUrls },
    );
  } catch (err) {
    if (err instanceof OutboundError && err.kind === 'timeout') return fail(reply, 504, 'Upstream timed out');
    if (err instanceof OutboundError && (err.kind === 'refused_address' || err.kind === 'bad_url')) return fail(reply, 404, 'Not found');
    return fail(reply, 502, 'Upstream unavailable');
  }
  const type = String(upstream.headers['content-type'] ?? '').toLowerCase();
  const length = Number(upstream.headers['content-length'] ?? NaN);
  const refuse = (status: number, message: string) => {
    upstream.body.destroy();
    return fail(reply, status, message);
  };
  if (upstream.status !== 200) return refuse(404, 'Not found');
  if (!type.startsWith('image/')) return refuse(400, 'Not an image');
  if (length > limits.maxImageBytes) return refuse(413, 'Image too large');
  reply
    .header('Content-Type', type)
    .header('Cache-Control', 'public, max-age=86400')
    .header('X-Content-Type-Options', 'nosniff')
    // An SVG opened on its own must not run scripts on our origin.
    .header('Content-Security-Policy', "default-src 'none'; img-src data:; style-src 'unsafe-inline'");
  if (Number.isFinite(length)) reply.header('Content-Length', String(length));
  return reply.send(upstream.body);
}

export function registerImageProxyRoutes(app: FastifyInstance, svc: Services): void {
  app.route({ method: ['GET', 'HEAD'], url: '/external_content/:digest/:hex', handler: (req, reply) => proxy(svc, req, reply) });
}
