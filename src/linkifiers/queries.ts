import type { Executor } from '../db/schema.ts';
import type { Linkifier } from '../markdown/index.ts';

/** The organization's linkifiers in processing order: the API shape `{id, pattern, url_template}`. */
export async function listLinkifiers(db: Executor, realmId: number): Promise<Linkifier[]> {
  return db.selectFrom('linkifiers').select(['id', 'pattern', 'url_template']).where('realm_id', '=', realmId).orderBy('position').orderBy('id').execute();
}
