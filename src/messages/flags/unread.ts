// Unread state (digest section 4 `unread_msgs`, section 3 `message_details`):
// the user's newest unread messages grouped by conversation, with the count
// and the mentions that muting leaves visible.
//
// The register section keeps a per-message form in its scratch space (as
// Zulip's raw_unread_msgs) and rebuilds the grouped form from it after each
// event, so that muting changes, moves and deletions can be applied exactly.
// Topics in that form are as the client sees them (the empty topic reads
// "general chat" without `empty_topic_name`), like the events it receives.

import { sql } from 'kysely';
import type { Executor } from '../../db/schema.ts';
import { jsonRows } from '../../db/json-rows.ts';
import type { RegisterContext, StateSection } from '../../events/state.ts';
import type { ServerEvent } from '../../events/types.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../../events/shape.ts';
import { FLAG_BITS } from './flags.ts';
import { registerTopicPolicies, VISIBILITY } from '../topics/user-topics.ts';
import { deletedIds, intArray, SubscriptionTracker } from '../state-support.ts';
import type { MessageDetail } from '../events.ts';
import { ownSubscriptions } from '../../channels/queries.ts';

/** At most this many unread messages (the newest) are considered (digest section 4). */
export const MAX_UNREAD_MESSAGES = 50_000;

const DIRECT_MENTION_BITS = FLAG_BITS.mentioned | FLAG_BITS.group_mentioned;
const WILDCARD_MENTION_BITS = FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned;

type Mention = 'direct' | 'wildcard' | null;

/** One unread message: where it is, and how it mentions the user. */
type UnreadEntry =
  | { type: 'stream'; stream_id: number; topic: string; mention: Mention }
  /** `others`: the other participants, sorted (empty for messages to oneself). */
  | { type: 'private'; others: number[]; mention: Mention };

interface Muting {
  mutedChannels: Set<number>;
  /** Visibility policies by channel and lowercased topic. */
  policies: Map<string, number>;
}

const topicKey = (channelId: number, topic: string) => `${channelId}\n${topic.toLowerCase()}`;

/** Whether a channel message counts: not in a muted topic, nor a muted channel's topic left muted (digest 4). */
function isUnmuted(muting: Muting, channelId: number, topic: string): boolean {
  const policy = muting.policies.get(topicKey(channelId, topic)) ?? VISIBILITY.INHERIT;
  if (muting.mutedChannels.has(channelId)) return policy === VISIBILITY.UNMUTED || policy === VISIBILITY.FOLLOWED;
  return policy !== VISIBILITY.MUTED;
}

function mentionOf(flags: number): Mention {
  if (flags & DIRECT_MENTION_BITS) return 'direct';
  if (flags & WILDCARD_MENTION_BITS) return 'wildcard';
  return null;
}

function mentionOfNames(flags: readonly string[]): Mention {
  if (flags.includes('mentioned') || flags.includes('group_mentioned')) return 'direct';
  if (flags.includes('stream_wildcard_mentioned') || flags.includes('topic_wildcard_mentioned')) return 'wildcard';
  return null;
}

/** Whether a message appears among the mentions: direct ones always, wildcards unless muted. */
function listedAsMention(entry: UnreadEntry, muting: Muting): boolean {
  if (entry.mention === 'direct') return true;
  if (entry.mention !== 'wildcard') return false;
  return entry.type === 'private' || isUnmuted(muting, entry.stream_id, entry.topic);
}

interface UnreadRow {
  message_id: number;
  flags: number;
  channel_id: number | null;
  topic: string;
  dm_user_ids: number[] | null;
}

/**
 * The user's copies of messages, newest first, leaving out channels they left
 * (unread messages live only in channels the user is subscribed to): the
 * newest unread ones, or the given ones whatever their flags. The channels left
 * are read once (a hashed subplan), not probed for each of up to 50,000 rows.
 */
async function unreadRows(db: Executor, userId: number, ids?: number[]): Promise<UnreadRow[]> {
  const which = ids === undefined ? sql`(um.flags & ${FLAG_BITS.read}) = 0` : sql`um.message_id = any(${intArray(ids)})`;
  // Up to 50,000 rows: one JSON value on PGlite (db/json-rows.ts).
  return jsonRows(
    db,
    sql<UnreadRow>`
    select um.message_id, um.flags, m.channel_id, m.topic, r.dm_user_ids
    from user_messages um
    join messages m on m.id = um.message_id
    left join recipients r on r.id = m.recipient_id and m.channel_id is null
    where um.user_id = ${userId} and ${which}
      and (m.channel_id is null or m.channel_id not in (select s.channel_id from subscriptions s where s.user_id = ${userId} and not s.active))
    order by um.message_id desc
    limit ${MAX_UNREAD_MESSAGES}`,
  );
}

async function fetchMuting(
  db: Executor,
  userId: number,
  showTopic: (topic: string) => string,
  /** The user's subscriptions and topic policies, when the caller has read them already (register). */
  read?: {
    subscriptions: Promise<{ channel_id: number; active: boolean; is_muted: boolean }[]>;
    policies: Promise<{ channel_id: number; topic: string; visibility_policy: number }[]>;
  },
): Promise<Muting> {
  const [muted, topics] = await Promise.all([
    read
      ? read.subscriptions.then((rows) => rows.filter((r) => r.active && r.is_muted))
      : db.selectFrom('subscriptions').select('channel_id').where('user_id', '=', userId).where('active', '=', true).where('is_muted', '=', true).execute(),
    read?.policies ?? db.selectFrom('user_topics').select(['channel_id', 'topic', 'visibility_policy']).where('user_id', '=', userId).execute(),
  ]);
  return {
    mutedChannels: new Set(muted.map((r) => r.channel_id)),
    policies: new Map(topics.map((t) => [topicKey(t.channel_id, showTopic(t.topic)), t.visibility_policy])),
  };
}

function entryOfRow(row: UnreadRow, userId: number, showTopic: (topic: string) => string): UnreadEntry {
  const mention = mentionOf(row.flags);
  if (row.channel_id !== null) return { type: 'stream', stream_id: row.channel_id, topic: showTopic(row.topic), mention };
  const others = (row.dm_user_ids ?? []).filter((id) => id !== userId).sort((a, b) => a - b);
  return { type: 'private', others, mention };
}

/**
 * `message_details` of an `update_message_flags` event that marks messages
 * unread (digest section 3): what a client needs to put them back in its
 * unread_msgs. Topics are as stored; the event shaping shows the empty one.
 */
export async function unreadDetails(db: Executor, userId: number, ids: number[]): Promise<Record<string, MessageDetail>> {
  const details: Record<string, MessageDetail> = {};
  if (ids.length === 0) return details;
  const [rows, muting] = await Promise.all([unreadRows(db, userId, ids), fetchMuting(db, userId, (t) => t)]);
  for (const row of [...rows].reverse()) {
    const entry = entryOfRow(row, userId, (t) => t);
    const d: MessageDetail =
      entry.type === 'stream'
        ? { type: 'stream', stream_id: entry.stream_id, topic: entry.topic, unmuted_stream_msg: isUnmuted(muting, entry.stream_id, entry.topic) }
        : { type: 'private', user_ids: entry.others };
    details[String(row.message_id)] = listedAsMention(entry, muting) ? { ...d, mentioned: true } : d;
  }
  return details;
}

interface UnreadCache {
  entries: Map<number, UnreadEntry>;
  /**
   * How messages seen since register mention the user, read or not: marking
   * one unread again restores a wildcard as a wildcard (`message_details` only
   * says whether it is listed now, which muting changes).
   */
  mentions: Map<number, Mention>;
  muting: Muting;
  subscriptions: SubscriptionTracker;
  oldUnreadsMissing: boolean;
}

const CACHE_KEY = 'messages.unread';

/** The grouped form register returns (OpenAPI register `unread_msgs`). */
interface UnreadMsgs {
  pms: { other_user_id: number; sender_id: number; unread_message_ids: number[] }[];
  streams: { stream_id: number; topic: string; unread_message_ids: number[] }[];
  huddles: { user_ids_string: string; unread_message_ids: number[] }[];
  mentions: number[];
  count: number;
  old_unreads_missing: boolean;
}

function unreadMsgs(cache: UnreadCache, userId: number): UnreadMsgs {
  const pms = new Map<number, number[]>();
  const huddles = new Map<string, number[]>();
  const streams = new Map<string, { stream_id: number; topic: string; unread_message_ids: number[] }>();
  const mentions: number[] = [];
  let count = 0;
  // In id order: a topic's bucket is named as its oldest unread message spells it.
  for (const id of [...cache.entries.keys()].sort((a, b) => a - b)) {
    const entry = cache.entries.get(id)!;
    if (listedAsMention(entry, cache.muting)) mentions.push(id);
    if (entry.type === 'stream') {
      if (isUnmuted(cache.muting, entry.stream_id, entry.topic)) count += 1;
      const key = topicKey(entry.stream_id, entry.topic);
      const bucket = streams.get(key) ?? { stream_id: entry.stream_id, topic: entry.topic, unread_message_ids: [] };
      bucket.unread_message_ids.push(id);
      streams.set(key, bucket);
      continue;
    }
    count += 1;
    if (entry.others.length <= 1) {
      const other = entry.others[0] ?? userId;
      if (!pms.has(other)) pms.set(other, []);
      pms.get(other)!.push(id);
    } else {
      const key = [...entry.others, userId].sort((a, b) => a - b).join(',');
      if (!huddles.has(key)) huddles.set(key, []);
      huddles.get(key)!.push(id);
    }
  }
  return {
    pms: [...pms.entries()].sort(([a], [b]) => a - b).map(([other, ids]) => ({ other_user_id: other, sender_id: other, unread_message_ids: ids })),
    streams: [...streams.values()].sort((a, b) => a.stream_id - b.stream_id || compareText(a.topic.toLowerCase(), b.topic.toLowerCase())),
    huddles: [...huddles.entries()].sort(([a], [b]) => compareText(a, b)).map(([key, ids]) => ({ user_ids_string: key, unread_message_ids: ids })),
    mentions,
    count,
    old_unreads_missing: cache.oldUnreadsMissing,
  };
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function showTopicFor(ctx: RegisterContext): (topic: string) => string {
  return (topic) => (topic === '' && !ctx.capabilities.empty_topic_name ? EMPTY_TOPIC_DISPLAY_NAME : topic);
}

/** Applies one event to the per-message form; false when it changes nothing here. */
function applyToCache(cache: UnreadCache, event: ServerEvent, userId: number): boolean {
  const { entries, muting } = cache;
  switch (event.type) {
    case 'message': {
      const { message } = event;
      const flags = event.flags ?? [];
      if (!cache.subscriptions.received(message, userId)) return false;
      const mention = mentionOfNames(flags);
      cache.mentions.set(message.id, mention);
      if (flags.includes('read') || !cache.subscriptions.holdsUnread(message, userId)) return false;
      entries.set(
        message.id,
        message.type === 'stream'
          ? { type: 'stream', stream_id: message.stream_id, topic: message.subject, mention }
          : {
              type: 'private',
              others: message.display_recipient
                .map((u) => u.id)
                .filter((id) => id !== userId)
                .sort((a, b) => a - b),
              mention,
            },
      );
      return true;
    }
    case 'update_message_flags': {
      if (event.flag !== 'read') return false;
      if (event.op === 'add') {
        if (event.all === true) {
          entries.clear();
          cache.oldUnreadsMissing = false;
        }
        for (const id of event.messages) entries.delete(id);
        return true;
      }
      for (const [id, d] of Object.entries(event.message_details ?? {})) {
        const mention: Mention = cache.mentions.get(Number(id)) ?? (d.mentioned ? 'direct' : null);
        entries.set(
          Number(id),
          d.type === 'stream'
            ? { type: 'stream', stream_id: d.stream_id, topic: d.topic, mention }
            : { type: 'private', others: d.user_ids.filter((u) => u !== userId).sort((a, b) => a - b), mention },
        );
      }
      return true;
    }
    case 'update_message': {
      // Moves carry the new topic (`subject`) and channel; edits the user's new flags.
      let changed = false;
      for (const id of event.message_ids) {
        const entry = entries.get(id);
        if (!entry || entry.type !== 'stream') continue;
        if (typeof event.subject === 'string') entry.topic = event.subject;
        if (typeof event.new_stream_id === 'number') entry.stream_id = event.new_stream_id;
        if (cache.subscriptions.left.has(entry.stream_id)) entries.delete(id);
        changed = true;
      }
      if (Array.isArray(event.flags)) {
        const id = event.message_id;
        const mention = mentionOfNames(event.flags);
        if (cache.mentions.has(id)) cache.mentions.set(id, mention);
        const edited = entries.get(id);
        if (edited) {
          edited.mention = mention;
          changed = true;
        }
      }
      return changed;
    }
    case 'delete_message': {
      for (const id of deletedIds(event)) {
        entries.delete(id);
        cache.mentions.delete(id);
      }
      return true;
    }
    case 'subscription': {
      cache.subscriptions.apply(event);
      if (event.op === 'add') {
        for (const sub of event.subscriptions) {
          if (sub.is_muted) muting.mutedChannels.add(sub.stream_id);
          else muting.mutedChannels.delete(sub.stream_id);
        }
      } else if (event.op === 'remove') {
        const left = new Set(event.subscriptions.map((s) => s.stream_id));
        for (const [id, entry] of entries) if (entry.type === 'stream' && left.has(entry.stream_id)) entries.delete(id);
        for (const id of left) muting.mutedChannels.delete(id);
      } else if (event.op === 'update' && (event.property === 'is_muted' || event.property === 'in_home_view')) {
        const muted = event.property === 'is_muted' ? event.value === true : event.value === false;
        if (muted) muting.mutedChannels.add(event.stream_id);
        else muting.mutedChannels.delete(event.stream_id);
      } else return false;
      return true;
    }
    case 'user_topic': {
      const key = topicKey(event.stream_id, event.topic_name);
      if (event.visibility_policy === VISIBILITY.INHERIT) muting.policies.delete(key);
      else muting.policies.set(key, event.visibility_policy);
      return true;
    }
    default:
      return false;
  }
}

const EMPTY_UNREAD: UnreadMsgs = { pms: [], streams: [], huddles: [], mentions: [], count: 0, old_unreads_missing: false };

/** Register's `unread_msgs`: needs both `message` and `update_message_flags` (digest section 4). */
export const unreadSection: StateSection<{ unread_msgs: UnreadMsgs }> = {
  types: ['message', 'update_message_flags'],
  requireAll: true,
  async fetch(ctx) {
    if (!ctx.user) return { unread_msgs: { ...EMPTY_UNREAD } };
    const userId = ctx.user.id;
    const showTopic = showTopicFor(ctx);
    const [rows, muting, subscriptions] = await Promise.all([
      unreadRows(ctx.svc.db, userId),
      fetchMuting(ctx.svc.db, userId, showTopic, { subscriptions: ownSubscriptions(ctx), policies: registerTopicPolicies(ctx) }),
      SubscriptionTracker.fetch(ctx),
    ]);
    const cache: UnreadCache = {
      entries: new Map(rows.map((r) => [r.message_id, entryOfRow(r, userId, showTopic)])),
      mentions: new Map(rows.map((r) => [r.message_id, mentionOf(r.flags)])),
      muting,
      subscriptions,
      oldUnreadsMissing: rows.length === MAX_UNREAD_MESSAGES,
    };
    ctx.cache.set(CACHE_KEY, cache);
    return { unread_msgs: unreadMsgs(cache, userId) };
  },
  apply(state, event, ctx) {
    const cache = ctx.cache.get(CACHE_KEY) as UnreadCache | undefined;
    if (!cache || !ctx.user) return;
    if (applyToCache(cache, event, ctx.user.id)) state.unread_msgs = unreadMsgs(cache, ctx.user.id);
  },
};
