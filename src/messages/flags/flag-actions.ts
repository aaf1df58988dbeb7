// Personal message flags (spec endpoint 12 and "Personal message flags";
// digest 1.12, 1.27 and the read-state helpers of section 2): a flag changed on
// messages by id or over a range of a narrow, and conversations marked read.
//
// Messages the user has no copy of (public history) read as `read` +
// `historical`. A change that would alter those flags needs access to the
// message and stores a copy; any other is a no-op for them. Every change sends
// `update_message_flags` to the user's clients, listing what changed.

import { sql } from 'kysely';
import type { Services } from '../../services.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import { transactAs, type ActionContext, type Tx } from '../../db/transact.ts';
import { badRequest } from '../../http/errors.ts';
import { channelViewer, hasContentAccess } from '../../channels/access.ts';
import { getChannel } from '../../channels/queries.ts';
import { EDITABLE_FLAGS, FLAG_BITS, HISTORICAL_BITS, type FlagName } from './flags.ts';
import { buildSearch, searchFrom, type IdCondition, type Search, type Searcher } from '../fetch/search.ts';
import { firstUnread, LARGER_THAN_MAX_MESSAGE_ID, parseAnchor } from '../fetch/fetch.ts';
import type { NarrowTerm } from '../fetch/narrow.ts';
import { topicParameter } from '../validation.ts';
import { unreadDetails } from './unread.ts';
import { intArray } from '../state-support.ts';
import { checkFlagAccess } from '../access.ts';
import type { UpdateMessageFlagsEvent } from '../events.ts';

export type FlagOp = 'add' | 'remove';

export interface FlagChange {
  flag: FlagName;
  op: FlagOp;
}

/** Checks a flag and operation in the reference's order: known flag, editable, operation. */
export function checkFlagChange(flag: string, op: string): FlagChange {
  if (!Object.hasOwn(FLAG_BITS, flag)) throw badRequest(`Invalid flag: '${flag}'`);
  if (!EDITABLE_FLAGS.includes(flag as FlagName)) throw badRequest(`Flag not editable: '${flag}'`);
  if (op !== 'add' && op !== 'remove') throw badRequest(`Invalid message flag operation: '${op}'`);
  return { flag: flag as FlagName, op };
}

export function flagEvent(change: FlagChange, messages: number[], all = false): UpdateMessageFlagsEvent {
  return { type: 'update_message_flags', op: change.op, operation: change.op, flag: change.flag, messages, all };
}

export interface FlagResult {
  /** The messages whose flag changed, in the order given. */
  changed: number[];
  ignored_because_not_subscribed_channels: number[];
}

/**
 * Changes one flag of the user on the given messages, in `tx`. Marking unread
 * skips channels the user is not subscribed to (unread messages live only in
 * subscribed channels) and lists them.
 */
async function changeFlags(ctx: ActionContext<unknown, User>, ids: number[], change: FlagChange): Promise<FlagResult> {
  const { tx, emit, realm, actor: user } = ctx;
  const bit = FLAG_BITS[change.flag];
  const target = change.op === 'add' ? bit : 0;
  let candidates = [...new Set(ids)];
  let ignored: number[] = [];
  if (change.flag === 'read' && change.op === 'remove' && candidates.length > 0) {
    const outside = await sql<{ id: number; channel_id: number }>`
      select m.id, m.channel_id from messages m
      where m.realm_id = ${realm.id} and m.id = any(${intArray(candidates)}) and m.channel_id is not null
        and not exists (select 1 from subscriptions s where s.user_id = ${user.id} and s.channel_id = m.channel_id and s.active)`.execute(tx);
    const skipped = new Set(outside.rows.map((r) => r.id));
    candidates = candidates.filter((id) => !skipped.has(id));
    ignored = [...new Set(outside.rows.map((r) => r.channel_id))].sort((a, b) => a - b);
  }

  const copies =
    candidates.length === 0
      ? []
      : (
          await sql<{ message_id: number; flags: number }>`
            select message_id, flags from user_messages
            where user_id = ${user.id} and message_id = any(${intArray(candidates)})
            for update`.execute(tx)
        ).rows;
  const flagsOf = new Map(copies.map((c) => [c.message_id, c.flags]));
  const changed = candidates.filter((id) => ((flagsOf.get(id) ?? HISTORICAL_BITS) & bit) !== target);

  const historical = changed.filter((id) => !flagsOf.has(id));
  if (historical.length > 0) {
    // Only changes that alter `read` + `historical` reach here (others are no-ops for such messages).
    await checkFlagAccess(tx, realm, user, historical);
    // A concurrent request may have stored the copy first: then the change applies to it.
    await sql`
      insert into user_messages (realm_id, user_id, message_id, flags)
      select ${realm.id}::integer, ${user.id}::integer, id, ${(HISTORICAL_BITS & ~bit) | target}::integer from unnest(${intArray(historical)}) as id
      on conflict (user_id, message_id) do update
        set flags = ${change.op === 'add' ? sql`user_messages.flags | ${bit}::integer` : sql`user_messages.flags & ${~bit}::integer`}`.execute(tx);
  }
  const existing = changed.filter((id) => flagsOf.has(id));
  if (existing.length > 0) {
    await tx
      .updateTable('user_messages')
      .set({ flags: change.op === 'add' ? sql<number>`flags | ${bit}` : sql<number>`flags & ${~bit}` })
      .where('user_id', '=', user.id)
      .where('message_id', '=', sql<number>`any(${intArray(existing)})`)
      .execute();
  }

  if (changed.length > 0) {
    const event = flagEvent(change, changed);
    if (change.flag === 'read' && change.op === 'remove') event.message_details = await unreadDetails(tx, user.id, changed);
    emit(realm.id, event, [user.id]);
  }
  return { changed, ignored_because_not_subscribed_channels: ignored };
}

/** POST /messages/flags (digest 1.27). */
export async function updateMessageFlags(svc: Services, realm: Realm, user: User, req: { messages: number[]; op: string; flag: string }): Promise<FlagResult> {
  const change = checkFlagChange(req.flag, req.op);
  return transactAs(svc, realm, user, (ctx) => changeFlags(ctx, req.messages, change));
}

/** The most messages one flags/narrow request changes (digest 1.12). */
export const MAX_MESSAGES_PER_UPDATE = 5000;

export interface NarrowFlagRequest {
  anchor: string;
  include_anchor: boolean;
  num_before: number;
  num_after: number;
  narrow: NarrowTerm[];
  op: string;
  flag: string;
}

/** The ids in a range of the search (the range bounds the joined copies too: see searchFrom). */
async function windowIds(tx: Tx, search: Search, range: IdCondition, order: 'asc' | 'desc', limit: number): Promise<number[]> {
  if (limit <= 0) return [];
  const result = await sql<{ id: number }>`select m.id from ${searchFrom(search, range)} order by m.id ${sql.raw(order)} limit ${limit}`.execute(tx);
  return result.rows.map((r) => r.id);
}

/** POST /messages/flags/narrow (spec endpoint 12, digest 1.12): a window of a narrow, as GET /messages picks it. */
export async function updateFlagsForNarrow(svc: Services, realm: Realm, user: User, req: NarrowFlagRequest) {
  const anchorParam = parseAnchor(req.anchor, false);
  if (req.num_before > 0 && req.num_after > 0 && !req.include_anchor) throw badRequest('The anchor can only be excluded at an end of the range');
  // The reference's clamps: num_before + num_after stays within the limit, num_before keeps at least half.
  const numBefore = Math.min(req.num_before, Math.max(MAX_MESSAGES_PER_UPDATE - req.num_after, Math.floor(MAX_MESSAGES_PER_UPDATE / 2)));
  const numAfter = Math.min(req.num_after, MAX_MESSAGES_PER_UPDATE - numBefore);
  return transactAs(svc, realm, user, async (ctx) => {
    const { tx } = ctx;
    const searcher: Searcher = { realm, viewer: await channelViewer(tx, realm, user) };
    const search = await buildSearch(tx, searcher, req.narrow);
    const change = checkFlagChange(req.flag, req.op);
    const anchor =
      anchorParam === 'newest'
        ? LARGER_THAN_MAX_MESSAGE_ID
        : anchorParam === 'oldest'
          ? 0
          : anchorParam === 'first_unread'
            ? await firstUnread(tx, search)
            : anchorParam;
    // One row more than asked on each side tells whether the end was reached.
    const before = await windowIds(tx, search, (id) => sql`${id} < ${anchor}::bigint`, 'desc', numBefore + 1);
    const after = await windowIds(tx, search, (id) => sql`${id} > ${anchor}::bigint`, 'asc', numAfter + 1);
    const atAnchor = req.include_anchor ? await windowIds(tx, search, (id) => sql`${id} = ${anchor}::bigint`, 'asc', 1) : [];
    const processed = [...before.slice(0, numBefore).reverse(), ...atAnchor, ...after.slice(0, numAfter)];
    const result = await changeFlags(ctx, processed, change);
    return {
      processed_count: processed.length,
      updated_count: result.changed.length,
      first_processed_id: processed[0] ?? null,
      last_processed_id: processed.at(-1) ?? null,
      found_oldest: before.length <= numBefore,
      found_newest: anchorParam === 'newest' || after.length <= numAfter,
      ignored_because_not_subscribed_channels: result.ignored_because_not_subscribed_channels,
    };
  });
}

/** mark_all_as_read works in batches, newest first, each its own transaction. */
const MARK_ALL_BATCH = 5000;
/** After this long, mark_all_as_read answers `complete: false` and the client asks again. */
export const MARK_ALL_TIME_BUDGET_MS = 30_000;

const READ: FlagChange = { flag: 'read', op: 'add' };

/**
 * POST /mark_all_as_read. On completion the clients hear `all: true` (as
 * Zulip); a run cut short by the time budget lists what it marked instead.
 */
export async function markAllAsRead(svc: Services, realm: Realm, user: User, budgetMs = MARK_ALL_TIME_BUDGET_MS): Promise<{ complete: boolean }> {
  const started = Date.now();
  const marked: number[] = [];
  for (;;) {
    const status = await transactAs(svc, realm, user, async ({ tx, emit }) => {
      const rows = await sql<{ message_id: number }>`
        update user_messages set flags = flags | ${FLAG_BITS.read}
        where user_id = ${user.id} and message_id in (
          select message_id from user_messages
          where user_id = ${user.id} and (flags & ${FLAG_BITS.read}) = 0
          order by message_id desc limit ${MARK_ALL_BATCH}
          for update)
        returning message_id`.execute(tx);
      for (const r of rows.rows) marked.push(r.message_id);
      if (rows.rows.length < MARK_ALL_BATCH) {
        emit(realm.id, flagEvent(READ, [], true), [user.id]);
        return 'complete';
      }
      if (Date.now() - started >= budgetMs) {
        emit(
          realm.id,
          flagEvent(
            READ,
            [...marked].sort((a, b) => a - b),
          ),
          [user.id],
        );
        return 'incomplete';
      }
      return 'more';
    });
    if (status !== 'more') return { complete: status === 'complete' };
  }
}

/**
 * Marks a user's unread messages of a channel (or one of its topics) read, in
 * the caller's transaction, and tells their clients. Also for other domains:
 * leaving a channel leaves nothing unread there.
 */
export async function markChannelMessagesRead(ctx: ActionContext<unknown>, userId: number, channelId: number, topic?: string): Promise<number[]> {
  const { tx, emit } = ctx;
  const realmId = ctx.realm.id;
  const inTopic = topic === undefined ? sql`` : sql`and lower(m.topic) = lower(${topic})`;
  const rows = await sql<{ message_id: number }>`
    update user_messages um set flags = um.flags | ${FLAG_BITS.read}
    from messages m
    where um.user_id = ${userId} and m.id = um.message_id and m.channel_id = ${channelId} ${inTopic}
      and (um.flags & ${FLAG_BITS.read}) = 0
    returning um.message_id`.execute(tx);
  const ids = rows.rows.map((r) => r.message_id).sort((a, b) => a - b);
  if (ids.length > 0) emit(realmId, flagEvent(READ, ids), [userId]);
  return ids;
}

/** A channel whose messages the user may read, or "Invalid channel ID". */
async function readableChannel(ctx: ActionContext<unknown, User>, channelId: number) {
  const { tx, realm, actor: user } = ctx;
  const channel = await getChannel(tx, realm.id, channelId);
  if (!channel || !hasContentAccess(await channelViewer(tx, realm, user), channel)) throw badRequest('Invalid channel ID');
  return channel;
}

/** POST /mark_stream_as_read. */
export async function markChannelAsRead(svc: Services, realm: Realm, user: User, channelId: number): Promise<void> {
  await transactAs(svc, realm, user, async (ctx) => {
    const channel = await readableChannel(ctx, channelId);
    await markChannelMessagesRead(ctx, user.id, channel.id);
  });
}

/** POST /mark_topic_as_read: the topic must be one the user has messages in ("general chat" is the empty topic). */
export async function markTopicAsRead(svc: Services, realm: Realm, user: User, channelId: number, topicName: string): Promise<void> {
  const topic = topicParameter(topicName);
  await transactAs(svc, realm, user, async (ctx) => {
    const { tx } = ctx;
    const channel = await readableChannel(ctx, channelId);
    const exists = await sql`
      select 1 from user_messages um join messages m on m.id = um.message_id
      where um.user_id = ${user.id} and m.channel_id = ${channel.id} and lower(m.topic) = lower(${topic})
      limit 1`.execute(tx);
    if (exists.rows.length === 0) throw badRequest(`No such topic '${topicName}'`);
    await markChannelMessagesRead(ctx, user.id, channel.id, topic);
  });
}
