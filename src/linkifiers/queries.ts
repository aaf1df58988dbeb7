import { sql } from 'kysely';
import type { Executor } from '../db/schema.ts';
import type { Linkifier } from '../markdown/index.ts';

/** The organization's linkifiers in processing order: the API shape `{id, pattern, url_template}`. */
export async function listLinkifiers(db: Executor, realmId: number): Promise<Linkifier[]> {
  return db.selectFrom('linkifiers').select(['id', 'pattern', 'url_template']).where('realm_id', '=', realmId).orderBy('position').orderBy('id').execute();
}

/** listLinkifiers as a JSON array (null for none), for a statement that reads more. */
export function linkifiersJson(realmId: number) {
  return sql<Linkifier[] | null>`(select json_agg(json_build_object('id', l.id, 'pattern', l.pattern, 'url_template', l.url_template) order by l.position, l.id)
    from linkifiers l where l.realm_id = ${realmId})`;
}
