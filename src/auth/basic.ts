// HTTP Basic authentication with an email and an API key (spec "Authentication",
// digest 5.3). Every failure is a 401 UNAUTHORIZED carrying the challenge header.

import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { badRequest, unauthorized } from '../http/errors.ts';
import type { CredentialCache } from './credential-cache.ts';

export interface Credentials {
  /** Null for a key given alone (incoming webhooks' `api_key` parameter). */
  username: string | null;
  apiKey: string;
}

/**
 * Headers decoded before: a client sends the same one with every request (each long-poll).
 * Only short ones (an email and a key), and at most MAX_DECODED: the map's size is bounded.
 */
const decoded = new Map<string, Credentials>();
const MAX_DECODED = 100_000;
const MAX_REMEMBERED_HEADER = 400;

/** Reads `Authorization: Basic ...`; undefined when the header is absent. */
export function parseBasicAuth(header: string | undefined): Credentials | undefined {
  if (header === undefined || header === '') return undefined;
  const known = decoded.get(header);
  if (known) return known;
  const credentials = decodeBasicAuth(header);
  if (header.length <= MAX_REMEMBERED_HEADER) {
    if (decoded.size >= MAX_DECODED) decoded.clear();
    decoded.set(header, credentials);
  }
  return credentials;
}

function decodeBasicAuth(header: string): Credentials {
  const [scheme, encoded] = header.trim().split(/\s+/, 2);
  if (scheme.toLowerCase() !== 'basic') throw badRequest('This endpoint requires HTTP basic authentication.');
  const text = Buffer.from(encoded ?? '', 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (!encoded || colon < 0) throw unauthorized('Invalid authorization header for basic auth');
  return Object.freeze({ username: text.slice(0, colon), apiKey: text.slice(colon + 1).trim() });
}

const API_KEY_FORMAT = /^[A-Za-z0-9]{32}$/;

/** The user these credentials belong to, checked against the organization the request is for. */
export async function authenticateApiKey(
  db: Executor,
  credentials: Credentials,
  subdomain: string,
  cache?: CredentialCache,
): Promise<{ user: User; realm: Realm }> {
  // Only well-formed keys are remembered: one found needs no second look at its form.
  const cached = cache?.get(credentials.apiKey);
  if (!cached && !API_KEY_FORMAT.test(credentials.apiKey)) throw unauthorized('Malformed API key');
  let found = cached;
  let stamp: number | undefined;
  if (!found) {
    const read = () => readCredentials(db, credentials.apiKey);
    if (cache) ({ found, stamp } = await cache.load(credentials.apiKey, read));
    else found = await read();
    if (!found) throw unauthorized('Invalid API key');
  }
  const { user, realm } = found;
  const refused = refusal(found, credentials, subdomain);
  if (refused) throw unauthorized(refused);
  // Only credentials that pass are remembered: a refusal is always read afresh.
  if (!cached) cache?.set(credentials.apiKey, user, realm, stamp);
  return { user, realm };
}

/**
 * The caller the cache holds for these credentials, when they pass every check; else
 * undefined (`authenticateApiKey` then reads them, or says why they are refused).
 */
export function cachedCaller(cache: CredentialCache, credentials: Credentials, subdomain: string): { user: User; realm: Realm } | undefined {
  const found = cache.get(credentials.apiKey);
  return found && refusal(found, credentials, subdomain) === undefined ? found : undefined;
}

/** Why the account these credentials found may not call the organization at `subdomain`. */
function refusal({ user, realm }: { user: User; realm: Realm }, credentials: Credentials, subdomain: string): string | undefined {
  const name = credentials.username?.toLowerCase();
  if (name !== undefined && user.delivery_email.toLowerCase() !== name && user.email.toLowerCase() !== name) return 'Invalid API key';
  if (realm.deactivated) return 'This organization has been deactivated';
  if (!user.is_active) return 'Account is deactivated';
  if (realm.string_id !== subdomain) return 'Account is not associated with this subdomain';
  return undefined;
}

/** The account an API key names, and its organization. */
async function readCredentials(db: Executor, apiKey: string): Promise<{ user: User; realm: Realm } | undefined> {
  const user = await db.selectFrom('users').selectAll().where('api_key', '=', apiKey).executeTakeFirst();
  if (!user) return undefined;
  const realm = await db.selectFrom('realms').selectAll().where('id', '=', user.realm_id).executeTakeFirstOrThrow();
  return { user, realm };
}
