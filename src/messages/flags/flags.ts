// Personal message flags (spec "Personal message flags"), stored as bits of
// user_messages.flags. The bit values are part of the schema (partial indexes).

export const FLAG_BITS = {
  read: 1,
  starred: 2,
  mentioned: 4,
  stream_wildcard_mentioned: 8,
  topic_wildcard_mentioned: 16,
  group_mentioned: 32,
  has_alert_word: 64,
  historical: 128,
  collapsed: 256,
  force_expand: 512,
  force_collapse: 1024,
} as const;

export type FlagName = keyof typeof FLAG_BITS;

/** Any kind of mention: what is:mentioned finds (bits of the partial index). */
export const MENTION_BITS = FLAG_BITS.mentioned | FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned | FLAG_BITS.group_mentioned;

/** Flags clients may change; the others follow from the message. */
export const EDITABLE_FLAGS: readonly FlagName[] = ['read', 'starred', 'collapsed'];

// Listed once: flagNames runs for every message of a fetch.
const FLAG_ENTRIES = Object.entries(FLAG_BITS);

/** The API's list of flag names, with the deprecated `wildcard_mentioned` (either wildcard). */
export function flagNames(bits: number): string[] {
  const names: string[] = [];
  for (const [name, bit] of FLAG_ENTRIES) if (bits & bit) names.push(name);
  if (bits & (FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned)) names.push('wildcard_mentioned');
  return names;
}

/** Flags of a message the user has no copy of (public history they were not there for). */
export const HISTORICAL_FLAGS = ['read', 'historical'];
export const HISTORICAL_BITS = FLAG_BITS.read | FLAG_BITS.historical;
