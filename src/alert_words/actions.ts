// Alert words (digest section 3 `alert_words`): each user's own list. Words are
// unique regardless of case; every change sends the whole list to the user.
// Messages already received keep their flags (as in the reference).

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { sql } from 'kysely';
import { type ActionContext, transactAs } from '../db/transact.ts';
import { alertWords } from './queries.ts';

export interface AlertWordsEvent {
  type: 'alert_words';
  alert_words: string[];
}

async function emitList(ctx: ActionContext<unknown>, user: User): Promise<string[]> {
  const { tx, emit, realm } = ctx;
  const words = await alertWords(tx, user.id);
  emit(realm.id, { type: 'alert_words', alert_words: words }, [user.id]);
  return words;
}

/** POST /users/me/alert_words: `words` are stripped and non-empty; new ones are added, case-insensitively. */
export async function addAlertWords(svc: Services, realm: Realm, actor: User, words: string[]): Promise<string[]> {
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const existing = new Set((await alertWords(tx, actor.id)).map((w) => w.toLowerCase()));
    // One per case-insensitive word: the first one's place, the last one's spelling (as the reference).
    const added = new Map<string, string>();
    for (const word of words) if (!existing.has(word.toLowerCase())) added.set(word.toLowerCase(), word);
    if (added.size > 0) {
      await tx
        .insertInto('alert_words')
        .values([...added.values()].map((word) => ({ realm_id: realm.id, user_id: actor.id, word })))
        // A concurrent request added the same word: it is there, as if this one came second.
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    return emitList(ctx, actor);
  });
}

/** DELETE /users/me/alert_words: removes each given word in any case; unknown words are ignored. */
export async function removeAlertWords(svc: Services, realm: Realm, actor: User, words: string[]): Promise<string[]> {
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const lowered = words.map((w) => w.toLowerCase());
    if (lowered.length > 0) {
      await tx.deleteFrom('alert_words').where('user_id', '=', actor.id).where(sql<string>`lower(word)`, '=', sql<string>`any(${lowered}::text[])`).execute();
    }
    return emitList(ctx, actor);
  });
}
