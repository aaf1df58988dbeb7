// Why a group cannot be deactivated (digest 1.24): it is a subgroup of an active
// group, or a permission setting names it (directly or as a subgroup of an
// anonymous value) in a user group, the organization, or a domain that
// registered itself here (channels).

import type { Hooked } from '../services.ts';
import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import { REALM_PERMISSION_SETTINGS, type GroupPermission } from './permission-settings.ts';
import { groupsWithSettingIn } from './queries.ts';

export type GroupUseObjection =
  | { type: 'subgroup'; supergroup_ids: number[] }
  | { type: 'channel'; channel_id: number; settings: string[] }
  | { type: 'user_group'; group_id: number; settings: GroupPermission[] }
  | { type: 'realm'; settings: string[] };

/**
 * A domain whose objects hold group settings reports the live objects (not
 * archived channels) with a setting in `settingGroupIds`: the group itself and
 * the anonymous values that name it as a subgroup.
 */
export type GroupUseSource = (db: Executor, realm: Realm, settingGroupIds: ReadonlySet<number>) => Promise<GroupUseObjection[]>;

/** Every use of the group that forbids deactivating it, in Zulip's order: subgroup, channels, groups, organization. */
export async function groupUseObjections(svc: Hooked, db: Executor, realm: Realm, groupId: number): Promise<GroupUseObjection[]> {
  const supergroups = await db
    .selectFrom('user_group_subgroups as s')
    .innerJoin('user_groups as g', 'g.id', 's.supergroup_id')
    .select(['g.id', 'g.name', 'g.deactivated'])
    .where('s.subgroup_id', '=', groupId)
    .orderBy('g.id')
    .execute();
  const objections: GroupUseObjection[] = [];
  const activeSupergroups = supergroups.filter((g) => g.name !== null && !g.deactivated).map((g) => g.id);
  if (activeSupergroups.length > 0) objections.push({ type: 'subgroup', supergroup_ids: activeSupergroups });

  const settingGroupIds = new Set([groupId, ...supergroups.filter((g) => g.name === null).map((g) => g.id)]);
  for (const source of svc.hooks.groupUseSources) objections.push(...(await source(db, realm, settingGroupIds)));

  for (const { group, settings } of await groupsWithSettingIn(db, realm.id, [...settingGroupIds])) {
    // A group's own settings stop mattering once it is deactivated (and stay editable).
    if (group.deactivated || group.id === groupId) continue;
    objections.push({ type: 'user_group', group_id: group.id, settings });
  }

  const realmSettings = Object.keys(REALM_PERMISSION_SETTINGS).filter((s) => settingGroupIds.has(realm.group_settings[s]));
  if (realmSettings.length > 0) objections.push({ type: 'realm', settings: realmSettings });
  return objections;
}
