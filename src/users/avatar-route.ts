// GET /avatar/{user_id_or_email}[/medium] (digest 1.26): a redirect to the
// user's avatar image. Lives outside /api/v1 so <img> tags can point at it.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import { ApiError, unauthorized } from '../http/errors.ts';
import { authenticate, authenticateQueryApiKey } from '../auth/authenticate.ts';
import { getRealmBySubdomain, settingsOf, subdomainFromHost } from '../realm/queries.ts';
import { accessibleUsers, canAccess, getUser, getUserByEmail } from './queries.ts';
import { avatarUrl, mediumAvatarUrl } from './format.ts';
import type { User } from './tables.ts';
import type { Realm } from '../realm/tables.ts';
import { createHash } from 'node:crypto';

const UNKNOWN_AVATAR = '/static/images/unknown-user-avatar.png';

async function caller(svc: Services, req: FastifyRequest): Promise<{ realm: Realm | undefined; user: User | null }> {
  const subdomain = subdomainFromHost(req.headers.host, svc.config.externalUrl);
  const query = req.query as Record<string, string | undefined>;
  if (query.api_key && !req.headers.authorization) {
    return authenticateQueryApiKey(svc, query.api_key, subdomain);
  }
  // Basic auth, or the browser's session cookie (an <img> in the web client).
  return (await authenticate(svc, req, subdomain, 'any')) ?? { realm: await getRealmBySubdomain(svc.db, subdomain), user: null };
}

async function redirectToAvatar(svc: Services, req: FastifyRequest, reply: FastifyReply, medium: boolean) {
  try {
    const { user: viewer, realm } = await caller(svc, req);
    const key = (req.params as { user: string }).user;
    const byId = /^\d+$/.test(key);
    // Spectators may look up avatars by id only, and only where the organization allows them.
    if (!viewer && (!byId || !realm || !settingsOf(realm).enable_spectator_access)) throw unauthorized();
    const target = realm ? (byId ? await getUser(svc.db, realm.id, Number(key)) : await getUserByEmail(svc.db, realm.id, key)) : undefined;
    let url: string;
    if (target && realm && canAccess(await accessibleUsers(svc, svc.db, realm, viewer), target.id)) {
      url = medium ? mediumAvatarUrl(target) : avatarUrl(target);
    } else if (!byId) {
      url = `https://secure.gravatar.com/avatar/${createHash('md5').update(key.toLowerCase()).digest('hex')}?d=identicon`;
    } else {
      url = UNKNOWN_AVATAR;
    }
    const extra = new URLSearchParams(req.query as Record<string, string>);
    extra.delete('api_key');
    const qs = extra.toString();
    if (qs) url += (url.includes('?') ? '&' : '?') + qs;
    return reply.code(302).header('Location', url).header('Cache-Control', 'private, max-age=30').send();
  } catch (err) {
    if (err instanceof ApiError) return reply.code(err.status).headers(err.headers).send(err.body());
    throw err;
  }
}

export function registerAvatarRoutes(app: FastifyInstance, svc: Services): void {
  // HEAD wherever GET is, as on the API's routes.
  const method = ['GET', 'HEAD'];
  app.route({ method, url: '/avatar/:user', handler: (req, reply) => redirectToAvatar(svc, req, reply, false) });
  app.route({ method, url: '/avatar/:user/medium', handler: (req, reply) => redirectToAvatar(svc, req, reply, true) });
}
