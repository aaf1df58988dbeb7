// Password login (POST /fetch_api_key, digest 1.8).

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import { settingsOf } from '../realm/queries.ts';
import { getUserByEmail } from '../users/queries.ts';
import { isValidEmail } from '../users/validation.ts';
import { rateLimited } from './rate-limit-http.ts';

export async function fetchApiKey(svc: Services, realm: Realm | undefined, username: string, password: string): Promise<User> {
  if (!realm) throw new ApiError('NONEXISTENT_SUBDOMAIN', 'Invalid subdomain');
  const { loginFailures, loginWindowSeconds } = svc.config.rateLimit;
  const key = `login:${realm.id}:${username.trim().toLowerCase()}`;
  // Only failures count: after too many, even the right password must wait.
  const limit = await svc.rateLimiter.peek(key, loginFailures, loginWindowSeconds);
  if (!limit.allowed) throw rateLimited(limit.retryAfter);
  if (!isValidEmail(username.trim())) throw badRequest('Enter a valid email address.');
  if (realm.deactivated) throw new ApiError('REALM_DEACTIVATED', 'This organization has been deactivated');
  if (!settingsOf(realm).password_auth_enabled) {
    throw new ApiError('PASSWORD_AUTH_DISABLED', 'Password authentication is disabled in this organization');
  }
  const user = await getUserByEmail(svc.db, realm.id, username.trim());
  // The password is checked before anything about the account is revealed.
  const ok = user?.password_hash ? await svc.passwords.verify(user.password_hash, password) : false;
  if (!user || !ok) {
    await svc.rateLimiter.hit(key, loginFailures, loginWindowSeconds);
    throw new ApiError('AUTHENTICATION_FAILED', 'Your username or password is incorrect');
  }
  if (!user.is_active) throw new ApiError('USER_DEACTIVATED', 'Account is deactivated');
  return user;
}
