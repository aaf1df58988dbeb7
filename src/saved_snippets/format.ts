import type { SavedSnippet } from './tables.ts';

/** The API shape (spec "Saved snippet"). */
export function formatSnippet(s: SavedSnippet): { id: number; title: string; content: string; date_created: number } {
  return { id: s.id, title: s.title, content: s.content, date_created: Math.floor(new Date(s.date_created).getTime() / 1000) };
}
