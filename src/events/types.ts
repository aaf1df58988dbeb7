// What actions hand to the event system: an event and who should receive it.
// The event system (events/) decides which queues get it and in what shape.
// Notices are plain data, so that they can cross processes through a broker.

import type { AlertWordsEvent } from '../alert_words/actions.ts';
import type { CredentialsChangedEvent } from '../auth/credential-cache.ts';
import type { RealmBotEvent } from '../bots/actions.ts';
import type { ChannelFolderEvent } from '../channel_folders/actions.ts';
import type { ChannelEvent } from '../channels/events.ts';
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
import type { PushDeviceEvent } from '../push/actions.ts';
import type { RealmEvent } from '../realm/events.ts';
import type { RealmPlaygroundsEvent } from '../realm_playgrounds/actions.ts';
import type { SavedSnippetsEvent } from '../saved_snippets/actions.ts';
import type { RemindersEvent, ScheduledMessagesEvent } from '../scheduled_messages/actions.ts';
import type { AttachmentEvent } from '../uploads/events.ts';
import type { UserGroupEvent } from '../user_groups/events.ts';
import type { UserStatusEvent } from '../user_status/actions.ts';
import type { UsersEvent } from '../users/events.ts';
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
  hidden?: Record<string, unknown>;
}

export interface EventPublisher {
  /** With a broker, resolves once the notices reached this process's queues. */
  publish(notices: readonly Notice[]): void | Promise<void>;
}
