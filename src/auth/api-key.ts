// POST /users/me/api_key/regenerate: a new API key; the old one stops working at once.

import type { Services } from '../services.ts';
import type { User } from '../users/tables.ts';
import { noBotRequests } from '../http/errors.ts';
import { newApiKey } from './passwords.ts';
import { transact } from '../db/transact.ts';

export async function regenerateApiKey(svc: Services, user: User): Promise<string> {
  if (user.is_bot) throw noBotRequests();
  const apiKey = newApiKey();
  await transact(svc, (tx) => tx.updateTable('users').set({ api_key: apiKey }).where('realm_id', '=', user.realm_id).where('id', '=', user.id).execute());
  // Requests already authenticated by the old key finish; none after this line passes.
  svc.credentials.forgetUser(user.id);
  return apiKey;
}
