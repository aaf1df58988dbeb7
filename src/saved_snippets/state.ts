// Register's `saved_snippets` section: the caller's own snippets.

import type { StateSection } from '../events/state.ts';
import { listSnippets } from './queries.ts';
import { formatSnippet, type ApiSavedSnippet } from './format.ts';

export const savedSnippetsSection: StateSection<{ saved_snippets: ApiSavedSnippet[] }> = {
  types: ['saved_snippets'],
  async fetch({ svc, realm, user }) {
    return { saved_snippets: user ? (await listSnippets(svc.db, realm.id, user.id)).map(formatSnippet) : [] };
  },
  apply(state, event) {
    if (event.type !== 'saved_snippets') return;
    const list = state.saved_snippets;
    if (event.op === 'remove') {
      state.saved_snippets = list.filter((s) => s.id !== event.saved_snippet_id);
      return;
    }
    const snippet = event.saved_snippet;
    const i = list.findIndex((s) => s.id === snippet.id);
    // An add the fetched state already has is an update of it.
    if (i >= 0) list[i] = snippet;
    else if (event.op === 'add') list.push(snippet);
  },
};
