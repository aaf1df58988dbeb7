// The database errors a request can cause, told apart from real failures.

// PostgreSQL's data exceptions that only a request's values can cause: a NUL or bad
// encoding (22021), a number out of a column's range (22003), text that is not the
// column's type (22P02), text longer than its column (22001).
const REFUSED_VALUE_CODES = new Set(['22021', '22003', '22P02', '22001']);

/** Whether the database refused a value that came from the request (a 400, not a 500). */
export function isRefusedValue(err: unknown): boolean {
  return typeof err === 'object' && err !== null && REFUSED_VALUE_CODES.has((err as { code?: unknown }).code as string);
}

/** A unique index refused the row: usually two requests racing for the same name or address. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}

/** Thrown where an action finds the rows it works on changing under it faster than it can follow. */
export class RaceLostError extends Error {}

/**
 * A concurrent transaction won: a unique violation (23505), a deadlock (40P01) or a
 * RaceLostError. Running again sees its commit.
 */
export function isRaceLost(err: unknown): boolean {
  if (err instanceof RaceLostError || isUniqueViolation(err)) return true;
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '40P01';
}
