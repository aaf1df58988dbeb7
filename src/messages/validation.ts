// The rules for what a message says and where it goes (digest 1.1): topics,
// content, and the lenient forms of `to`.

import { badRequest } from '../http/errors.ts';
import { jsonOrText } from '../http/params.ts';
import { TEXT_BOUNDS } from '../realm/state.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../events/shape.ts';
import { firstUnprintable } from '../channels/validation.ts';

const TRUNCATED_TOPIC_SUFFIX = '...';
const TRUNCATED_CONTENT_SUFFIX = '\n[message truncated]';

/** Text cut to `max` characters (code points), ending in `suffix` when cut. */
function truncate(text: string, max: number, suffix: string): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  return chars.slice(0, max - [...suffix].length).join('') + suffix;
}

/**
 * A topic as stored: stripped, the empty-topic names read as empty, too long
 * ones cut (not refused), unprintable characters refused.
 */
export function normalizeTopic(raw: string): string {
  let topic = raw.trim();
  if (topic === '(no topic)' || topic === EMPTY_TOPIC_DISPLAY_NAME) topic = '';
  topic = truncate(topic, TEXT_BOUNDS.max_topic_length, TRUNCATED_TOPIC_SUFFIX);
  const bad = firstUnprintable(topic);
  if (bad !== undefined) throw badRequest(`Invalid character in topic, at position ${bad}!`);
  return topic;
}

/** The empty-topic names of a topic *parameter* (user_topics, narrows): read as empty. */
export function topicParameter(raw: string): string {
  const bad = firstUnprintable(raw);
  if (bad !== undefined) throw badRequest(`Invalid character in topic, at position ${bad}!`);
  return raw === EMPTY_TOPIC_DISPLAY_NAME ? '' : raw;
}

export function normalizeContent(raw: string): string {
  const content = raw.replace(/\s+$/u, '').replace(/^(?:[ \t]*\r?\n)+/, '');
  if (content === '') throw badRequest('Message must not be empty');
  if (content.includes('\u0000')) throw badRequest('Message must not contain null bytes');
  return truncate(content, TEXT_BOUNDS.max_message_length, TRUNCATED_CONTENT_SUFFIX);
}

export type ChannelAddress = { name: string } | { id: number };

/** `to` of a channel message: a name, an id, or a one-element list of either. */
export function channelAddress(to: string): ChannelAddress {
  let value = jsonOrText(to);
  if (Array.isArray(value)) {
    if (value.length !== 1) throw badRequest('Expected exactly one channel');
    value = value[0];
  }
  if (typeof value === 'string') return { name: value };
  if (typeof value === 'number' && Number.isInteger(value)) return { id: value };
  throw badRequest('Invalid data type for channel');
}

export type DirectAddress = { emails: string[] } | { ids: number[] };

/** `to` of a direct message: a list of user ids or of emails, or emails separated by commas. */
export function directAddress(to: string): DirectAddress {
  let value = jsonOrText(to);
  if (typeof value === 'string')
    value = value
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
  if (!Array.isArray(value)) throw badRequest('Invalid data type for recipients');
  if (value.length === 0) throw badRequest('Message must have recipients');
  if (value.every((v) => typeof v === 'number' && Number.isInteger(v))) return { ids: [...new Set(value as number[])] };
  if (value.every((v) => typeof v === 'string')) return { emails: [...new Set((value as string[]).map((e) => e.trim()))] };
  if (value.every((v) => typeof v === 'string' || typeof v === 'number')) {
    throw badRequest('Recipient lists may contain emails or user IDs, but not both.');
  }
  throw badRequest('Invalid data type for recipients');
}
