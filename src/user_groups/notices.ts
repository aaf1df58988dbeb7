// What Notification Bot says about user groups: a direct message to each
// person someone else added to a group or removed from it (the reference's
// notify_for_user_group_subscription_changes). Nothing on group creation,
// subgroup changes or role-driven system group changes, as in the reference.

import type { User } from '../users/tables.ts';
import { silentGroupMention, silentMention, type Notice } from '../notification_bot/index.ts';

/** To the active humans among `users`, except the actor (joining or leaving oneself says nothing); `group` is a named one. */
export function membershipNotices(actor: User, group: { name: string | null }, users: User[], change: 'added' | 'removed'): Notice[] {
  const what = change === 'added' ? 'added you to' : 'removed you from';
  return users
    .filter((u) => u.id !== actor.id && !u.is_bot && u.is_active)
    .map((user) => ({ to: { user }, content: `${silentMention(actor)} ${what} the group ${silentGroupMention({ name: group.name! })}.` }));
}
