// E2EE push device registration (spec endpoint 15, digest 1.15, feature level
// 406). The server keeps the registration and reports its state to the user's
// clients (`push_device` events, register's `push_devices`). Forwarding it to
// the push service is not done by this server yet: registrations stay
// "pending" (see docs/DECISIONS.md).

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { transact } from '../db/transact.ts';
import { ApiError, badRequest } from '../http/errors.ts';

export interface PushDeviceEvent {
  type: 'push_device';
  push_account_id: string;
  status: 'active' | 'pending' | 'failed';
  error_code: string | null;
}

export interface PushRegistration {
  token_kind: 'fcm' | 'apns';
  push_account_id: number;
  push_public_key: string;
  bouncer_public_key: string;
  encrypted_push_registration: string;
}

export async function registerPushDevice(svc: Services, realm: Realm, actor: User, reg: PushRegistration): Promise<void> {
  if (actor.is_bot) throw badRequest('This endpoint does not accept bot requests.');
  if (svc.config.pushServiceUrl === undefined) {
    throw new ApiError('PUSH_SERVICE_NOT_CONFIGURED', 'Server is not configured to use push notification service.');
  }
  await transact(svc, async (tx, emit) => {
    const existing = await tx
      .selectFrom('push_devices')
      .select(['id', 'error_code'])
      .where('user_id', '=', actor.id)
      .where('push_account_id', '=', reg.push_account_id)
      .forUpdate()
      .executeTakeFirst();
    // The same registration again is a success that changes nothing; a failed one starts over.
    if (existing && existing.error_code === null) return;
    const fields = { ...reg, status: 'pending', error_code: null };
    if (existing) await tx.updateTable('push_devices').set(fields).where('id', '=', existing.id).execute();
    else {
      // A concurrent request that inserted the same registration first wins; this one is then a repeat.
      const inserted = await tx
        .insertInto('push_devices')
        .values({ ...fields, realm_id: realm.id, user_id: actor.id, date_created: new Date() })
        .onConflict((oc) => oc.columns(['user_id', 'push_account_id']).doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!inserted) return;
    }
    emit(realm.id, { type: 'push_device', push_account_id: String(reg.push_account_id), status: 'pending', error_code: null }, [actor.id]);
  });
}
