import type { ReferenceResolver } from '../rendering/index.ts';
import { accessibleUsers, canAccess } from './queries.ts';

/**
 * The users a text names in mentions (`@**Name**`, `@**Name|id**`), active or not,
 * among those its author may see: a guest limited to some users neither mentions
 * nor learns the ids of the others (their mentions stay text).
 */
export const resolveUserMentions: ReferenceResolver = async (svc, db, realm, refs, author) => {
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
  // The server's own bots speak for the server, which sees everyone.
  if (author === null || author.is_system_bot || users.length === 0) return { users };
  const access = await accessibleUsers(svc, db, realm, author);
  return { users: users.filter((u) => canAccess(access, u.id)) };
};
