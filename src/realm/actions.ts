// Creating organizations: the realm row, its system groups and permission
// settings, and its first owner, in one transaction.

import type { Services } from '../services.ts';
import type { Realm } from './tables.ts';
import type { User } from '../users/tables.ts';
import { type ActionContext, transact } from '../db/transact.ts';
import { badRequest } from '../http/errors.ts';
import { createSystemGroups } from '../user_groups/system-group-actions.ts';
import { REALM_PERMISSION_SETTINGS } from '../user_groups/permission-settings.ts';
import type { SystemGroupName } from '../user_groups/system-groups.ts';
import { insertUser, passwordHashOf } from '../users/actions.ts';
import { createSystemBots } from '../users/system-bots.ts';
import { ROLE } from '../users/roles.ts';
import { activeUserIds } from '../users/queries.ts';
import { checkFullName, checkPasswordStrength, isValidEmail } from '../users/validation.ts';

const SUBDOMAIN = /^(|[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?)$/;
export const MAX_REALM_NAME_LENGTH = 40;

export interface NewRealm {
  subdomain: string;
  name: string;
  owner: { email: string; fullName: string; password: string | null };
}

/**
 * What a new organization starts with (onboarding/, Services.hooks, wiring.ts), in the same
 * transaction; the context's actor is the first owner. Returns the organization as it then is.
 */
export type RealmCreatedHook = (ctx: ActionContext<Services, User>) => Promise<Realm>;

export async function createRealm(svc: Services, r: NewRealm): Promise<{ realm: Realm; owner: User }> {
  if (!SUBDOMAIN.test(r.subdomain)) throw badRequest(`Invalid subdomain '${r.subdomain}'`);
  const name = r.name.trim();
  if (name === '' || name.length > MAX_REALM_NAME_LENGTH) throw badRequest('Invalid organization name');
  if (!isValidEmail(r.owner.email)) throw badRequest(`Invalid email '${r.owner.email}'`);
  const fullName = checkFullName(r.owner.fullName);
  if (r.owner.password !== null) checkPasswordStrength(r.owner.password);
  const passwordHash = await passwordHashOf(svc, r.owner.password);
  return transact(svc, async (tx, emit) => {
    const existing = await tx.selectFrom('realms').select('id').where('string_id', '=', r.subdomain).executeTakeFirst();
    if (existing) throw badRequest(`Subdomain '${r.subdomain}' is already in use`);
    const inserted = await tx
      .insertInto('realms')
      .values({ string_id: r.subdomain, name, date_created: new Date(), settings: '{}', group_settings: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const groups = await createSystemGroups(tx, inserted.id);
    const groupSettings = Object.fromEntries(Object.entries(REALM_PERMISSION_SETTINGS).map(([setting, s]) => [setting, groups[s.default as SystemGroupName]]));
    const realm = await tx
      .updateTable('realms')
      .set({ group_settings: JSON.stringify(groupSettings) })
      .where('id', '=', inserted.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await createSystemBots(tx, realm.id);
    const owner = await insertUser(tx, svc, realm, {
      email: r.owner.email,
      fullName,
      passwordHash,
      role: ROLE.OWNER,
      canCreateUsers: true,
      canChangeUserEmails: true,
    });
    // The organization exists only from here on: its context opens here (not with transactAs).
    return { realm: await svc.hooks.realmCreated({ svc, tx, emit, realm, actor: owner }), owner };
  });
}

/** For operators: closes or reopens an organization; its users' credentials stop or resume working. */
export async function setRealmDeactivated(svc: Services, realmId: number, deactivated: boolean): Promise<void> {
  await transact(svc, async (tx, emit) => {
    const result = await tx.updateTable('realms').set({ deactivated }).where('id', '=', realmId).executeTakeFirst();
    if (result.numUpdatedRows === 0n) throw badRequest('No such organization');
    // Clients (and this server's caches) learn that the organization is gone.
    if (deactivated) emit(realmId, { type: 'realm', op: 'deactivated', realm_id: realmId }, await activeUserIds(tx, realmId));
  });
}
