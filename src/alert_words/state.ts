// Register's `alert_words` section: the caller's alert words; each event carries the whole list.

import type { StateSection } from '../events/state.ts';
import { alertWords } from './queries.ts';

export const alertWordsSection: StateSection<{ alert_words: string[] }> = {
  types: ['alert_words'],
  async fetch({ svc, user }) {
    return { alert_words: user ? await alertWords(svc.db, user.id) : [] };
  },
  apply(state, event) {
    if (event.type === 'alert_words') state.alert_words = event.alert_words;
  },
};
