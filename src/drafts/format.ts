import type { Draft } from './tables.ts';

export interface ApiDraft {
  id: number;
  type: '' | 'stream' | 'private';
  to: number[];
  topic: string;
  content: string;
  timestamp: number;
}

export function formatDraft(d: Draft): ApiDraft {
  return { id: d.id, type: d.type as ApiDraft['type'], to: d.recipients, topic: d.topic, content: d.content, timestamp: d.last_edit_time };
}

/** Most recently edited first (ties: newest first), as register and GET /drafts list them. */
export function newestFirst(a: ApiDraft, b: ApiDraft): number {
  return b.timestamp - a.timestamp || b.id - a.id;
}
