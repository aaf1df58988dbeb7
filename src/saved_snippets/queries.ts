import type { Executor } from '../db/schema.ts';
import type { SavedSnippet } from './tables.ts';
import { notFound } from '../http/errors.ts';

/** A user's own snippets, oldest first. */
export async function listSnippets(db: Executor, realmId: number, userId: number): Promise<SavedSnippet[]> {
  return db.selectFrom('saved_snippets').selectAll().where('realm_id', '=', realmId).where('user_id', '=', userId).orderBy('id').execute();
}

/** One of the user's own snippets; anyone else's is as unknown as a missing one (404). */
export async function getOwnSnippet(db: Executor, realmId: number, userId: number, snippetId: number): Promise<SavedSnippet> {
  const snippet = await db
    .selectFrom('saved_snippets')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('user_id', '=', userId)
    .where('id', '=', snippetId)
    .executeTakeFirst();
  if (!snippet) throw notFound('Saved snippet does not exist.');
  return snippet;
}
