// Every migration, in the order it runs (Kysely sorts by name). A domain adds its
// schema changes as a new numbered file here; applied files are never edited.
import type { Migration } from 'kysely/migration';
import * as foundation from './0001_foundation.ts';
import * as channels from './0002_channels.ts';
import * as messages from './0003_messages.ts';
import * as channelTraffic from './0004_channel_traffic.ts';
import * as presence from './0010_presence.ts';
import * as navigationViews from './0011_navigation_views.ts';
import * as drafts from './0012_drafts.ts';
import * as pushDevices from './0013_push_devices.ts';
import * as customProfileFields from './0020_custom_profile_fields.ts';
import * as savedSnippets from './0021_saved_snippets.ts';
import * as linkifiers from './0030_linkifiers.ts';
import * as customEmoji from './0031_custom_emoji.ts';
import * as messageFlags from './0070_message_flags.ts';
import * as invitations from './0090_invitations.ts';
import * as systemBots from './0100_system_bots.ts';
import * as welcomeBot from './0101_welcome_bot.ts';
import * as uploads from './0110_uploads.ts';
import * as userFeatures from './0120_user_features.ts';
import * as archive from './0190_archive.ts';
import * as archivedAttachments from './0192_archived_attachments.ts';
import * as realmExports from './0191_realm_exports.ts';
import * as scheduledMessages from './0130_scheduled_messages.ts';
import * as submessages from './0140_submessages.ts';
import * as realmPlaygrounds from './0141_realm_playgrounds.ts';
import * as pushDeviceTokens from './0142_push_device_tokens.ts';
import * as sessions from './0160_sessions.ts';
import * as onboardingMessages from './0161_onboarding_messages.ts';
import * as bots from './0170_bots.ts';
import * as serverSecrets from './0180_server_secrets.ts';
import * as email from './0200_email.ts';
import * as missedMessageBatches from './0201_missed_message_batches.ts';
import * as pushTokenHash from './0202_push_token_hash.ts';
import * as channelTrafficShards from './0203_channel_traffic_shards.ts';
import * as channelSubscriberCounts from './0204_channel_subscriber_counts.ts';
import * as softDeactivation from './0205_soft_deactivation.ts';
import * as userMessagesStatementChecks from './0206_user_messages_statement_checks.ts';

export const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_channels': channels,
  '0003_messages': messages,
  '0004_channel_traffic': channelTraffic,
  '0010_presence': presence,
  '0011_navigation_views': navigationViews,
  '0012_drafts': drafts,
  '0013_push_devices': pushDevices,
  '0020_custom_profile_fields': customProfileFields,
  '0021_saved_snippets': savedSnippets,
  '0030_linkifiers': linkifiers,
  '0031_custom_emoji': customEmoji,
  '0070_message_flags': messageFlags,
  '0090_invitations': invitations,
  '0100_system_bots': systemBots,
  '0101_welcome_bot': welcomeBot,
  '0110_uploads': uploads,
  '0120_user_features': userFeatures,
  '0130_scheduled_messages': scheduledMessages,
  '0140_submessages': submessages,
  '0141_realm_playgrounds': realmPlaygrounds,
  '0142_push_device_tokens': pushDeviceTokens,
  '0160_sessions': sessions,
  '0161_onboarding_messages': onboardingMessages,
  '0170_bots': bots,
  '0180_server_secrets': serverSecrets,
  '0190_archive': archive,
  '0191_realm_exports': realmExports,
  '0192_archived_attachments': archivedAttachments,
  '0200_email': email,
  '0201_missed_message_batches': missedMessageBatches,
  '0202_push_token_hash': pushTokenHash,
  '0203_channel_traffic_shards': channelTrafficShards,
  '0204_channel_subscriber_counts': channelSubscriberCounts,
  '0205_soft_deactivation': softDeactivation,
  '0206_user_messages_statement_checks': userMessagesStatementChecks,
};
