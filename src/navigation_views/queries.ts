import type { Executor } from '../db/schema.ts';
import type { NavigationView } from './tables.ts';

export async function listNavigationViews(db: Executor, userId: number): Promise<NavigationView[]> {
  return db.selectFrom('navigation_views').selectAll().where('user_id', '=', userId).orderBy('id').execute();
}
