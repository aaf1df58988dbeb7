import type { Executor } from '../db/schema.ts';

/** The organization's playgrounds in the API's shape, oldest first. */
export async function listPlaygrounds(db: Executor, realmId: number) {
  return db.selectFrom('realm_playgrounds').select(['id', 'name', 'pygments_language', 'url_template']).where('realm_id', '=', realmId).orderBy('id').execute();
}
