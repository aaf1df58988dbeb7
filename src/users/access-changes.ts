// When the organization's `can_access_all_users_group` changes, users who move
// into or out of it (guests, since the setting names role:everyone or
// role:members) start or stop seeing the users they share nothing with: each
// hears of them as `realm_user/add` or `realm_user/remove`, as the reference
// tells guests who gain or lose access to a user.

import type { Emit, Tx } from '../db/transact.ts';
import type { Realm } from '../realm/tables.ts';
import { groupMemberIds } from '../user_groups/group-setting.ts';
import { accessibleUsers, listUsers } from './queries.ts';
import { canSeeDeliveryEmail, formatUser } from './format.ts';
import { profileDataFor } from './profile-data.ts';

export async function announceUserAccessChange(tx: Tx, emit: Emit, before: Realm, after: Realm): Promise<void> {
  const oldGroup = before.group_settings.can_access_all_users_group;
  const newGroup = after.group_settings.can_access_all_users_group;
  if (oldGroup === newGroup) return;
  const [sawAll, seesAll] = (await Promise.all([groupMemberIds(tx, oldGroup), groupMemberIds(tx, newGroup)])).map((ids) => new Set(ids));
  const everyone = await listUsers(tx, after.id);
  const viewers = everyone.filter((u) => u.is_active && sawAll.has(u.id) !== seesAll.has(u.id));
  if (viewers.length === 0) return;
  const profiles = await profileDataFor(tx, after.id, everyone);
  for (const viewer of viewers) {
    const gains = seesAll.has(viewer.id);
    // The users a limited view leaves out: those the viewer now gains or loses.
    const limited = await accessibleUsers(tx, gains ? before : after, viewer);
    if (limited === 'all') continue;
    for (const subject of everyone.filter((u) => !limited.has(u.id))) {
      if (!gains) {
        emit(after.id, { type: 'realm_user', op: 'remove', person: { user_id: subject.id, full_name: subject.full_name } }, [viewer.id]);
        continue;
      }
      const person: Record<string, unknown> = { ...formatUser(subject, viewer, { clientSvcavatar: false }) };
      if (!subject.is_bot) person.profile_data = profiles.get(subject.id) ?? {};
      // Clients with client_svcavatar compute provider avatars of users whose email they see.
      const computable = subject.avatar_source === 'G' && canSeeDeliveryEmail(viewer, subject);
      emit(after.id, { type: 'realm_user', op: 'add', person }, [viewer.id], computable ? { hidden: { avatar_nullable_for: 'all' } } : {});
    }
  }
}
