// A new organization comes alive (issue 16, the reference's realm creation and
// onboarding): its default channels, Welcome Bot's first conversations in
// them, the owner subscribed; and every new member later gets those
// conversations unread, the first message of each topic starred (the
// reference's add_new_user_history for OnboardingUserMessage). Plugged into
// realm creation and account creation by wiring.ts.

import { sql } from 'kysely';
import type { Services } from '../services.ts';
import type { ActionContext } from '../db/transact.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { createInitialChannels } from '../channels/actions.ts';
import { subscribeToDefaultChannels } from '../channels/subscription-actions.ts';
import { sendNotices } from '../notification_bot/index.ts';
import { WELCOME_BOT, systemBot } from '../users/system-bots.ts';
import { emojiCodeForName } from '../markdown/emoji.ts';
import { FLAG_BITS } from '../messages/flags/flags.ts';
import { GENERAL_CHANNEL, INITIAL_CHANNELS, INITIAL_MESSAGES, WAVE } from './messages.ts';

/**
 * Runs inside createRealm's transaction, after the owner (the context's actor) exists;
 * returns the organization as it now is.
 */
export async function onboardOrganization(ctx: ActionContext<Services, User>): Promise<Realm> {
  const { svc, tx, emit, realm, actor: owner } = ctx;
  if (!svc.config.onboarding) return realm;
  const channels = await createInitialChannels(ctx, INITIAL_CHANNELS);
  const byName = new Map(channels.map((c) => [c.name, c]));
  const general = byName.get(GENERAL_CHANNEL)!;
  // New channels and server updates are announced in "general", as the reference sets them.
  const updated = await tx
    .updateTable('realms')
    .set({
      settings: JSON.stringify({
        ...realm.settings,
        new_stream_announcements_stream_id: general.id,
        zulip_update_announcements_stream_id: general.id,
      }),
    })
    .where('id', '=', realm.id)
    .returningAll()
    .executeTakeFirstOrThrow();

  // Sent before anyone is subscribed: every member, the owner first, gets them the same way.
  const ids = await sendNotices(
    { svc, tx, emit, realm: updated, actor: null },
    INITIAL_MESSAGES.map((m) => ({ from: WELCOME_BOT, to: { channel: byName.get(m.channel)!, topic: m.topic }, content: m.content })),
  );
  const seenTopics = new Set<string>();
  await tx
    .insertInto('onboarding_messages')
    .values(
      INITIAL_MESSAGES.map((m, i) => {
        const key = `${m.channel}\n${m.topic}`;
        const starred = !seenTopics.has(key);
        seenTopics.add(key);
        return { realm_id: realm.id, message_id: ids[i], starred };
      }),
    )
    .execute();
  // No client can know the organization yet: the reaction needs no event.
  const bot = await systemBot(tx, realm.id, WELCOME_BOT);
  await tx
    .insertInto('reactions')
    .values({
      realm_id: realm.id,
      message_id: ids[INITIAL_MESSAGES.indexOf(WAVE.message)],
      user_id: bot.id,
      emoji_name: WAVE.emoji_name,
      emoji_code: emojiCodeForName(WAVE.emoji_name)!,
      reaction_type: 'unicode_emoji',
    })
    .execute();

  const onboarded = { ...ctx, realm: updated };
  await subscribeToDefaultChannels({ ...onboarded, actor: null }, owner);
  await giveOnboardingHistory(onboarded, owner);
  return updated;
}

/**
 * A new human member's copy of Welcome Bot's first conversations, in the
 * channels they joined: unread, historical (they were not there), the first
 * of each topic starred. No event: the account has no client yet.
 */
export async function giveOnboardingHistory(ctx: ActionContext<unknown>, user: User): Promise<void> {
  if (user.is_bot) return;
  const { tx, realm } = ctx;
  const starred = FLAG_BITS.historical | FLAG_BITS.starred;
  await sql`
    insert into user_messages (realm_id, user_id, message_id, flags)
    select o.realm_id, ${user.id}::integer, o.message_id,
           case when o.starred then ${starred}::integer else ${FLAG_BITS.historical}::integer end
    from onboarding_messages o
    join messages m on m.id = o.message_id
    join subscriptions s on s.channel_id = m.channel_id and s.user_id = ${user.id}::integer and s.active
    where o.realm_id = ${realm.id}::integer
    on conflict do nothing
  `.execute(tx);
}
