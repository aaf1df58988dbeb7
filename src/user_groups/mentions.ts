// Group mentions (`@*name*`): what the renderer needs to know about the groups a
// text names, and whether a sender may notify a group (`can_mention_group`).
// A deactivated group renders as a silent mention and notifies nobody.

import type { Executor } from '../db/schema.ts';
import type { User } from '../users/tables.ts';
import type { ReferenceResolver } from '../rendering/index.ts';
import { badRequest } from '../http/errors.ts';
import { systemGroupIds } from './group-setting.ts';
import { GROUP_PERMISSION_SETTINGS, hasPermission } from './permission-settings.ts';
import { getNamedGroups } from './queries.ts';

/** The named groups a text mentions, with whether each is deactivated. */
export const resolveGroupMentions: ReferenceResolver = async (_svc, db, realm, refs) => {
  if (refs.group_names.length === 0) return {};
  const names = refs.group_names.map((n) => n.toLowerCase());
  const rows = await db
    .selectFrom('user_groups')
    .select(['id', 'name', 'deactivated'])
    .where('realm_id', '=', realm.id)
    .where((eb) => eb(eb.fn('lower', ['name']), 'in', names))
    .orderBy('id')
    .execute();
  return { groups: rows.map((g) => ({ id: g.id, name: g.name as string, deactivated: g.deactivated })) };
};

/** Whether `sender` may notify the group by mentioning it: active groups whose can_mention_group admits the sender. */
export async function mayMentionGroup(db: Executor, sender: User, groupId: number): Promise<boolean> {
  const [group] = await getNamedGroups(db, sender.realm_id, [groupId]);
  if (!group || group.deactivated) return false;
  const everyone = (await systemGroupIds(db, sender.realm_id))['role:everyone'];
  if (group.can_mention_group_id === everyone) return true;
  return hasPermission(db, sender, GROUP_PERMISSION_SETTINGS.can_mention_group, group.can_mention_group_id!);
}

/** For sending: refuses the message if it notifies a group the sender may not mention. */
export async function checkGroupMentionsAllowed(db: Executor, sender: User, groupIds: readonly number[]): Promise<void> {
  for (const id of groupIds) {
    if (await mayMentionGroup(db, sender, id)) continue;
    const [group] = await getNamedGroups(db, sender.realm_id, [id]);
    throw badRequest(`You are not allowed to mention user group '${group?.name ?? id}'.`);
  }
}
