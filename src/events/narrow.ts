// The `narrow` a client may give at register: a list of [operator, operand]
// terms, all of which a message must match to reach the queue (digest 3.2).

import { badRequest } from '../http/errors.ts';

export const REGISTER_NARROW_OPERATORS = ['channel', 'stream', 'topic', 'sender', 'is'] as const;

/** Register's checks: only the operators the predicate knows, and no `is:followed`. */
export function checkRegisterNarrow(narrow: [string, string][]): void {
  for (const [operator, operand] of narrow) {
    if (!(REGISTER_NARROW_OPERATORS as readonly string[]).includes(operator)) throw badRequest(`Operator ${operator} not supported.`);
    if (operator === 'is' && operand === 'followed') throw badRequest(`Operand ${operand} not supported.`);
  }
}

const same = (a: unknown, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();

export function narrowMatches(narrow: [string, string][], message: Record<string, unknown>, flags: string[]): boolean {
  for (const [operator, operand] of narrow) {
    switch (operator) {
      case 'channel':
      case 'stream':
        if (message.type !== 'stream' || !same(message.display_recipient, operand)) return false;
        break;
      case 'topic':
        if (message.type !== 'stream' || !same(message.subject, operand)) return false;
        break;
      case 'sender':
        if (!same(message.sender_email, operand)) return false;
        break;
      case 'is':
        if ((operand === 'dm' || operand === 'private') && message.type !== 'private') return false;
        if (operand === 'starred' && !flags.includes('starred')) return false;
        if (operand === 'unread' && flags.includes('read')) return false;
        if ((operand === 'mentioned' || operand === 'alerted') && !flags.includes('mentioned')) return false;
        if (operand === 'resolved' && !String(message.subject ?? '').startsWith('✔ ')) return false;
        break;
    }
  }
  return true;
}
