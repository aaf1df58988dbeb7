import { sql, type Kysely } from 'kysely';

/**
 * Runs a migration script statement by statement. PGlite's query path takes one
 * statement at a time; statements in our scripts end with `;` at the end of a line.
 */
export async function runScript(db: Kysely<any>, script: string): Promise<void> {
  const statements = script
    .split(/;\s*$/m)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter(Boolean);
  for (const statement of statements) await sql.raw(statement).execute(db);
}
