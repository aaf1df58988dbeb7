// The legacy push registrations (the reference's PushDeviceToken): an app sends
// its APNs or FCM token, and the server keeps it, also where no push service is
// configured, so that one added later reaches devices registered before.

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { sql } from 'kysely';
import { transact } from '../db/transact.ts';
import { badRequest, noBotRequests } from '../http/errors.ts';

export type TokenKind = 'apns' | 'fcm';

const MAX_TOKEN_LENGTH = 4096;

/**
 * The reference's validate_token. An APNs token must decode as base64 the way
 * Python's lenient decoder does (characters outside the alphabet are skipped).
 */
export function checkToken(token: string, kind: TokenKind): void {
  if (token === '' || token.length > MAX_TOKEN_LENGTH) throw badRequest('Empty or invalid length token');
  if (kind === 'apns') {
    const body = token.replace(/[^A-Za-z0-9+/=]/g, '');
    const data = body.replace(/=+$/, '');
    if (data.includes('=') || data.length % 4 === 1 || (body.length - data.length > 0 && body.length % 4 !== 0)) {
      throw badRequest('Invalid APNS token');
    }
  }
}

/** POST /users/me/apns_device_token, /users/me/android_gcm_reg_id: the same token again refreshes it. */
export async function addPushToken(svc: Services, realm: Realm, user: User, kind: TokenKind, token: string, iosAppId: string | null): Promise<void> {
  if (user.is_bot) throw noBotRequests();
  checkToken(token, kind);
  await transact(svc, (tx) =>
    tx
      .insertInto('push_device_tokens')
      .values({ realm_id: realm.id, user_id: user.id, kind, token, ios_app_id: iosAppId, last_updated: new Date() })
      .onConflict((oc) => oc.columns(['user_id', 'kind', 'token_digest']).doUpdateSet({ ios_app_id: iosAppId, last_updated: new Date() }))
      .execute(),
  );
}

/** DELETE of the same paths. */
export async function removePushToken(svc: Services, realm: Realm, user: User, kind: TokenKind, token: string): Promise<void> {
  if (user.is_bot) throw noBotRequests();
  checkToken(token, kind);
  await transact(svc, async (tx) => {
    const removed = await tx
      .deleteFrom('push_device_tokens')
      .where('realm_id', '=', realm.id)
      .where('user_id', '=', user.id)
      .where('kind', '=', kind)
      .where('token_digest', '=', sql<string>`md5(${token})`)
      .where('token', '=', token)
      .returning('id')
      .executeTakeFirst();
    if (!removed) throw badRequest('Token does not exist');
  });
}
