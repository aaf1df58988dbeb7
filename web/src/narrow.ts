// Narrows: which messages a view shows, as the API's list of operator/operand terms.
// One definition serves the URL hash, the search box, the API's `narrow`
// parameter and the local check of whether a live message belongs on screen.

export interface Term {
  operator: string;
  operand: string;
  negated?: boolean;
}
export type Narrow = Term[];

/** Just what the narrow logic needs to know of a message. */
export interface NarrowMessage {
  id: number;
  type: string;
  stream_id?: number;
  subject: string;
  sender_id: number;
  display_recipient: string | { id: number }[];
  flags?: string[];
}

const ALIASES: Record<string, string> = { stream: 'channel', subject: 'topic', 'pm-with': 'dm', from: 'sender', streams: 'channels' };

function canonical(operator: string): string {
  return ALIASES[operator] ?? operator;
}

/** The hash of a view: `#feed` for the combined feed, else `#narrow/op/operand/...`. */
export function narrowToHash(narrow: Narrow, streamName?: (id: number) => string | undefined): string {
  if (narrow.length === 0) return '#feed';
  const parts: string[] = ['#narrow'];
  for (const t of narrow) {
    let operand = t.operand;
    if (t.operator === 'channel' && streamName) {
      const name = streamName(Number(t.operand));
      if (name !== undefined) operand = `${t.operand}-${name}`;
    }
    parts.push((t.negated ? '-' : '') + t.operator, encodeHashComponent(operand));
  }
  return parts.join('/');
}

/** Encodes like encodeURIComponent, but keeps the hash readable (spaces as dots would be ambiguous). */
function encodeHashComponent(s: string): string {
  return encodeURIComponent(s).replace(/%20/g, '+');
}

function decodeHashComponent(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

export function hashToNarrow(hash: string): Narrow | null {
  const h = hash.replace(/^#/, '');
  if (h === '' || h === 'feed' || h === 'narrow') return [];
  if (!h.startsWith('narrow/')) return null;
  const parts = h.slice('narrow/'.length).split('/');
  const out: Narrow = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const negated = parts[i]!.startsWith('-');
    const operator = canonical(parts[i]!.replace(/^-/, ''));
    let operand = decodeHashComponent(parts[i + 1]!);
    // `12-general`: the id is what counts; the name only makes the link readable.
    if (operator === 'channel' || operator === 'dm' || operator === 'sender') operand = operand.replace(/^([\d,]+)-.*$/, '$1');
    out.push(negated ? { operator, operand, negated } : { operator, operand });
  }
  return out;
}

/**
 * Parses the search box: `channel:general topic:"deploy plan" sender:x@y.z is:starred words`.
 * Names of channels and emails are resolved to ids by the callbacks when known.
 */
export function parseSearch(
  query: string,
  resolve: { channel?: (name: string) => number | undefined; user?: (email: string) => number | undefined } = {},
): Narrow {
  const out: Narrow = [];
  const words: string[] = [];
  const re = /(-?)([a-z-]+):(?:"([^"]*)"|(\S+))|"([^"]*)"|(\S+)/gi;
  for (const m of query.matchAll(re)) {
    if (m[2] !== undefined) {
      const operator = canonical(m[2].toLowerCase());
      let operand = m[3] ?? m[4] ?? '';
      if (operator === 'channel') operand = String(resolve.channel?.(operand) ?? operand);
      if (operator === 'sender' || operator === 'dm') {
        operand = operand
          .split(',')
          .map((e) => String(resolve.user?.(e) ?? e))
          .join(',');
      }
      out.push(m[1] ? { operator, operand, negated: true } : { operator, operand });
    } else {
      words.push(m[5] !== undefined ? `"${m[5]}"` : m[6]!);
    }
  }
  if (words.length > 0) out.push({ operator: 'search', operand: words.join(' ') });
  return out;
}

/** The search box's text for a narrow (the reverse of parseSearch). */
export function narrowToSearch(
  narrow: Narrow,
  names: { channel?: (id: number) => string | undefined; user?: (id: number) => string | undefined } = {},
): string {
  return narrow
    .map((t) => {
      if (t.operator === 'search') return t.operand;
      let operand = t.operand;
      if (t.operator === 'channel') operand = names.channel?.(Number(operand)) ?? operand;
      if (t.operator === 'sender' || t.operator === 'dm')
        operand = operand
          .split(',')
          .map((id) => names.user?.(Number(id)) ?? id)
          .join(',');
      if (/\s/.test(operand)) operand = `"${operand}"`;
      return `${t.negated ? '-' : ''}${t.operator}:${operand}`;
    })
    .join(' ');
}

/** The narrow as the API's `narrow` parameter (ids as numbers, dm as a list of ids). */
export function narrowToApi(narrow: Narrow): { operator: string; operand: unknown; negated?: boolean }[] {
  return narrow.map((t) => {
    let operand: unknown = t.operand;
    if ((t.operator === 'channel' || t.operator === 'sender' || t.operator === 'id') && /^\d+$/.test(t.operand)) operand = Number(t.operand);
    if (t.operator === 'dm' && /^[\d,]+$/.test(t.operand)) operand = t.operand.split(',').map(Number);
    return t.negated ? { operator: t.operator, operand, negated: true } : { operator: t.operator, operand };
  });
}

/** The ids of a DM conversation's other participants, sorted ("" for one's own). */
export function dmKey(message: NarrowMessage, me: number): string {
  if (typeof message.display_recipient === 'string') return '';
  const ids = message.display_recipient.map((r) => r.id).filter((id) => id !== me);
  return (ids.length === 0 ? [me] : ids).sort((a, b) => a - b).join(',');
}

function normalizeDm(operand: string, me: number): string {
  const ids = operand
    .split(',')
    .map(Number)
    .filter((id) => id !== me);
  return (ids.length === 0 ? [me] : ids).sort((a, b) => a - b).join(',');
}

const MENTION_FLAGS = ['mentioned', 'stream_wildcard_mentioned', 'topic_wildcard_mentioned', 'wildcard_mentioned'];

export function isMentioned(flags: string[] | undefined): boolean {
  return (flags ?? []).some((f) => MENTION_FLAGS.includes(f));
}

/**
 * Whether a message belongs in a narrow: true or false where the client can tell,
 * null where only the server can (full-text search, `has:`), so the view refetches.
 */
export function matches(narrow: Narrow, message: NarrowMessage, me: number): boolean | null {
  let unknown = false;
  for (const t of narrow) {
    let ok: boolean | null;
    switch (t.operator) {
      case 'channel':
        ok = message.type === 'stream' && message.stream_id === Number(t.operand);
        break;
      case 'topic':
        ok = message.type === 'stream' && message.subject.toLowerCase() === t.operand.toLowerCase();
        break;
      case 'dm':
        ok = message.type === 'private' && dmKey(message, me) === normalizeDm(t.operand, me);
        break;
      case 'sender':
        ok = message.sender_id === Number(t.operand);
        break;
      case 'is':
        ok = isOperand(t.operand, message);
        break;
      case 'channels':
        ok = t.operand === 'public' ? message.type === 'stream' : null;
        break;
      case 'id':
        ok = message.id === Number(t.operand);
        break;
      default:
        ok = null;
    }
    if (ok === null) unknown = true;
    else if (ok === !!t.negated) return false;
  }
  return unknown ? null : true;
}

function isOperand(operand: string, message: NarrowMessage): boolean | null {
  const flags = message.flags ?? [];
  switch (operand) {
    case 'dm':
    case 'private':
      return message.type === 'private';
    case 'starred':
      return flags.includes('starred');
    case 'mentioned':
      return isMentioned(flags);
    case 'unread':
      return !flags.includes('read');
    default:
      return null;
  }
}

export type ViewKind = 'feed' | 'channel' | 'topic' | 'dm' | 'dms' | 'mentioned' | 'starred' | 'search';

/** The kind of view a narrow is, for titles, the sidebar's highlight and the composer's defaults. */
export function viewKind(narrow: Narrow): ViewKind {
  const ops = narrow.map((t) => (t.negated ? '-' : '') + t.operator);
  const key = ops.join(' ');
  if (key === '') return 'feed';
  if (key === 'channel') return 'channel';
  if (key === 'channel topic') return 'topic';
  if (key === 'dm') return 'dm';
  if (key === 'is') {
    const o = narrow[0]!.operand;
    if (o === 'dm' || o === 'private') return 'dms';
    if (o === 'mentioned') return 'mentioned';
    if (o === 'starred') return 'starred';
  }
  return 'search';
}

export function sameNarrow(a: Narrow, b: Narrow): boolean {
  return a.length === b.length && a.every((t, i) => t.operator === b[i]!.operator && t.operand === b[i]!.operand && !!t.negated === !!b[i]!.negated);
}
