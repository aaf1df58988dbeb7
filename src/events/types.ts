// What actions hand to the event system: an event and who should receive it.
// The event system (events/) decides which queues get it and in what shape.
// Notices are plain data, so that they can cross processes through a broker.

import type { AlertWordsEvent } from '../alert_words/actions.ts';
import type { Capability } from './queue.ts';
import type { CredentialsChangedEvent } from '../auth/credential-cache.ts';
import type { RealmBotEvent } from '../bots/actions.ts';
import type { ChannelFolderEvent } from '../channel_folders/actions.ts';
import type { ChannelEvent } from '../channels/events.ts';
import type { ApiChannel } from '../channels/format.ts';
import type { RealmEmojiEvent } from '../custom_emoji/actions.ts';
import type { CustomProfileFieldsEvent } from '../custom_profile_fields/actions.ts';
import type { DraftsEvent } from '../drafts/actions.ts';
import type { RealmExportEvent } from '../export/actions.ts';
import type { InvitesChangedEvent } from '../invitations/actions.ts';
import type { RealmLinkifiersEvent } from '../linkifiers/actions.ts';
import type { MessagesEvent } from '../messages/events.ts';
import type { MutedUsersEvent } from '../muted_users/actions.ts';
import type { NavigationViewEvent } from '../navigation_views/actions.ts';
import type { PresenceEvent } from '../presence/actions.ts';
import type { ModernPresence } from '../presence/format.ts';
import type { PushDeviceEvent } from '../push/actions.ts';
import type { RealmEvent } from '../realm/events.ts';
import type { RealmPlaygroundsEvent } from '../realm_playgrounds/actions.ts';
import type { SavedSnippetsEvent } from '../saved_snippets/actions.ts';
import type { RemindersEvent, ScheduledMessagesEvent } from '../scheduled_messages/actions.ts';
import type { AttachmentEvent } from '../uploads/events.ts';
import type { UserGroupEvent } from '../user_groups/events.ts';
import type { ApiUserGroup } from '../user_groups/format.ts';
import type { UserStatusEvent } from '../user_status/actions.ts';
import type { LegacySettingsEvent, UsersEvent } from '../users/events.ts';
import type { VersionFields } from '../version.ts';

/** Sent when the server starts again: a client that runs older code reloads (digest 3.3). */
export type RestartEvent = { type: 'restart'; server_generation: number } & VersionFields;

/** What a long-poll returns when nothing happened for a while. */
export interface HeartbeatEvent {
  type: 'heartbeat';
}

/**
 * Every event a client can receive, one shape per type and op, each defined in its
 * domain (type-only imports: nothing of them at run time). Tests check each against
 * the reference OpenAPI document (test/support/openapi.ts).
 */
export type ServerEvent =
  | AlertWordsEvent
  | AttachmentEvent
  | ChannelEvent
  | ChannelFolderEvent
  | CustomProfileFieldsEvent
  | DraftsEvent
  | HeartbeatEvent
  | InvitesChangedEvent
  | MessagesEvent
  | MutedUsersEvent
  | NavigationViewEvent
  | PresenceEvent
  | PushDeviceEvent
  | RealmBotEvent
  | RealmEmojiEvent
  | RealmEvent
  | RealmExportEvent
  | RealmLinkifiersEvent
  | RealmPlaygroundsEvent
  | RemindersEvent
  | RestartEvent
  | SavedSnippetsEvent
  | ScheduledMessagesEvent
  | UserGroupEvent
  | UserStatusEvent
  | UsersEvent;

export type EventType = ServerEvent['type'];

/** Events between processes only (a published notice with no audience): no queue gets them. */
export type ProcessEvent = CredentialsChangedEvent;

export interface Notice {
  realmId: number;
  event: ServerEvent | ProcessEvent;
  /** The users whose queues receive the event. */
  users: readonly number[];
  /** Per-user extras merged into that user's copy (a message's `flags`). */
  perUser?: Readonly<Record<number, { flags: string[] }>>;
  /** A message to a public channel: also for queues following all public channels. */
  publicChannel?: boolean;
  /** Local echo: the sending client's queue gets `local_message_id` (digest 1.1). */
  localEcho?: { queueId: string; localId: string };
  /** Data the shaping needs but clients never see (e.g. a message's raw Markdown). */
  hidden?: Hidden;
}

/** What events/shape.ts reads beside an event to fit it to each queue. */
export interface Hidden {
  /** A message's Markdown source, for queues without apply_markdown. */
  raw_content?: string;
  /** Receivers for whom a provider avatar is left to the client (client_svcavatar): all, or these. */
  avatar_nullable_for?: 'all' | number[];
  /** An "Unknown user" placeholder: queues with user_list_incomplete skip it. */
  inaccessible_user?: true;
  /** About an archived channel: only queues with archived_channels get it. */
  channel_archived?: true;
  /** Stands in for what the capability would have said: queues with it skip the event. */
  only_without_capability?: Capability;
  /** About a deactivated group: only queues with include_deactivated_groups get it. */
  group_deactivated?: true;
  /** A group's reactivation: the group, added again for queues that forgot it. */
  group?: ApiUserGroup;
  /** A channel's unarchiving: the channel, created again for queues that forgot it. */
  streams?: ApiChannel[];
  /** What `null` subscription settings mean, for queues without notification_settings_null. */
  notification_defaults?: Record<string, boolean>;
  /** The simplified presence form (simplified_presence_events). */
  presences?: Record<string, ModernPresence>;
  /** The legacy settings event, for queues without user_settings_object. */
  legacy?: LegacySettingsEvent;
}

export interface EventPublisher {
  /** With a broker, resolves once the notices reached this process's queues. */
  publish(notices: readonly Notice[]): void | Promise<void>;
}
