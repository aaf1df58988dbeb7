// Register's message sections (digest section 4): `max_message_id` (with
// `message`), `starred_messages` and `recent_private_conversations`, and how
// message, flag and deletion events update them.
//
// Deletions need what comes after the deleted message: the sections keep the
// newest ids they read in their scratch space, as many as register considers.

import { sql } from 'kysely';
import type { Executor } from '../db/schema.ts';
import type { StateSection } from '../events/state.ts';
import { FLAG_BITS } from './flags/flags.ts';
import { deletedIds, SubscriptionTracker } from './state-support.ts';

const byId = (a: number, b: number) => a - b;

// --- max_message_id ---------------------------------------------------------

/** Newest ids kept to find the next highest after deletions. */
const KEPT_IDS = 1000;

interface MaxIdCache {
  /** The user's newest message ids, ascending. */
  ids: number[];
  subscriptions: SubscriptionTracker;
}

const MAX_ID_KEY = 'messages.max_id';

export const maxMessageIdSection: StateSection<{ max_message_id: number }> = {
  types: ['message'],
  async fetch(ctx) {
    if (!ctx.user) return { max_message_id: -1 };
    const [rows, subscriptions] = await Promise.all([
      ctx.svc.db.selectFrom('user_messages').select('message_id').where('user_id', '=', ctx.user.id).orderBy('message_id', 'desc').limit(KEPT_IDS).execute(),
      SubscriptionTracker.fetch(ctx),
    ]);
    const cache: MaxIdCache = { ids: rows.map((r) => r.message_id).reverse(), subscriptions };
    ctx.cache.set(MAX_ID_KEY, cache);
    return { max_message_id: cache.ids.at(-1) ?? -1 };
  },
  apply(state, event, ctx) {
    const cache = ctx.cache.get(MAX_ID_KEY) as MaxIdCache | undefined;
    if (!cache || !ctx.user) return;
    if (event.type === 'subscription') cache.subscriptions.apply(event);
    if (event.type === 'message') {
      const { message } = event;
      if (!cache.subscriptions.received(message, ctx.user.id) || cache.ids.includes(message.id)) return;
      cache.ids.push(message.id);
      cache.ids.sort(byId);
    } else if (event.type === 'update_message_flags' || (event.type === 'reaction' && event.op === 'add' && event.user_id === ctx.user.id)) {
      // A message a flag event lists, or the user reacted to, has a copy now: starring or reacting to history stores one.
      const ids = event.type === 'reaction' ? [event.message_id] : event.messages;
      const added = ids.filter((id) => !cache.ids.includes(id));
      if (added.length === 0) return;
      cache.ids.push(...added);
      cache.ids.sort(byId);
    } else if (event.type === 'delete_message') {
      const gone = new Set(deletedIds(event));
      cache.ids = cache.ids.filter((id) => !gone.has(id));
    } else return;
    state.max_message_id = cache.ids.at(-1) ?? -1;
  },
};

// --- starred_messages -------------------------------------------------------

/** Register lists at most this many starred messages (the oldest), as Zulip. */
const MAX_STARRED = 10_000;

export async function starredMessageIds(db: Executor, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('user_messages')
    .select('message_id')
    .where('user_id', '=', userId)
    .where(sql<boolean>`(flags & ${FLAG_BITS.starred}) <> 0`)
    .orderBy('message_id')
    .limit(MAX_STARRED)
    .execute();
  return rows.map((r) => r.message_id);
}

export const starredMessagesSection: StateSection<{ starred_messages: number[] }> = {
  types: ['starred_messages'],
  async fetch(ctx) {
    return { starred_messages: ctx.user ? await starredMessageIds(ctx.svc.db, ctx.user.id) : [] };
  },
  apply(state, event) {
    if (event.type === 'update_message_flags' && event.flag === 'starred') {
      const ids = event.messages;
      const current = state.starred_messages;
      state.starred_messages = event.op === 'add' ? [...new Set([...current, ...ids])].sort(byId) : current.filter((id) => !ids.includes(id));
    } else if (event.type === 'delete_message') {
      const gone = new Set(deletedIds(event));
      state.starred_messages = state.starred_messages.filter((id) => !gone.has(id));
    }
  },
};

// --- recent_private_conversations ---------------------------------------------

/** Conversations are found among the user's newest direct messages, as Zulip. */
const RECENT_DIRECT_MESSAGES = 1000;

interface RecentCache {
  /** Direct message id -> its conversation (the other participants, sorted, joined). */
  messages: Map<number, string>;
  conversations: Map<string, { user_ids: number[]; max_message_id: number }>;
}

const RECENT_KEY = 'messages.recent_private_conversations';

interface RecentConversation {
  max_message_id: number;
  user_ids: number[];
}

function conversationList(cache: RecentCache): RecentConversation[] {
  return [...cache.conversations.values()]
    .sort((a, b) => b.max_message_id - a.max_message_id)
    .map((c) => ({ max_message_id: c.max_message_id, user_ids: c.user_ids }));
}

function addDirectMessage(cache: RecentCache, id: number, others: number[]): void {
  const key = others.join(',');
  cache.messages.set(id, key);
  const conversation = cache.conversations.get(key);
  if (conversation) conversation.max_message_id = Math.max(conversation.max_message_id, id);
  else cache.conversations.set(key, { user_ids: others, max_message_id: id });
}

export const recentConversationsSection: StateSection<{ recent_private_conversations: RecentConversation[] }> = {
  types: ['recent_private_conversations'],
  async fetch(ctx) {
    if (!ctx.user) return { recent_private_conversations: [] };
    const userId = ctx.user.id;
    // Every participant has a copy of a direct message: the conversations' messages are the user's.
    const rows = await sql<{ id: number; dm_user_ids: number[] }>`
      select m.id, r.dm_user_ids
      from messages m join recipients r on r.id = m.recipient_id
      where r.realm_id = ${ctx.realm.id} and r.channel_id is null and r.dm_user_ids @> array[${userId}]::int[]
      order by m.id desc
      limit ${RECENT_DIRECT_MESSAGES}`.execute(ctx.svc.db);
    const cache: RecentCache = { messages: new Map(), conversations: new Map() };
    for (const row of rows.rows.reverse()) {
      addDirectMessage(cache, row.id, row.dm_user_ids.filter((id) => id !== userId).sort(byId));
    }
    ctx.cache.set(RECENT_KEY, cache);
    return { recent_private_conversations: conversationList(cache) };
  },
  apply(state, event, ctx) {
    const cache = ctx.cache.get(RECENT_KEY) as RecentCache | undefined;
    if (!cache || !ctx.user) return;
    const userId = ctx.user.id;
    if (event.type === 'message') {
      const { message } = event;
      if (message.type !== 'private') return;
      const others = message.display_recipient
        .map((u) => u.id)
        .filter((id) => id !== userId)
        .sort(byId);
      addDirectMessage(cache, message.id, others);
    } else if (event.type === 'delete_message' && event.message_type === 'private') {
      const touched = new Set<string>();
      for (const id of deletedIds(event)) {
        const key = cache.messages.get(id);
        if (key === undefined) continue;
        cache.messages.delete(id);
        touched.add(key);
      }
      if (touched.size === 0) return;
      const newest = new Map<string, number>();
      for (const [id, key] of cache.messages) if (touched.has(key)) newest.set(key, Math.max(newest.get(key) ?? 0, id));
      for (const key of touched) {
        const max = newest.get(key);
        if (max === undefined) cache.conversations.delete(key);
        else cache.conversations.get(key)!.max_message_id = max;
      }
    } else return;
    state.recent_private_conversations = conversationList(cache);
  },
};
