// What the system bots say when an account is created (the reference's
// process_new_human_user): Notification Bot announces it in the organization's
// signups channel, and Welcome Bot gives the new user the welcome text the
// administrators wrote in their invitation.
//
// The reference's standard Welcome Bot introduction (links into its help
// center and web app, and its replies to commands) is not sent: docs/DECISIONS.md.

import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from './tables.ts';
import { channelOfSetting } from '../channels/queries.ts';
import { silentGroupMention, silentMention, unusedFence, type Notice } from '../notification_bot/index.ts';
import { WELCOME_BOT } from './system-bots.ts';

/** The topic of signup announcements (the reference's "signups"). */
export const SIGNUPS_TOPIC = 'signups';

/**
 * Everything said about a new human account, in the reference's order: the
 * signup announcement, then Welcome Bot's text (an invitation's; none or an
 * empty one says nothing). The organization-wide welcome text is newer than
 * our feature level.
 */
export async function newUserNotices(db: Executor, realm: Realm, user: User, welcomeText?: string | null): Promise<Notice[]> {
  if (user.is_bot) return [];
  const notices: Notice[] = [];
  const signups = await signupAnnouncement(db, realm, user);
  if (signups) notices.push(signups);
  if (welcomeText) notices.push(welcomeTextNotice(user, welcomeText));
  return notices;
}

/** "X joined this organization.", unless X is its only active human (the reference's notify_new_user). */
async function signupAnnouncement(db: Executor, realm: Realm, user: User): Promise<Notice | undefined> {
  const channel = await channelOfSetting(db, realm, 'signup_announcements_stream_id');
  if (!channel) return undefined;
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('realm_id', '=', realm.id)
    .where('is_active', '=', true)
    .where('is_bot', '=', false)
    .executeTakeFirstOrThrow();
  if (Number(row.n) <= 1) return undefined;
  // Unread for everyone, the new user included (the reference marks it read for nobody).
  return { to: { channel, topic: SIGNUPS_TOPIC }, content: `${silentMention(user)} joined this organization.` };
}

/**
 * Welcome Bot's direct message quoting the administrators' text (the
 * reference's get_custom_welcome_message_string), starred for the new user.
 */
export function welcomeTextNotice(user: User, text: string): Notice {
  const fence = unusedFence(text);
  return {
    from: WELCOME_BOT,
    to: { user },
    content: `A note from ${silentGroupMention({ name: 'role:administrators' })}:\n${fence}quote\n${text}\n${fence}`,
    starredFor: [user.id],
  };
}
