// Syntax of mentions and channel/topic links, shared by the block parser
// (silencing mentions inside quotes), the inline patterns and collectReferences.

/** A mention or channel link may only start after whitespace or one of these. */
const BEFORE = `(?<![^\\s'"\\(\\{\\[\\/<])`;

/** `@**Name**`, `@_**Name**`, `@**Name|12**`: groups silent, wrapper, name. */
export const MENTIONS_RE = new RegExp(`${BEFORE}@(_?)(\\*\\*([^\\*]+)\\*\\*)`, 'g');
/** `@*group*`, `@_*group*`: groups silent, wrapper, name. */
export const GROUP_MENTIONS_RE = new RegExp(`${BEFORE}@(_?)(\\*([^\\*]+)\\*)`, 'g');

export const USER_MENTION = new RegExp(`${BEFORE}@(?<silent>_?)(\\*\\*(?<match>[^\\*]+)\\*\\*)`, 'g');
export const GROUP_MENTION = new RegExp(`${BEFORE}@(?<silent>_?)(\\*(?<match>[^\\*]+)\\*)`, 'g');
export const STREAM_LINK = new RegExp(`${BEFORE}#\\*\\*(?<stream_name>[^\\*]+)\\*\\*`, 'g');
export const STREAM_TOPIC_LINK = new RegExp(`${BEFORE}#\\*\\*(?<stream_name>[^\\*>]+)>(?<topic_name>[^\\*]*)\\*\\*`, 'g');
export const STREAM_TOPIC_MESSAGE_LINK = new RegExp(`${BEFORE}#\\*\\*(?<stream_name>[^\\*>]+)>(?<topic_name>[^\\*]*)@(?<message_id>\\d+)\\*\\*`, 'g');

export const TOPIC_WILDCARDS: ReadonlySet<string> = new Set(['topic']);
export const STREAM_WILDCARDS: ReadonlySet<string> = new Set(['all', 'everyone', 'stream', 'channel']);

/** `Name|12` / `|12` -> parts; null for the plain-name form. */
export function parseIdSyntax(name: string): { fullName: string | null; id: number } | null {
  const m = /^(?<full>.+)?\|(?<id>\d+)$/.exec(name);
  if (!m) return null;
  return { fullName: m.groups!.full ?? null, id: Number(m.groups!.id) };
}
