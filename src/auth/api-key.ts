// POST /users/me/api_key/regenerate: a new API key; the old one stops working at once.

import type { Services } from '../services.ts';
import type { User } from '../users/tables.ts';
import { noBotRequests } from '../http/errors.ts';
import { newApiKey } from './passwords.ts';
import { CREDENTIALS_CHANGED } from './credential-cache.ts';
import { transact } from '../db/transact.ts';

export async function regenerateApiKey(svc: Services, user: User): Promise<string> {
  if (user.is_bot) throw noBotRequests();
  const apiKey = newApiKey();
  await transact(svc, async (tx, emit) => {
    await tx.updateTable('users').set({ api_key: apiKey }).where('realm_id', '=', user.realm_id).where('id', '=', user.id).execute();
    // No client hears of it (the reference sends no event); every process's credential cache does.
    emit(user.realm_id, { type: CREDENTIALS_CHANGED, user_id: user.id }, []);
  });
  // Requests already authenticated by the old key finish; none after this line passes (here even
  // if the broker could not carry the notice).
  svc.credentials.forgetUser(user.id);
  return apiKey;
}
