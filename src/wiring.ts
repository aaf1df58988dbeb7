// Where one domain answers a question another asks: the answers, built once
// with the services (server.ts buildServices) so that the lower domain does not
// import the higher one. Every hook is required: nothing runs half-wired.

import type { DomainHooks } from './hooks.ts';
import { channelStats } from './messages/send/channel-stats.ts';
import { channelCompanions, channelsUsingGroups } from './channels/queries.ts';
import { directMessagePartners } from './messages/send/recipients.ts';
import { markChannelMessagesRead } from './messages/flags/flag-actions.ts';
import { hasNamedTopics } from './messages/topics/topics.ts';
import { sendInternalMessage } from './messages/send/send.ts';
import { revokeInvitationsBy, spendInvitationsTo } from './invitations/actions.ts';
import { announceBotActivity, deactivateOwnedBots } from './bots/actions.ts';
import { queueOutgoingWebhooks } from './webhooks/outgoing/trigger.ts';
import { queueMissedMessageEmails } from './email/missed-messages.ts';
import { giveOnboardingHistory, onboardOrganization } from './onboarding/actions.ts';
import { RESOLVERS } from './rendering/resolvers.ts';
import { catchUpIdle, skipDeactivatedTime, softReactivate } from './messages/soft-deactivation.ts';

export function domainHooks(): DomainHooks {
  return {
    userLifecycle: [
      { created: spendInvitationsTo, deactivated: revokeInvitationsBy },
      { deactivated: deactivateOwnedBots, reactivated: announceBotActivity },
      { created: giveOnboardingHistory },
      // A deactivated user gets no messages: caught up now, a later return adds none of that time.
      // An idle user's copies stop at a deactivation; the messages of that time are none of theirs.
      { deactivated: (ctx, user) => catchUpIdle(ctx.tx, [user.id]), reactivated: (ctx, user) => skipDeactivatedTime(ctx.tx, user.id) },
    ],
    // Users limited by can_access_all_users_group see those they share a channel or a conversation with.
    userAccessSources: [channelCompanions, directMessagePartners],
    groupUseSources: [channelsUsingGroups],
    channelStats,
    namedTopicCheck: hasNamedTopics,
    afterUnsubscribe: markChannelMessagesRead,
    sendNotice: sendInternalMessage,
    messageSent: [queueOutgoingWebhooks, queueMissedMessageEmails],
    realmCreated: onboardOrganization,
    referenceResolvers: RESOLVERS,
    softReactivate,
    catchUpIdle,
  };
}
