// What Notification Bot says about invitations: the inviter hears that their
// invitation was accepted (the reference's process_new_human_user).

import type { User } from '../users/tables.ts';
import type { Invitation } from './tables.ts';
import { silentMention, type Notice } from '../notification_bot/index.ts';

/**
 * To the inviter of an email invitation that asked for it
 * (`notify_referrer_on_join`), while they are active. Reusable links tell
 * nobody: in the reference, an account made from a link has no referrer.
 */
export function acceptedNotices(inv: Invitation, referrer: User | undefined, user: User): Notice[] {
  if (inv.is_multiuse || !inv.notify_referrer_on_join || !referrer?.is_active) return [];
  return [{ to: { user: referrer }, content: `${silentMention(user)} accepted your invitation to join Confab!` }];
}
