// Where one domain answers a question another asks, the answer is plugged in
// here, once, so that the lower domain does not import the higher one.

import { registerChannelStatsSource } from './channels/format.ts';
import { channelStats } from './messages/channel-stats.ts';
import { registerGroupUseSource } from './user_groups/objections.ts';
import { channelCompanions, channelsUsingGroups } from './channels/queries.ts';
import { registerUserAccessSource } from './users/queries.ts';
import { directMessagePartners } from './messages/recipients.ts';
import { registerNamedTopicCheck, registerUnsubscribeHook } from './channels/actions.ts';
import { markChannelMessagesRead } from './messages/flag-actions.ts';
import { hasNamedTopics } from './messages/edit.ts';
import { registerUserLifecycleHooks } from './users/actions.ts';
import { registerNoticeSender } from './notification_bot/index.ts';
import { sendInternalMessage } from './messages/send.ts';
import { revokeInvitationsBy, spendInvitationsTo } from './invitations/actions.ts';
import { announceBotActivity, deactivateOwnedBots } from './bots/actions.ts';
import { registerMessageSentHook } from './messages/send.ts';
import { queueOutgoingWebhooks } from './webhooks/outgoing/trigger.ts';
import { queueMissedMessageEmails } from './email/missed-messages.ts';
import { registerRealmCreatedHook } from './realm/actions.ts';
import { giveOnboardingHistory, onboardOrganization } from './onboarding/actions.ts';

let wired = false;

export function wireDomains(): void {
  if (wired) return;
  wired = true;
  registerChannelStatsSource(channelStats);
  registerGroupUseSource(channelsUsingGroups);
  // Users limited by can_access_all_users_group see those they share a channel or a conversation with.
  registerUserAccessSource(channelCompanions);
  registerUserAccessSource(directMessagePartners);
  registerNamedTopicCheck(hasNamedTopics);
  registerUnsubscribeHook(markChannelMessagesRead);
  registerUserLifecycleHooks({ created: spendInvitationsTo, deactivated: revokeInvitationsBy });
  registerNoticeSender(sendInternalMessage);
  registerUserLifecycleHooks({ deactivated: deactivateOwnedBots, reactivated: announceBotActivity });
  registerMessageSentHook(queueOutgoingWebhooks);
  registerMessageSentHook(queueMissedMessageEmails);
  registerRealmCreatedHook(onboardOrganization);
  registerUserLifecycleHooks({ created: giveOnboardingHistory });
}
