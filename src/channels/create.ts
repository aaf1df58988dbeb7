// A new channel: the checks on its settings and its row (insertChannel), shared
// by the channel actions (actions.ts) and subscribing, which creates channels
// that do not exist yet (subscription-actions.ts).

import type { Channel } from './tables.ts';
import type { Tx } from '../db/transact.ts';
import { isRowId } from '../db/ids.ts';
import { badRequest, insufficientPermission } from '../http/errors.ts';
import { administersChannelList, requireOwner } from '../users/access.ts';
import { settingsOf } from '../realm/queries.ts';
import { storeGroupSettingValue, systemGroupIds, type GroupSettingValue } from '../user_groups/group-setting.ts';
import { CHANNEL_PERMISSION_SETTINGS, rulesOf, type ChannelPermission } from '../user_groups/permission-settings.ts';
import type { SystemGroupName } from '../user_groups/system-groups.ts';
import { holdsRealmPermission, type ChannelViewer } from './access.ts';
import { CHANNEL_PERMISSIONS } from './format.ts';
import type { TopicsPolicy } from './validation.ts';

/** The settings a channel can be created with (spec endpoint 2, FL 417 /channels/create). */
export interface ChannelSettings {
  invite_only?: boolean;
  is_web_public?: boolean;
  is_default_stream?: boolean;
  history_public_to_subscribers?: boolean | null;
  message_retention_days?: number | null;
  topics_policy?: TopicsPolicy;
  folder_id?: number | null;
  groups?: Partial<Record<ChannelPermission, GroupSettingValue>>;
}

/** Checks and inserts one channel; the caller emits `stream/create`. */
export async function insertChannel(
  html: (text: string) => string,
  tx: Tx,
  viewer: ChannelViewer,
  name: string,
  description: string,
  s: ChannelSettings,
): Promise<Channel> {
  const { realm, user } = viewer;
  await checkNewChannel(tx, viewer, s);
  const inviteOnly = s.invite_only ?? false;
  // Public channels always share their history; private ones by choice (default: no, as the reference).
  const historyPublic = !inviteOnly || (s.history_public_to_subscribers ?? false);
  const groupIds = await permissionGroupIds(tx, viewer, s.groups);
  const channel = await tx
    .insertInto('channels')
    .values({
      realm_id: realm.id,
      name,
      description,
      rendered_description: html(description),
      date_created: new Date(),
      creator_id: user.id,
      invite_only: inviteOnly,
      is_web_public: s.is_web_public ?? false,
      history_public_to_subscribers: historyPublic,
      message_retention_days: s.message_retention_days ?? null,
      topics_policy: s.topics_policy ?? 'inherit',
      folder_id: s.folder_id ?? null,
      ...groupIds,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (s.is_default_stream) await tx.insertInto('default_channels').values({ realm_id: realm.id, channel_id: channel.id }).execute();
  return channel;
}

/** Whether the viewer may create a channel with these settings, in the reference's order. */
async function checkNewChannel(tx: Tx, viewer: ChannelViewer, s: ChannelSettings): Promise<void> {
  const { realm, user } = viewer;
  const inviteOnly = s.invite_only ?? false;
  const webPublic = s.is_web_public ?? false;
  if (webPublic && inviteOnly) throw badRequest('Invalid parameters');
  if (webPublic) {
    if (!settingsOf(realm).enable_spectator_access) throw badRequest('Web-public channels are not enabled.');
    if (!holdsRealmPermission(viewer, 'can_create_web_public_channel_group')) throw insufficientPermission();
  } else if (!holdsRealmPermission(viewer, inviteOnly ? 'can_create_private_channel_group' : 'can_create_public_channel_group')) {
    throw insufficientPermission();
  }
  // Default channels are the administrators' choice, however the channel comes to exist (as the reference).
  if (s.is_default_stream && !administersChannelList(user)) throw insufficientPermission();
  if (s.is_default_stream && inviteOnly) throw badRequest('A default channel cannot be private.');
  if (s.message_retention_days !== undefined && s.message_retention_days !== null) requireOwner(user);
  if (s.topics_policy !== undefined && s.topics_policy !== 'inherit' && !holdsRealmPermission(viewer, 'can_set_topics_policy_group')) {
    throw insufficientPermission();
  }
  if (DELETE_POLICY_SETTINGS.some((p) => s.groups?.[p] !== undefined)) checkDeletePolicyPermission(viewer);
  if (s.folder_id !== undefined && s.folder_id !== null) await checkFolder(tx, realm.id, s.folder_id);
}

/** Each permission's group: the value given, else the setting's default (the creator, or a system group). */
async function permissionGroupIds(tx: Tx, viewer: ChannelViewer, given: ChannelSettings['groups']): Promise<Record<`${ChannelPermission}_id`, number>> {
  const { realm, user } = viewer;
  const system = await systemGroupIds(tx, realm.id);
  const groupIds = {} as Record<`${ChannelPermission}_id`, number>;
  for (const p of CHANNEL_PERMISSIONS) {
    const d = CHANNEL_PERMISSION_SETTINGS[p].default;
    const value: GroupSettingValue = given?.[p] ?? (d === 'creator' ? { direct_members: [user.id], direct_subgroups: [] } : system[d as SystemGroupName]);
    groupIds[`${p}_id`] = await storeGroupSettingValue(tx, realm.id, value, p, rulesOf(CHANNEL_PERMISSION_SETTINGS[p]));
  }
  return groupIds;
}

/** Per-channel message deletion settings: only for `can_set_delete_message_policy_group` (as the reference, FL 407). */
export const DELETE_POLICY_SETTINGS: ChannelPermission[] = ['can_delete_any_message_group', 'can_delete_own_message_group'];

export function checkDeletePolicyPermission(viewer: ChannelViewer): void {
  if (!holdsRealmPermission(viewer, 'can_set_delete_message_policy_group')) throw insufficientPermission();
}

export async function checkFolder(tx: Tx, realmId: number, folderId: number): Promise<void> {
  if (!isRowId(folderId)) throw badRequest('Invalid channel folder ID');
  const folder = await tx.selectFrom('channel_folders').select('id').where('realm_id', '=', realmId).where('id', '=', folderId).executeTakeFirst();
  if (!folder) throw badRequest('Invalid channel folder ID');
}
