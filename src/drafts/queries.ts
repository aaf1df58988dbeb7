import type { Executor } from '../db/schema.ts';
import type { Draft } from './tables.ts';

/** A user's drafts, most recently edited first. */
export async function listDrafts(db: Executor, userId: number, limit?: number): Promise<Draft[]> {
  let q = db.selectFrom('drafts').selectAll().where('user_id', '=', userId).orderBy('last_edit_time', 'desc').orderBy('id', 'desc');
  if (limit !== undefined) q = q.limit(limit);
  return q.execute();
}
