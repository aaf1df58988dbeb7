// First start: an empty database gets an organization and its owner, so a new
// server is usable at once (BOOTSTRAP_EMAIL, BOOTSTRAP_PASSWORD, BOOTSTRAP_ORG_NAME).

import type { Services } from '../services.ts';
import { createRealm } from './actions.ts';
import { generatePassword } from '../auth/passwords.ts';

export interface BootstrapResult {
  email: string;
  /** Set only when the password was generated here; it is shown this once. */
  generatedPassword?: string;
}

export async function bootstrapIfEmpty(svc: Services): Promise<BootstrapResult | undefined> {
  const any = await svc.db.selectFrom('realms').select('id').limit(1).executeTakeFirst();
  if (any) return undefined;
  const { email, orgName } = svc.config.bootstrap;
  const generated = svc.config.bootstrap.password === undefined ? generatePassword() : undefined;
  const password = svc.config.bootstrap.password ?? generated!;
  try {
    await createRealm(svc, { subdomain: '', name: orgName, owner: { email, fullName: 'Organization Owner', password } });
  } catch (err) {
    // Another process's first start (another machine of a cluster) created it meanwhile.
    if (await svc.db.selectFrom('realms').select('id').limit(1).executeTakeFirst()) return undefined;
    throw err;
  }
  return { email, generatedPassword: generated };
}
