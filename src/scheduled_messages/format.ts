// The reference's ScheduledMessage and reminder objects.

import type { ScheduledMessage } from './tables.ts';

export interface ApiScheduledMessage {
  scheduled_message_id: number;
  type: 'stream' | 'private';
  to: number | number[];
  topic?: string;
  content: string;
  rendered_content: string;
  scheduled_delivery_timestamp: number;
  failed: boolean;
}

export interface ApiReminder {
  reminder_id: number;
  type: 'private';
  to: number[];
  content: string;
  rendered_content: string;
  scheduled_delivery_timestamp: number;
  failed: boolean;
  reminder_target_message_id: number;
}

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

export function formatScheduledMessage(m: ScheduledMessage): ApiScheduledMessage {
  const common = { content: m.content, rendered_content: m.rendered_content, scheduled_delivery_timestamp: seconds(m.scheduled_at), failed: m.failed };
  if (m.type === 'stream') return { scheduled_message_id: m.id, type: 'stream', to: m.channel_id!, topic: m.topic, ...common };
  return { scheduled_message_id: m.id, type: 'private', to: m.dm_user_ids!, ...common };
}

export function formatReminder(m: ScheduledMessage): ApiReminder {
  const common = { content: m.content, rendered_content: m.rendered_content, scheduled_delivery_timestamp: seconds(m.scheduled_at), failed: m.failed };
  return { reminder_id: m.id, type: 'private', to: m.dm_user_ids!, ...common, reminder_target_message_id: m.reminder_target_message_id! };
}
