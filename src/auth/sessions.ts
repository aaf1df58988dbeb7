// Browser sessions (docs/DECISIONS.md "The web client's sessions"): a random
// secret in an HttpOnly cookie, stored hashed in the database so that every
// process sees it; a second cookie, `csrftoken`, readable by page scripts,
// which they repeat in X-CSRFToken on every state-changing request (the
// reference's convention). The browser never holds an API key.

import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Session } from './tables.ts';
import { ApiError } from '../http/errors.ts';
import { randomToken } from './passwords.ts';

export const SESSION_COOKIE = 'sessionid';
export const CSRF_COOKIE = 'csrftoken';
/** Two weeks, as the reference's SESSION_COOKIE_AGE. */
export const SESSION_AGE_SECONDS = 14 * 24 * 3600;

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** The request's cookies (RFC 6265 `name=value; ...`); the first of a repeated name wins. */
export function readCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (name !== '' && !cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

/** Host-only cookies (each organization's subdomain has its own), Secure behind https. */
function cookie(config: Services['config'], name: string, value: string, maxAge: number, httpOnly: boolean): string {
  const parts = [`${name}=${value}`, 'Path=/', `Max-Age=${maxAge}`, 'SameSite=Lax'];
  if (httpOnly) parts.push('HttpOnly');
  if (config.externalUrl.startsWith('https:')) parts.push('Secure');
  return parts.join('; ');
}

/** Set-Cookie values that start a session in the browser. */
export function sessionCookies(config: Services['config'], token: string, csrfToken: string): string[] {
  return [cookie(config, SESSION_COOKIE, token, SESSION_AGE_SECONDS, true), cookie(config, CSRF_COOKIE, csrfToken, SESSION_AGE_SECONDS, false)];
}

/** Set-Cookie values that make the browser forget both cookies. */
export function clearedCookies(config: Services['config']): string[] {
  return [cookie(config, SESSION_COOKIE, '', 0, true), cookie(config, CSRF_COOKIE, '', 0, false)];
}

export async function startSession(db: Executor, user: User): Promise<{ token: string; csrfToken: string }> {
  const token = randomToken(40);
  const csrfToken = randomToken(32);
  const now = new Date();
  // Expired sessions of this user go as a new one starts: the table does not grow without end.
  await db.deleteFrom('sessions').where('user_id', '=', user.id).where('expires_at', '<=', now).execute();
  await db
    .insertInto('sessions')
    .values({
      token_hash: hashToken(token),
      realm_id: user.realm_id,
      user_id: user.id,
      csrf_token: csrfToken,
      created_at: now,
      expires_at: new Date(now.getTime() + SESSION_AGE_SECONDS * 1000),
    })
    .execute();
  return { token, csrfToken };
}

/** Starts a session and hands the browser its two cookies (login, sign-up). */
export async function signIn(svc: Pick<Services, 'db' | 'config'>, setCookies: (values: string[]) => void, user: User): Promise<void> {
  const { token, csrfToken } = await startSession(svc.db, user);
  setCookies(sessionCookies(svc.config, token, csrfToken));
}

export async function endSession(db: Executor, sessionId: number): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', sessionId).execute();
}

/** Every session of a user ends (a password reset). */
export async function endUserSessions(db: Executor, realmId: number, userId: number): Promise<void> {
  await db.deleteFrom('sessions').where('realm_id', '=', realmId).where('user_id', '=', userId).execute();
}

export interface SessionCaller {
  session: Session;
  user: User;
  realm: Realm;
}

/**
 * The live session the request's cookie names for this organization, or
 * undefined (no cookie, unknown or expired, another organization's, a
 * deactivated account or organization: all are "not logged in").
 */
export async function sessionOf(db: Executor, req: FastifyRequest, subdomain: string): Promise<SessionCaller | undefined> {
  const token = readCookies(req.headers.cookie).get(SESSION_COOKIE);
  if (!token) return undefined;
  const session = await db
    .selectFrom('sessions')
    .selectAll()
    .where('token_hash', '=', hashToken(token))
    .where('expires_at', '>', new Date())
    .executeTakeFirst();
  if (!session) return undefined;
  const realm = await db.selectFrom('realms').selectAll().where('id', '=', session.realm_id).executeTakeFirstOrThrow();
  if (realm.string_id !== subdomain || realm.deactivated) return undefined;
  const user = await db.selectFrom('users').selectAll().where('id', '=', session.user_id).executeTakeFirstOrThrow();
  if (!user.is_active) return undefined;
  return { session, user, realm };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const changesState = (req: FastifyRequest): boolean => !SAFE_METHODS.has(req.method);

/**
 * A state-changing request from a browser must come from the server's own
 * pages: a cross-site Origin (or, without one, Referer) is refused. Clients
 * that are not browsers send neither and cannot be tricked into a request.
 */
export function checkOrigin(req: FastifyRequest): void {
  if (!changesState(req)) return;
  const source = req.headers.origin ?? req.headers.referer;
  if (source === undefined) return;
  let host: string;
  try {
    host = new URL(source).host;
  } catch {
    host = '';
  }
  if (source === 'null' || host.toLowerCase() !== req.host.toLowerCase()) {
    throw new ApiError('CSRF_FAILED', 'CSRF error: request from another site.');
  }
}

/** X-CSRFToken must repeat the session's token (the csrftoken cookie's value). */
export function checkCsrfToken(req: FastifyRequest, session: Session): void {
  if (!changesState(req)) return;
  const header = req.headers['x-csrftoken'];
  if (header === undefined || header === '') throw new ApiError('CSRF_FAILED', 'CSRF error: CSRF token missing.');
  if (header !== session.csrf_token) throw new ApiError('CSRF_FAILED', 'CSRF error: CSRF token incorrect.');
}
