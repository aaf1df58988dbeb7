// Which statements the drivers keep prepared (PGlite: pglite-dialect.ts; PostgreSQL:
// postgres-pool.ts), and which ones make the kept ones stale.

/** Statements kept prepared at most, per connection; the least recently used is closed first. */
export const MAX_PREPARED = 500;
/** Statements worth keeping: those PostgreSQL plans. Transaction control and DDL run unprepared. */
export const PLANNED = /^\s*\(?\s*(select|insert|update|delete|with|values)\b/i;
/** A schema change may change what a kept statement returns ("cached plan must not change result type"). */
export const SCHEMA_CHANGE = /^\s*(create|alter|drop)\b/i;
