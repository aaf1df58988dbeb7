import type { Executor } from '../db/schema.ts';

/** A user's alert words, in the order they were added. */
export async function alertWords(db: Executor, userId: number): Promise<string[]> {
  const rows = await db.selectFrom('alert_words').select('word').where('user_id', '=', userId).orderBy('id').execute();
  return rows.map((r) => r.word);
}
