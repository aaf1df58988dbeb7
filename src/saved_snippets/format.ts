import type { SavedSnippet } from './tables.ts';

/** The API shape (spec "Saved snippet"). */
export interface ApiSavedSnippet {
  id: number;
  title: string;
  content: string;
  date_created: number;
}

export function formatSnippet(s: SavedSnippet): ApiSavedSnippet {
  return { id: s.id, title: s.title, content: s.content, date_created: Math.floor(new Date(s.date_created).getTime() / 1000) };
}
