// Row ids are PostgreSQL `integer`s: a number outside their range names no row,
// and must not reach a query (where it would be an error, not "not found").

export const MAX_ROW_ID = 2 ** 31 - 1;

/** Whether some row could have this id. */
export function isRowId(id: number): boolean {
  return Number.isInteger(id) && id > 0 && id <= MAX_ROW_ID;
}

/** Text that can reach a `text` column: PostgreSQL refuses NUL characters, so text with one matches nothing. */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000');
}

