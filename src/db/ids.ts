// Row ids are PostgreSQL `integer`s: a number outside their range names no row,
// and must not reach a query (where it would be an error, not "not found").

import { sql, type RawBuilder } from 'kysely';

export const MAX_ROW_ID = 2 ** 31 - 1;

/** Whether some row could have this id. */
export function isRowId(id: number): boolean {
  return Number.isInteger(id) && id > 0 && id <= MAX_ROW_ID;
}

/** Text that can reach a `text` column: PostgreSQL refuses NUL characters, so text with one matches nothing. */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000');
}

/** Ids as one `int[]` parameter (no limit on their number); ids no row can have are left out. */
export function intArray(ids: readonly number[]): RawBuilder<number[]> {
  return sql<number[]>`${ids.filter(isRowId)}::int[]`;
}

/** `column = any(ids)`: a condition whose size does not grow with the list (unlike `in (...)`). */
export function inIds(column: string, ids: readonly number[]): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(column)} = any(${intArray(ids)})`;
}
