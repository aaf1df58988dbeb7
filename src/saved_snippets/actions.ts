// Saved snippets: each user's own reusable texts. Events go to the owner's
// queues only (digest 1.18, section 2, 3.3).

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { transact } from '../db/transact.ts';
import { getOwnSnippet } from './queries.ts';
import { formatSnippet } from './format.ts';
import type { ApiSavedSnippet } from './format.ts';

export type SavedSnippetsEvent =
  | { type: 'saved_snippets'; op: 'add' | 'update'; saved_snippet: ApiSavedSnippet }
  | { type: 'saved_snippets'; op: 'remove'; saved_snippet_id: number };

/** POST /saved_snippets: `title` and `content` arrive stripped and within bounds. */
export async function createSnippet(svc: Services, realm: Realm, actor: User, title: string, content: string): Promise<number> {
  return transact(svc, async (tx, emit) => {
    const snippet = await tx
      .insertInto('saved_snippets')
      .values({ realm_id: realm.id, user_id: actor.id, title, content, date_created: new Date() })
      .returningAll()
      .executeTakeFirstOrThrow();
    emit(realm.id, { type: 'saved_snippets', op: 'add', saved_snippet: formatSnippet(snippet) }, [actor.id]);
    return snippet.id;
  });
}

/** PATCH /saved_snippets/{id} (spec endpoint 18): nothing to change sends no event. */
export async function editSnippet(svc: Services, realm: Realm, actor: User, snippetId: number, changes: { title?: string; content?: string }): Promise<void> {
  await transact(svc, async (tx, emit) => {
    const snippet = await getOwnSnippet(tx, realm.id, actor.id, snippetId);
    if (changes.title === undefined && changes.content === undefined) return;
    const updated = await tx
      .updateTable('saved_snippets')
      .set({ title: changes.title ?? snippet.title, content: changes.content ?? snippet.content })
      .where('id', '=', snippet.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    emit(realm.id, { type: 'saved_snippets', op: 'update', saved_snippet: formatSnippet(updated) }, [actor.id]);
  });
}

/** DELETE /saved_snippets/{id}. */
export async function deleteSnippet(svc: Services, realm: Realm, actor: User, snippetId: number): Promise<void> {
  await transact(svc, async (tx, emit) => {
    const snippet = await getOwnSnippet(tx, realm.id, actor.id, snippetId);
    await tx.deleteFrom('saved_snippets').where('id', '=', snippet.id).execute();
    emit(realm.id, { type: 'saved_snippets', op: 'remove', saved_snippet_id: snippet.id }, [actor.id]);
  });
}
