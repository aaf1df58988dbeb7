// Register's `realm_emoji`: every custom emoji by id, deactivated ones included.

import type { StateSection } from '../events/state.ts';
import { listCustomEmoji } from './queries.ts';
import { emojiDict, type ApiRealmEmoji } from './format.ts';

export const realmEmojiSection: StateSection<{ realm_emoji: Record<string, ApiRealmEmoji> }> = {
  types: ['realm_emoji'],
  async fetch(ctx) {
    return { realm_emoji: emojiDict(await listCustomEmoji(ctx.svc.db, ctx.realm.id)) };
  },
  apply(state, event) {
    if (event.type === 'realm_emoji' && event.op === 'update') state.realm_emoji = event.realm_emoji;
  },
};
