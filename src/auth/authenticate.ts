// THE authentication of a request, for every route that reads credentials:
// the API under /api/v1 (HTTP Basic with an API key), the browser's API under
// /json and /accounts (the session cookie, with its cross-site request
// forgery checks), and files served outside both (avatars, uploads), which
// accept either.

import type { FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Session } from './tables.ts';
import { authenticateApiKey, parseBasicAuth } from './basic.ts';
import { checkCsrfToken, checkOrigin, sessionOf } from './sessions.ts';
import { unauthorized } from '../http/errors.ts';

/** 'api_key': Basic auth only; 'session': the cookie only; 'any': Basic auth if given, else the cookie. */
export type Scheme = 'api_key' | 'session' | 'any';

export interface Caller {
  user: User;
  realm: Realm;
  /** Set when the cookie authenticated the request (logout ends it). */
  session?: Session;
}

/**
 * Who is asking, or undefined for a request without credentials. Wrong
 * credentials are a 401; a session request that changes state from another
 * site or without its CSRF token is a 403 CSRF_FAILED, even when anonymous
 * (login, password reset, invitation acceptance).
 */
export async function authenticate(
  svc: Pick<Services, 'db' | 'credentials'>,
  req: FastifyRequest,
  subdomain: string,
  scheme: Scheme,
): Promise<Caller | undefined> {
  if (scheme !== 'session') {
    const credentials = parseBasicAuth(req.headers.authorization);
    if (credentials) return authenticateApiKey(svc.db, credentials, subdomain, svc.credentials);
    if (scheme === 'api_key') return undefined;
  }
  checkOrigin(req);
  const found = await sessionOf(svc.db, req, subdomain);
  if (found) checkCsrfToken(req, found.session);
  return found;
}

/**
 * An API key given as the `api_key` query parameter (an <img> that cannot send
 * headers: GET /avatar/...): the key names its account, which must pass the same
 * checks as with Basic auth.
 */
export async function authenticateQueryApiKey(svc: Pick<Services, 'db'>, apiKey: string, subdomain: string): Promise<{ user: User; realm: Realm }> {
  const user = await svc.db.selectFrom('users').selectAll().where('api_key', '=', apiKey).executeTakeFirst();
  if (!user) throw unauthorized('Invalid API key');
  return authenticateApiKey(svc.db, { username: user.email, apiKey }, subdomain);
}
