// Every domain's part of register's initial state, in one list.
import type { StateSection } from './state.ts';
import { realmSection } from '../realm/state.ts';
import { usersSection } from '../users/state.ts';
import { userGroupsSection } from '../user_groups/state.ts';
import { defaultChannelsSection, streamSection, subscriptionSection } from '../channels/state.ts';
import { channelFoldersSection } from '../channel_folders/state.ts';
import { customProfileFieldsSection } from '../custom_profile_fields/state.ts';
import { savedSnippetsSection } from '../saved_snippets/state.ts';
import { linkifiersSection, realmFiltersSection } from '../linkifiers/state.ts';
import { realmEmojiSection } from '../custom_emoji/state.ts';
import { settingsSections } from '../users/settings-state.ts';
import { presenceSection } from '../presence/state.ts';
import { navigationViewsSection } from '../navigation_views/state.ts';
import { draftsSection } from '../drafts/state.ts';
import { remindersSection, scheduledMessagesSection } from '../scheduled_messages/state.ts';
import { pushDevicesSection } from '../push/state.ts';
import { realmPlaygroundsSection } from '../realm_playgrounds/state.ts';
import { unreadSection } from '../messages/flags/unread.ts';
import { maxMessageIdSection, recentConversationsSection, starredMessagesSection } from '../messages/message-state.ts';
import { mutedTopicsSection, userTopicsSection } from '../messages/topics/topic-state.ts';
import { userStatusSection } from '../user_status/state.ts';
import { mutedUsersSection } from '../muted_users/state.ts';
import { alertWordsSection } from '../alert_words/state.ts';
import { realmBotsSection, realmEmbeddedBotsSection } from '../bots/state.ts';
import { incomingWebhookBotsSection } from '../integrations/state.ts';

export const STATE_SECTIONS: readonly StateSection[] = [
  realmSection,
  usersSection,
  userGroupsSection,
  subscriptionSection,
  streamSection,
  defaultChannelsSection,
  channelFoldersSection,
  customProfileFieldsSection,
  savedSnippetsSection,
  linkifiersSection,
  realmFiltersSection,
  realmEmojiSection,
  realmPlaygroundsSection,
  ...settingsSections,
  presenceSection,
  navigationViewsSection,
  draftsSection,
  scheduledMessagesSection,
  remindersSection,
  pushDevicesSection,
  maxMessageIdSection,
  unreadSection,
  starredMessagesSection,
  recentConversationsSection,
  userTopicsSection,
  mutedTopicsSection,
  userStatusSection,
  mutedUsersSection,
  alertWordsSection,
  realmBotsSection,
  realmEmbeddedBotsSection,
  incomingWebhookBotsSection,
];
