// The rules for channel names, descriptions and settings values.
import { badRequest } from '../http/errors.ts';
import { TEXT_BOUNDS } from '../realm/state.ts';
import { positiveOrSpecial } from '../realm/settings-validation.ts';

/** Zulip's notion of a character that cannot appear in names (controls, surrogates, non-characters). */
export function firstUnprintable(text: string): number | undefined {
  let position = 0;
  for (const ch of text) {
    position++;
    const code = ch.codePointAt(0)!;
    const nonCharacter = (code >= 0xfdd0 && code <= 0xfdef) || (code & 0xfffe) === 0xfffe;
    if (/[\p{Cc}\p{Cs}]/u.test(ch) || nonCharacter) return position;
  }
  return undefined;
}

/** Lengths count characters (code points), as the reference does. */
export const charLength = (text: string): number => [...text].length;

export function checkChannelName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw badRequest("Channel name can't be empty.");
  if (charLength(name) > TEXT_BOUNDS.max_stream_name_length) {
    throw badRequest(`Channel name too long (limit: ${TEXT_BOUNDS.max_stream_name_length} characters).`);
  }
  const bad = firstUnprintable(name);
  if (bad !== undefined) throw badRequest(`Invalid character in channel name, at position ${bad}.`);
  return name;
}

export function checkChannelDescription(raw: string): string {
  if (charLength(raw) > TEXT_BOUNDS.max_stream_description_length) {
    throw badRequest(`description is too long (limit: ${TEXT_BOUNDS.max_stream_description_length} characters)`);
  }
  checkNoNullCharacter(raw, 'channel description');
  // Descriptions are one paragraph: line breaks become spaces, as in the reference.
  return raw.replace(/\r?\n/g, ' ');
}

/** Free text (descriptions) may hold any character the database can store: not NUL. */
export function checkNoNullCharacter(text: string, what: string): void {
  const at = [...text].indexOf('\u0000');
  if (at >= 0) throw badRequest(`Invalid character in ${what}, at position ${at + 1}.`);
}

/** Subscription colors: `#rrggbb`. */
export const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;

export const TOPICS_POLICIES = ['inherit', 'allow_empty_topic', 'disable_empty_topic', 'empty_topic_only'] as const;
export type TopicsPolicy = (typeof TOPICS_POLICIES)[number];

/** `message_retention_days`: a number of days, "realm_default" (null) or "unlimited" (-1). */
export function parseRetention(value: unknown): number | null {
  return positiveOrSpecial(value, 'message_retention_days', { realm_default: null, unlimited: -1 });
}
