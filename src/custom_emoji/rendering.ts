import type { ReferenceResolver } from '../rendering/index.ts';
import { activeCustomEmoji } from './queries.ts';
import { emojiUrl } from './format.ts';

/**
 * `:name:` in a text: the organization's active custom emoji of those names (they take
 * precedence over Unicode names). Only those: an organization may have thousands.
 */
export const resolveCustomEmoji: ReferenceResolver = async (_svc, db, realm, refs) => {
  if (refs.emoji_names.length === 0) return {};
  const rows = await activeCustomEmoji(db, realm.id, refs.emoji_names);
  if (rows.length === 0) return {};
  return { custom_emoji: rows.map((e) => ({ id: e.id, name: e.name, source_url: emojiUrl(e.realm_id, e.file_name) })) };
};
