import type { RealmEmojiRow } from './tables.ts';

/** A custom emoji as the API shows it (digest section 2; OpenAPI `RealmEmoji`). */
export interface ApiRealmEmoji {
  id: string;
  name: string;
  source_url: string;
  still_url: string | null;
  deactivated: boolean;
  author_id: number | null;
}

/** The path, relative to the organization's URL, that serves an emoji file (custom_emoji/serve.ts). */
export function emojiUrl(realmId: number, file: string): string {
  return `/user_avatars/${realmId}/emoji/images/${file}`;
}

/** Where an emoji file is stored: `file` is a `file_name` or `still_file_name` (checked by callers that take it from a URL). */
export function emojiKey(realmId: number, file: string): string {
  return `emoji/${realmId}/${file}`;
}

export function formatEmoji(row: RealmEmojiRow): ApiRealmEmoji {
  return {
    id: String(row.id),
    name: row.name,
    source_url: emojiUrl(row.realm_id, row.file_name),
    still_url: row.still_file_name === null ? null : emojiUrl(row.realm_id, row.still_file_name),
    deactivated: row.deactivated,
    author_id: row.author_id,
  };
}

/** `{"<id>": emoji}` for every emoji, deactivated ones included: `GET /realm/emoji`, register, events. */
export function emojiDict(rows: readonly RealmEmojiRow[]): Record<string, ApiRealmEmoji> {
  return Object.fromEntries(rows.map((row) => [String(row.id), formatEmoji(row)]));
}
