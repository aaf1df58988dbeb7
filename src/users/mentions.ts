import type { ReferenceResolver } from '../rendering/index.ts';

/** The users a text names in mentions (`@**Name**`, `@**Name|id**`), active or not. */
export const resolveUserMentions: ReferenceResolver = async (db, realm, refs) => {
  if (refs.user_names.length === 0 && refs.user_ids.length === 0) return {};
  const names = refs.user_names.map((n) => n.toLowerCase());
  const users = await db
    .selectFrom('users')
    .select(['id', 'full_name', 'is_active'])
    .where('realm_id', '=', realm.id)
    .where((eb) => {
      const terms = [];
      if (names.length > 0) terms.push(eb(eb.fn('lower', ['full_name']), 'in', names));
      if (refs.user_ids.length > 0) terms.push(eb('id', 'in', refs.user_ids));
      return eb.or(terms);
    })
    .orderBy('id')
    .execute();
  return { users };
};
