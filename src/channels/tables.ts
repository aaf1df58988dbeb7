import type { Generated, Selectable } from 'kysely';
import type { Timestamp } from '../realm/tables.ts';

export interface ChannelTable {
  id: Generated<number>;
  realm_id: number;
  name: string;
  description: Generated<string>;
  rendered_description: Generated<string>;
  date_created: Timestamp;
  creator_id: number | null;
  invite_only: Generated<boolean>;
  is_web_public: Generated<boolean>;
  history_public_to_subscribers: Generated<boolean>;
  /** Null: the organization's setting; -1: forever. */
  message_retention_days: number | null;
  topics_policy: Generated<string>;
  is_archived: Generated<boolean>;
  folder_id: number | null;
  can_add_subscribers_group_id: number;
  can_administer_channel_group_id: number;
  can_delete_any_message_group_id: number;
  can_delete_own_message_group_id: number;
  can_move_messages_out_of_channel_group_id: number;
  can_move_messages_within_channel_group_id: number;
  can_remove_subscribers_group_id: number;
  can_resolve_topics_group_id: number;
  can_send_message_group_id: number;
  can_subscribe_group_id: number;
  /** Active subscriptions of active users, kept by channels/subscriber-counts.ts. */
  subscriber_count: Generated<number>;
}

export interface SubscriptionTable {
  realm_id: number;
  user_id: number;
  channel_id: number;
  active: Generated<boolean>;
  color: string;
  is_muted: Generated<boolean>;
  pin_to_top: Generated<boolean>;
  desktop_notifications: boolean | null;
  audible_notifications: boolean | null;
  push_notifications: boolean | null;
  email_notifications: boolean | null;
  wildcard_mentions_notify: boolean | null;
}

export interface DefaultChannelTable {
  realm_id: number;
  channel_id: number;
}

export interface ChannelFolderTable {
  id: Generated<number>;
  realm_id: number;
  name: string;
  description: Generated<string>;
  rendered_description: Generated<string>;
  creator_id: number | null;
  date_created: Timestamp;
  is_archived: Generated<boolean>;
  order: Generated<number>;
}

export interface ChannelTables {
  channels: ChannelTable;
  subscriptions: SubscriptionTable;
  default_channels: DefaultChannelTable;
  channel_folders: ChannelFolderTable;
}

export type Channel = Selectable<ChannelTable>;
export type Subscription = Selectable<SubscriptionTable>;
export type ChannelFolder = Selectable<ChannelFolderTable>;
