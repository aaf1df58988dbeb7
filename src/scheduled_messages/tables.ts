import type { Generated, Selectable } from 'kysely';

/** How a scheduled row is delivered (the reference's delivery_type). */
export const DELIVERY = { SEND_LATER: 1, REMIND: 2 } as const;

/** A message to be sent later, or a reminder Notification Bot sends its author. */
export interface ScheduledMessageTable {
  id: Generated<number>;
  realm_id: number;
  sender_id: number;
  delivery_type: number;
  /** 'stream' or 'private' (a reminder is a direct message to its author). */
  type: string;
  channel_id: number | null;
  topic: Generated<string>;
  /** A direct message's recipients: without the sender, unless alone. */
  dm_user_ids: number[] | null;
  content: string;
  rendered_content: string;
  /** The client that scheduled it: the sent message's `client`. */
  client: string;
  read_by_sender: boolean | null;
  scheduled_at: Date;
  delivered: Generated<boolean>;
  delivered_message_id: number | null;
  failed: Generated<boolean>;
  failure_message: string | null;
  reminder_target_message_id: number | null;
  reminder_note: string | null;
}

export interface ScheduledMessageTables {
  scheduled_messages: ScheduledMessageTable;
}

export type ScheduledMessage = Selectable<ScheduledMessageTable>;
