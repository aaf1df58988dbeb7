// The parameters of scheduled messages and reminders, as the reference reads them.

import { badRequest } from '../http/errors.ts';
import { jsonOrText } from '../http/params.ts';
import { TEXT_BOUNDS } from '../realm/state.ts';

export type ScheduledType = 'stream' | 'private';

/** `type`: `direct`/`private` schedule a direct message, `channel`/`stream` a channel message. */
export function scheduledType(type: 'direct' | 'private' | 'stream' | 'channel'): ScheduledType {
  return type === 'direct' || type === 'private' ? 'private' : 'stream';
}

/** A channel message's `to`: one channel id. */
export function channelIdOf(to: string): number {
  const text = to.trim();
  if (!/^[+-]?\d+$/.test(text)) throw badRequest('Invalid data type for channel ID');
  return Number(text);
}

/** A direct message's `to`: a list of user ids (duplicates dropped). */
export function userIdsOf(to: string): number[] {
  const value = jsonOrText(to);
  if (!Array.isArray(value)) throw badRequest('Invalid data type for recipients');
  for (const id of value) if (typeof id !== 'number' || !Number.isInteger(id)) throw badRequest('Recipient list may only contain user IDs');
  return [...new Set(value as number[])];
}

/** `scheduled_delivery_timestamp` (UNIX seconds) as a time that must lie ahead. */
export function deliveryTime(timestamp: number, now = Date.now()): Date {
  const at = new Date(timestamp * 1000);
  if (!(at.getTime() > now)) throw badRequest('Scheduled delivery time must be in the future.');
  return at;
}

/** A reminder's note: trailing space and leading blank lines dropped, bounded. */
export function normalizeNote(note: string): string {
  const text = note.trimEnd().replace(/^\n+/, '');
  if ([...text].length > TEXT_BOUNDS.max_reminder_note_length) {
    throw badRequest(`Maximum reminder note length: ${TEXT_BOUNDS.max_reminder_note_length} characters`);
  }
  return text;
}
