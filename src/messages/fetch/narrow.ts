// Narrows (digest 1.5): the filters of GET /messages and the flag updates by
// narrow. A narrow arrives as JSON, in either term form; it is checked and
// resolved here (names to ids) and turned into SQL conditions in search.ts.

import { ApiError, badRequest } from '../../http/errors.ts';
import { isStorableText } from '../../db/ids.ts';

export interface NarrowTerm {
  operator: string;
  operand: string | number | number[];
  negated: boolean;
}

export function badNarrow(desc: string): ApiError {
  return new ApiError('BAD_NARROW', `Invalid narrow operator: ${desc}`, { data: { desc } });
}

const ALIASES: Record<string, string> = {
  stream: 'channel',
  streams: 'channels',
  'pm-with': 'dm',
  pm_with: 'dm',
  group_pm_with: 'group-pm-with',
  subject: 'topic',
};

export const OPERATORS = [
  'channel',
  'channels',
  'topic',
  'sender',
  'dm',
  'dm-including',
  'group-pm-with',
  'is',
  'has',
  'in',
  'id',
  'near',
  'with',
  'search',
] as const;

const IS_OPERANDS = ['dm', 'private', 'starred', 'unread', 'mentioned', 'alerted', 'followed', 'muted', 'resolved'];
const HAS_OPERANDS = ['attachment', 'image', 'link', 'reaction'];

type Operand = string | number | number[];

function isOperand(v: unknown): v is Operand {
  return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v)) || (Array.isArray(v) && v.every((x) => Number.isInteger(x)));
}

/** One term, in either form: `[operator, operand]` or `{operator, operand, negated?}`. */
function parseTerm(t: unknown, where: string): NarrowTerm {
  const invalid = (why: string) => badRequest(`Invalid ${where}: Value error, ${why}`);
  if (Array.isArray(t)) {
    if (t.length !== 2 || typeof t[0] !== 'string' || !isOperand(t[1])) throw invalid('element is not a string pair');
    if (typeof t[1] === 'string' && !isStorableText(t[1])) throw invalid('operand contains a null byte');
    return { operator: ALIASES[t[0]] ?? t[0], operand: t[1], negated: false };
  }
  if (typeof t !== 'object' || t === null) throw badRequest(`${where} is not a dict`);
  const o = t as Record<string, unknown>;
  if (o.operator === undefined) throw invalid('operator is missing');
  if (o.operand === undefined) throw invalid('operand is missing');
  if (typeof o.operator !== 'string') throw badRequest(`${where}["operator"] is not a string`);
  if (!isOperand(o.operand)) throw badRequest(`${where}["operand"] is not a string`);
  if (o.negated !== undefined && typeof o.negated !== 'boolean') throw badRequest(`${where}["negated"] is not a boolean`);
  if (typeof o.operand === 'string' && !isStorableText(o.operand)) throw invalid('operand contains a null byte');
  return { operator: ALIASES[o.operator] ?? o.operator, operand: o.operand, negated: o.negated === true };
}

/** Validates a narrow and brings it to one form (canonical operator names). */
export function parseNarrow(value: unknown, name = 'narrow'): NarrowTerm[] {
  if (!Array.isArray(value)) throw badRequest(`${name} is not a list`);
  const terms = value.map((t, i) => parseTerm(t, `${name}[${i}]`));
  for (const t of terms) {
    if (!(OPERATORS as readonly string[]).includes(t.operator)) throw badNarrow(`unknown operator ${t.operator}`);
    if (t.operator === 'is' && !IS_OPERANDS.includes(String(t.operand))) throw badNarrow(`unknown 'is' operand ${t.operand}`);
    if (t.operator === 'has' && !HAS_OPERANDS.includes(String(t.operand))) throw badNarrow(`unknown 'has' operand ${t.operand}`);
    if (t.operator === 'in' && !['home', 'all'].includes(String(t.operand))) throw badNarrow(`unknown 'in' operand ${t.operand}`);
    if (t.operator === 'channels' && !['public', 'web-public'].includes(String(t.operand))) throw badNarrow(`unknown channels operand ${t.operand}`);
    if ((t.operator === 'id' || t.operator === 'near' || t.operator === 'with') && !/^\d+$/.test(String(t.operand))) {
      throw badNarrow('Invalid message ID');
    }
    if (t.operator === 'search' && String(t.operand).trim() === '') throw badRequest('operand cannot be blank');
  }
  if (terms.filter((t) => t.operator === 'with').length > 1) {
    throw new ApiError('BAD_NARROW', "Invalid narrow operator combination: Duplicate 'with' operators.", {
      data: { desc: "Duplicate 'with' operators." },
    });
  }
  const positive = terms.filter((t) => !t.negated);
  const wantsChannel = positive.some((t) => t.operator === 'channel' || t.operator === 'channels' || t.operator === 'topic');
  const wantsDm = positive.some(
    (t) => t.operator === 'dm' || t.operator === 'group-pm-with' || (t.operator === 'is' && (t.operand === 'dm' || t.operand === 'private')),
  );
  if (wantsChannel && wantsDm) throw badNarrow('No message can be both a channel message and direct message');
  return terms;
}
