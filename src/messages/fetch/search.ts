// Narrows as SQL (digest 1.5). A search runs over one of two bases:
//
// - the viewer's own messages (user_messages), the default;
// - a channel's whole history, when the narrow names channels whose history
//   the viewer may read (public channels, or private ones with shared history
//   that the viewer can access), so that messages from before they joined are
//   found too ("historical" messages, which have no user_messages row).
//
// Flags of messages without a row read as read + historical.

import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../db/schema.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import { badRequest } from '../../http/errors.ts';
import { cachedChannelViewer, hasContentAccess, hasMetadataAccess, type ChannelViewer } from '../../channels/access.ts';
import type { ViewerCache } from '../../channels/viewer-cache.ts';
import type { Channel } from '../../channels/tables.ts';
import { getChannel, getChannelByName, listChannels } from '../../channels/queries.ts';
import { getUser, getUserByEmail } from '../../users/queries.ts';
import { badNarrow, type NarrowTerm } from './narrow.ts';
import { dmKey } from '../send/recipients.ts';
import { FLAG_BITS, HISTORICAL_BITS, MENTION_BITS } from '../flags/flags.ts';
import { topicParameter } from '../validation.ts';
import { VISIBILITY } from '../topics/user-topics.ts';
import { isRowId } from '../../db/ids.ts';
import { canSee } from '../access.ts';

/** user_messages.flags, or read + historical where the viewer has no copy. */
const FLAGS = sql`coalesce(um.flags, ${HISTORICAL_BITS})`;

export interface Search {
  /** Channels whose whole history is searched; undefined: the viewer's own messages. */
  historyChannels?: number[];
  conditions: RawBuilder<unknown>[];
  /** Full-text query, for highlighting. */
  text?: string;
  viewerId: number | null;
  realmId: number;
}

/** Who is searching: a user, or an anonymous spectator (web-public channels only). */
export interface Searcher {
  realm: Realm;
  viewer: ChannelViewer | null;
  /** The channel a narrow's `channel` operand names, when read with the viewer (`searcherFor`). */
  named?: { operand: NarrowTerm['operand']; channel: Channel | undefined };
}

/** How a `channel` operand names a channel: by id (then by name), or by name. */
function channelRef(operand: NarrowTerm['operand']): { id: number | null; name: string } {
  const byId = typeof operand === 'number' || /^\d+$/.test(String(operand));
  return { id: byId && isRowId(Number(operand)) ? Number(operand) : null, name: String(operand) };
}

/** The searcher for a narrow: a user's, with the narrow's channel read in the same statement (or kept in `viewers`). */
export async function searcherFor(db: Executor, viewers: ViewerCache, realm: Realm, user: User | null, narrow: NarrowTerm[]): Promise<Searcher> {
  if (!user) return { realm, viewer: null };
  const term = narrow.find((t) => t.operator === 'channel');
  if (!term) return { realm, viewer: (await cachedChannelViewer(db, viewers, realm, user)).viewer };
  const { viewer, channel } = await cachedChannelViewer(db, viewers, realm, user, channelRef(term.operand));
  return { realm, viewer, named: { operand: term.operand, channel } };
}

const SPECTATOR_OPERATORS = ['channel', 'channels', 'topic', 'sender', 'has', 'search', 'near', 'id', 'with'];

async function resolveChannel(db: Executor, s: Searcher, operand: string | number | number[]) {
  const ref = channelRef(operand);
  const channel =
    s.named?.operand === operand
      ? s.named.channel
      : ((ref.id !== null ? await getChannel(db, s.realm.id, ref.id) : undefined) ?? (await getChannelByName(db, s.realm.id, ref.name)));
  const visible = channel && (s.viewer ? hasMetadataAccess(s.viewer, channel) : channel.is_web_public);
  if (!channel || !visible) throw badNarrow(`unknown channel ${operand}`);
  return channel;
}

async function resolveUser(db: Executor, realm: Realm, operand: string | number): Promise<User> {
  const user =
    typeof operand === 'number' || /^\d+$/.test(String(operand))
      ? await getUser(db, realm.id, Number(operand))
      : await getUserByEmail(db, realm.id, String(operand));
  if (!user) throw badNarrow(`unknown user ${operand}`);
  return user;
}

async function resolveUsers(db: Executor, realm: Realm, operand: string | number | number[]): Promise<User[]> {
  const parts = Array.isArray(operand)
    ? operand
    : typeof operand === 'number'
      ? [operand]
      : operand
          .split(',')
          .map((e) => e.trim())
          .filter(Boolean);
  const users: User[] = [];
  for (const p of parts) users.push(await resolveUser(db, realm, p));
  return users;
}

/** `with:<id>`: the narrow moves to wherever that message is now (digest 1.5). */
async function rewriteWith(db: Executor, s: Searcher, terms: NarrowTerm[]): Promise<NarrowTerm[]> {
  const withTerm = terms.find((t) => t.operator === 'with');
  if (!withTerm) return terms;
  const id = Number(withTerm.operand);
  const message = isRowId(id)
    ? await db.selectFrom('messages').selectAll().where('realm_id', '=', s.realm.id).where('id', '=', id).executeTakeFirst()
    : undefined;
  const rest = terms.filter((t) => t !== withTerm);
  if (!message || !(await canSee(db, s, message))) return rest;
  const conversational = new Set(['channel', 'topic', 'dm', 'dm-including', 'group-pm-with']);
  const kept = rest.filter((t) => !conversational.has(t.operator));
  if (message.channel_id !== null) {
    return [...kept, { operator: 'channel', operand: message.channel_id, negated: false }, { operator: 'topic', operand: message.topic, negated: false }];
  }
  const recipient = await db.selectFrom('recipients').select('dm_user_ids').where('id', '=', message.recipient_id).executeTakeFirstOrThrow();
  const others = (recipient.dm_user_ids ?? []).filter((id) => id !== s.viewer?.user.id);
  return [...kept, { operator: 'dm', operand: others.length > 0 ? others : [s.viewer!.user.id], negated: false }];
}

export async function buildSearch(db: Executor, s: Searcher, narrow: NarrowTerm[]): Promise<Search> {
  const terms = await rewriteWith(db, s, narrow);
  const viewerId = s.viewer?.user.id ?? null;
  if (!s.viewer) {
    for (const t of terms)
      if (!SPECTATOR_OPERATORS.includes(t.operator) && !(t.operator === 'is' && t.operand === 'resolved')) throw badNarrow(`unknown operator ${t.operator}`);
  }
  const conditions: RawBuilder<unknown>[] = [];
  let historyChannels: number[] | undefined;
  let text: string | undefined;
  const narrowTo = (ids: number[]) => {
    historyChannels = historyChannels ? historyChannels.filter((id) => ids.includes(id)) : ids;
  };

  for (const t of terms) {
    let condition: RawBuilder<unknown> | undefined;
    switch (t.operator) {
      case 'channel': {
        const channel = await resolveChannel(db, s, t.operand);
        condition = sql`m.channel_id = ${channel.id}`;
        const readable = s.viewer ? hasContentAccess(s.viewer, channel) : channel.is_web_public;
        if (!t.negated && readable && channel.history_public_to_subscribers) narrowTo([channel.id]);
        break;
      }
      case 'channels': {
        const channels = (await listChannels(db, s.realm.id)).filter((c) =>
          t.operand === 'web-public' ? c.is_web_public : !c.invite_only && (s.viewer ? hasContentAccess(s.viewer, c) : c.is_web_public),
        );
        const ids = channels.map((c) => c.id);
        condition = ids.length > 0 ? sql`m.channel_id in (${sql.join(ids)})` : sql`false`;
        if (!t.negated) narrowTo(ids);
        break;
      }
      case 'topic':
        condition = sql`(m.channel_id is not null and lower(m.topic) = ${topicParameter(String(t.operand)).toLowerCase()})`;
        break;
      case 'sender':
        condition = sql`m.sender_id = ${(await resolveUser(db, s.realm, t.operand as string | number)).id}`;
        break;
      case 'dm': {
        const users = await resolveUsers(db, s.realm, t.operand);
        const key = dmKey([...users.map((u) => u.id), viewerId!]);
        condition = sql`m.recipient_id = (select id from recipients where realm_id = ${s.realm.id} and dm_key = ${key})`;
        break;
      }
      case 'dm-including':
      case 'group-pm-with': {
        const user = await resolveUser(db, s.realm, t.operand as string | number);
        const size = t.operator === 'group-pm-with' ? sql`and array_length(r.dm_user_ids, 1) >= 3` : sql``;
        condition = sql`exists (select 1 from recipients r where r.id = m.recipient_id and r.channel_id is null and ${user.id} = any(r.dm_user_ids) ${size})`;
        break;
      }
      case 'is':
        condition = isCondition(String(t.operand), viewerId);
        break;
      case 'in':
        condition = t.operand === 'home' ? sql`not ${isCondition('muted', viewerId)}` : sql`true`;
        break;
      case 'has':
        condition = t.operand === 'reaction' ? sql`exists (select 1 from reactions x where x.message_id = m.id)` : sql`m.${sql.ref(`has_${t.operand}`)}`;
        break;
      case 'id':
        condition = isRowId(Number(t.operand)) ? sql`m.id = ${Number(t.operand)}` : sql`false`;
        break;
      case 'near':
        break;
      case 'search': {
        const query = String(t.operand);
        text = text ? `${text} ${query}` : query;
        condition = sql`m.search_tsv @@ websearch_to_tsquery('english', ${query})`;
        break;
      }
    }
    if (condition) conditions.push(t.negated ? sql`not coalesce(${condition}, false)` : condition);
  }
  if (!s.viewer && historyChannels === undefined) throw badNarrow('spectators may only search web-public channels');
  return { historyChannels, conditions, text, viewerId, realmId: s.realm.id };
}

function isCondition(operand: string, viewerId: number | null): RawBuilder<unknown> {
  const topicPolicy = (policies: number[]) =>
    sql`exists (select 1 from user_topics ut where ut.user_id = ${viewerId} and ut.channel_id = m.channel_id and lower(ut.topic) = lower(m.topic) and ut.visibility_policy in (${sql.join(policies)}))`;
  switch (operand) {
    case 'dm':
    case 'private':
      return sql`m.channel_id is null`;
    case 'starred':
      return sql`(${FLAGS} & ${FLAG_BITS.starred}) <> 0`;
    case 'unread':
      return sql`(${FLAGS} & ${FLAG_BITS.read}) = 0`;
    case 'mentioned':
      return sql`(${FLAGS} & ${MENTION_BITS}) <> 0`;
    case 'alerted':
      return sql`(${FLAGS} & ${MENTION_BITS | FLAG_BITS.has_alert_word}) <> 0`;
    case 'resolved':
      return sql`(m.channel_id is not null and m.topic like '✔ %')`;
    case 'followed':
      return sql`(m.channel_id is not null and ${topicPolicy([VISIBILITY.FOLLOWED])})`;
    case 'muted':
      // A muted topic, or a muted channel's topic that the user did not unmute or follow.
      return sql`(m.channel_id is not null and (${topicPolicy([VISIBILITY.MUTED])} or (exists (select 1 from subscriptions sm where sm.user_id = ${viewerId} and sm.channel_id = m.channel_id and sm.is_muted) and not ${topicPolicy([VISIBILITY.UNMUTED, VISIBILITY.FOLLOWED])})))`;
    default:
      throw badRequest(`Invalid narrow operator: unknown 'is' operand ${operand}`);
  }
}

/**
 * What a search is ordered by: over the viewer's copies, their message id, so that
 * the plan walks the viewer's copies (user_messages' key) and not every message of
 * the organization backwards, filtering by user.
 */
export function orderKey(search: Search): RawBuilder<unknown> {
  return search.historyChannels === undefined ? sql`um.message_id` : sql`m.id`;
}

/** A condition on a message id column, as `(id) => sql`${id} < ${anchor}``. */
export type IdCondition = (id: RawBuilder<unknown>) => RawBuilder<unknown>;

/**
 * The FROM and WHERE of a search, for the queries in fetch.ts to complete; `range`
 * (as `(id) => sql`${id} < ${anchor}``) limits it to a range of message ids. The
 * range goes on both ids wherever copies are joined: PostgreSQL carries equalities
 * across a join, not ranges, so with it on `m.id` alone one index scan starts at the
 * far end of a long history, and a channel's history merge-joined every copy of the
 * viewer's up to the anchor (a page after an anchor took 30,000 rows for one).
 */
export function searchFrom(search: Search, range?: IdCondition): RawBuilder<unknown> {
  const conditions = range ? [...search.conditions, range(sql`m.id`)] : search.conditions;
  const where = conditions.length > 0 ? sql` and ${sql.join(conditions, sql` and `)}` : sql``;
  const copies = range ? sql` and ${range(sql`um.message_id`)}` : sql``;
  if (search.historyChannels === undefined) {
    return sql`user_messages um join messages m on m.id = um.message_id where um.user_id = ${search.viewerId}${copies}${where}`;
  }
  const channels = search.historyChannels.length > 0 ? sql`m.channel_id in (${sql.join(search.historyChannels)})` : sql`false`;
  return sql`messages m left join user_messages um on um.message_id = m.id and um.user_id = ${search.viewerId}${copies} where m.realm_id = ${search.realmId} and ${channels}${where}`;
}
