import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Json, Timestamp } from '../realm/tables.ts';

export interface RecipientTable {
  id: Generated<number>;
  realm_id: number;
  channel_id: number | null;
  dm_key: string | null;
  dm_user_ids: number[] | null;
}

/** One entry of a message's edit history, as stored (and returned, most recent first). */
export interface EditHistoryEntry {
  user_id: number | null;
  timestamp: number;
  prev_content?: string;
  prev_rendered_content?: string;
  prev_stream?: number;
  stream?: number;
  prev_topic?: string;
  topic?: string;
}

export interface MessageTable {
  id: Generated<number>;
  realm_id: number;
  sender_id: number;
  recipient_id: number;
  channel_id: number | null;
  topic: string;
  content: string;
  rendered_content: string;
  date_sent: Timestamp;
  client: string;
  is_me_message: Generated<boolean>;
  has_link: Generated<boolean>;
  has_image: Generated<boolean>;
  has_attachment: Generated<boolean>;
  last_edit_at: Timestamp | null;
  last_moved_at: Timestamp | null;
  edit_history: Json<EditHistoryEntry[]> | null;
  search_tsv: ColumnType<string, never, never>;
}

export interface UserMessageTable {
  realm_id: number;
  user_id: number;
  message_id: number;
  flags: number;
}

export interface ReactionTable {
  realm_id: number;
  message_id: number;
  user_id: number;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  created_at: Generated<Timestamp>;
}

/** Data a widget (poll, to-do list) attaches to a message: its definition ("widget") and each action. */
export interface SubmessageTable {
  id: Generated<number>;
  realm_id: number;
  message_id: number;
  sender_id: number;
  msg_type: string;
  /** JSON text, as the client sent it. */
  content: string;
}

export interface UserTopicTable {
  realm_id: number;
  user_id: number;
  channel_id: number;
  topic: string;
  visibility_policy: number;
  last_updated: Timestamp;
}

export interface ChannelDailyMessagesTable {
  realm_id: number;
  channel_id: number;
  day: ColumnType<Date, string, string>;
  /** One of a few rows per channel and day, so concurrent sends add to different rows. */
  shard: number;
  count: number;
}

export interface MessageTables {
  channel_daily_messages: ChannelDailyMessagesTable;
  recipients: RecipientTable;
  messages: MessageTable;
  user_messages: UserMessageTable;
  reactions: ReactionTable;
  submessages: SubmessageTable;
  user_topics: UserTopicTable;
}

export type Message = Selectable<MessageTable>;
export type Recipient = Selectable<RecipientTable>;
