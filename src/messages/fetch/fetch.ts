// GET /messages (spec endpoint 5, digest 1.5): a window of messages around an
// anchor in a narrow, and the other reads of messages.

import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../db/schema.ts';
import { badRequest } from '../../http/errors.ts';
import { unsupportedCombination } from '../../http/params.ts';
import {
  FORMATTED_COLUMNS,
  formatMessages,
  SENDER_COLUMNS,
  type ApiMessage,
  type FormattedMessageRow,
  type KnownParts,
  type MessageSender,
} from '../format.ts';
import type { ApiSubmessage } from '../submessages/submessages.ts';
import type { Linkifier } from '../../markdown/index.ts';
import { linkifiersJson } from '../../linkifiers/queries.ts';
import { topicLinkerOf } from '../../linkifiers/rendering.ts';
import { buildSearch, orderKey, searchFrom, type IdCondition, type Search, type Searcher } from './search.ts';
import type { NarrowTerm } from './narrow.ts';
import { FLAG_BITS } from '../flags/flags.ts';
import { intArray } from '../state-support.ts';
import { djangoEscape } from '../../markdown/util.ts';
import { canSee } from '../access.ts';

export const MAX_MESSAGES_PER_FETCH = 5000;
/** The anchor `first_unread` resolves to when nothing is unread: past every message. */
export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000;

export type Anchor = number | 'newest' | 'oldest' | 'first_unread';

export interface FetchRequest {
  anchor?: string;
  include_anchor: boolean;
  num_before?: number;
  num_after?: number;
  narrow: NarrowTerm[];
  client_svcavatar: boolean;
  apply_markdown: boolean;
  message_ids?: number[];
  allow_empty_topic_name: boolean;
  use_first_unread_anchor?: boolean;
}

export function parseAnchor(raw: string | undefined, useFirstUnread: boolean | undefined): Anchor {
  if (useFirstUnread) return 'first_unread';
  if (raw === undefined) throw badRequest("Missing 'anchor' argument.");
  if (raw === 'newest' || raw === 'oldest' || raw === 'first_unread') return raw;
  if (!/^-?\d+$/.test(raw.trim())) throw badRequest('Invalid anchor');
  return Math.min(Math.max(0, Number(raw)), LARGER_THAN_MAX_MESSAGE_ID);
}

type Row = FormattedMessageRow & { um_flags: number | null; side: number };

/** What formatting needs besides the messages, read in the window's statement (on its first row). */
interface Parts {
  senders: MessageSender[] | null;
  channels: { id: number; name: string }[] | null;
  reactions: Reaction[] | null;
  submessages: ApiSubmessage[] | null;
  linkifiers: Linkifier[] | null;
}
type Reaction = NonNullable<KnownParts['reactions']>[number];

/** One range of a window: its condition (a range of ids, or any condition), order and size. */
interface Side {
  where: IdCondition | RawBuilder<unknown>;
  order: 'asc' | 'desc';
  limit: number;
}

// The constant parts of the window's statement as text, made once: Kysely compiles a
// statement's every node on every call. The names are the code's own (lower case, unquoted).
const COLUMNS = sql.raw(FORMATTED_COLUMNS.map((c) => `m.${c}`).join(', '));
const jsonOf = (alias: string, columns: readonly string[]) => `json_build_object(${columns.map((c) => `'${c}', ${alias}.${c}`).join(', ')})`;
// Of the window's rows only, each once: senders and channels (not on every row), reactions
// (by time) and submessages (by id) in the order formatting lists them per message.
const PARTS = sql.raw(`'senders', (select json_agg(${jsonOf('s', SENDER_COLUMNS)}) from users s where s.id in (select w.sender_id from w)),
  'channels', (select json_agg(${jsonOf('c', ['id', 'name'])}) from channels c where c.id in (select w.channel_id from w)),
  'reactions', (select json_agg(${jsonOf('x', ['message_id', 'user_id', 'emoji_name', 'emoji_code', 'reaction_type'])} order by x.created_at, x.user_id)
    from reactions x where x.message_id in (select w.id from w)),
  'submessages', (select json_agg(${jsonOf('x', ['id', 'message_id', 'sender_id', 'msg_type', 'content'])} order by x.id)
    from submessages x where x.message_id in (select w.id from w))`);

/**
 * The rows of each side (`side` is its index), in one statement with what formatting reads
 * for them: one round trip for the window and the formatting reads. Each side is limited
 * first. The parts are one JSON value on the lowest id's row, not columns on every row
 * (100 copies of a sender's columns cost the database more than the window's own reads).
 */
async function rows(db: Executor, search: Search, sides: Side[]): Promise<{ found: Row[]; parts: KnownParts }> {
  const wanted = sides.map((side, i) => ({ ...side, i })).filter((side) => side.limit > 0);
  if (wanted.length === 0) return { found: [], parts: partsOf(null) };
  const branches = wanted.map((side) => {
    const from = typeof side.where === 'function' ? searchFrom(search, side.where) : sql`${searchFrom(search)} and ${side.where}`;
    return sql`(select ${COLUMNS}, um.flags as um_flags, ${side.i}::integer as side from ${from} order by ${orderKey(search)} ${sql.raw(side.order)} limit ${side.limit})`;
  });
  const result = await sql<Row & { parts: Parts | null }>`with w as (${sql.join(branches, sql` union all `)})
    select w.*, case when w.id = (select min(w.id) from w) then json_build_object(${PARTS}, 'linkifiers', ${linkifiersJson(search.realmId)}) end as parts
    from w order by w.id`.execute(db);
  // The rows keep their `parts` column (null past the first): formatting copies only what it names.
  return { found: result.rows, parts: partsOf(result.rows[0]?.parts ?? null) };
}

/** The parts as formatting takes them (lists for every message of the batch). */
function partsOf(parts: Parts | null): KnownParts {
  const submessages = new Map<number, ApiSubmessage[]>();
  for (const m of parts?.submessages ?? []) {
    const list = submessages.get(m.message_id);
    if (list) list.push(m);
    else submessages.set(m.message_id, [m]);
  }
  return {
    senders: parts?.senders ?? [],
    channels: parts?.channels ?? [],
    reactions: parts?.reactions ?? [],
    submessages,
    linkTopic: topicLinkerOf(parts?.linkifiers ?? []),
  };
}

export async function firstUnread(db: Executor, search: Search): Promise<number> {
  const result = await sql<{
    id: number | null;
  }>`select min(m.id) as id from ${searchFrom(search)} and (coalesce(um.flags, ${FLAG_BITS.read}) & ${FLAG_BITS.read}) = 0`.execute(db);
  return result.rows[0]?.id ?? LARGER_THAN_MAX_MESSAGE_ID;
}

export interface FetchResult {
  messages: ApiMessage[];
  anchor?: number;
  found_anchor: boolean;
  found_oldest: boolean;
  found_newest: boolean;
  history_limited: boolean;
}

export async function fetchMessages(db: Executor, s: Searcher, req: FetchRequest): Promise<FetchResult> {
  if (req.message_ids !== undefined) {
    if (req.anchor !== undefined || req.num_before !== undefined || req.num_after !== undefined || req.include_anchor !== true || req.use_first_unread_anchor) {
      throw unsupportedCombination(['num_before', 'num_after', 'anchor', 'message_ids', 'include_anchor', 'use_first_unread_anchor']);
    }
    if (req.message_ids.length > MAX_MESSAGES_PER_FETCH) throw badRequest(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
    const search = await buildSearch(db, s, req.narrow);
    const { found, parts } = await rows(db, search, [{ where: sql`m.id = any(${intArray(req.message_ids)})`, order: 'asc', limit: req.message_ids.length }]);
    return { messages: await present(db, s, found, parts, req, search), found_anchor: false, found_oldest: false, found_newest: false, history_limited: false };
  }
  const anchorParam = parseAnchor(req.anchor, req.use_first_unread_anchor);
  const numBefore = req.num_before ?? 0;
  const numAfter = req.num_after ?? 0;
  if (numBefore + numAfter > MAX_MESSAGES_PER_FETCH) throw badRequest(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
  if (numBefore > 0 && numAfter > 0 && !req.include_anchor) throw badRequest('The anchor can only be excluded at an end of the range');

  const search = await buildSearch(db, s, req.narrow);
  const anchor =
    anchorParam === 'newest'
      ? LARGER_THAN_MAX_MESSAGE_ID
      : anchorParam === 'oldest'
        ? 0
        : anchorParam === 'first_unread'
          ? await firstUnread(db, search)
          : anchorParam;
  // One row more than asked on each side tells whether the end was reached. Past the
  // newest message (`newest`, nothing unread) nothing is after or at the anchor; at 0
  // (`oldest`) nothing is before or at it: those queries are skipped.
  const pastEnd = anchor >= LARGER_THAN_MAX_MESSAGE_ID;
  const atStart = anchor <= 0;
  const { found, parts } = await rows(db, search, [
    { where: (id) => sql`${id} < ${anchor}::bigint`, order: 'desc', limit: atStart ? 0 : numBefore + 1 },
    { where: (id) => sql`${id} > ${anchor}::bigint`, order: 'asc', limit: pastEnd ? 0 : numAfter + 1 },
    { where: (id) => sql`${id} = ${anchor}::bigint`, order: 'asc', limit: req.include_anchor && !pastEnd && !atStart ? 1 : 0 },
  ]);
  // Rows come in id order: the ones before the anchor nearest it are last.
  const before = found.filter((r) => r.side === 0);
  const after = found.filter((r) => r.side === 1);
  const atAnchor = found.filter((r) => r.side === 2);
  const window = [...before.slice(Math.max(0, before.length - numBefore)), ...atAnchor, ...after.slice(0, numAfter)];
  return {
    messages: await present(db, s, window, parts, req, search),
    anchor,
    found_anchor: atAnchor.length > 0,
    found_oldest: before.length <= numBefore,
    found_newest: anchorParam === 'newest' || after.length <= numAfter,
    history_limited: false,
  };
}

async function present(db: Executor, s: Searcher, found: Row[], parts: KnownParts, req: FetchRequest, search: Search): Promise<ApiMessage[]> {
  const flags = new Map<number, number>();
  for (const r of found) if (r.um_flags !== null) flags.set(r.id, r.um_flags);
  const messages = await formatMessages(
    db,
    s.realm,
    found,
    {
      viewer: s.viewer?.user ?? null,
      applyMarkdown: req.apply_markdown,
      clientSvcavatar: req.client_svcavatar,
      allowEmptyTopicName: req.allow_empty_topic_name,
      flags,
    },
    parts,
  );
  if (search.text !== undefined) {
    const highlights = await highlight(
      db,
      found.map((r) => r.id),
      search.text,
    );
    for (const m of messages) Object.assign(m, highlights.get(m.id));
  }
  return messages;
}

/** `match_content` and `match_subject` for full-text results. */
async function highlight(db: Executor, ids: number[], text: string): Promise<Map<number, { match_content: string; match_subject: string }>> {
  const out = new Map<number, { match_content: string; match_subject: string }>();
  if (ids.length === 0) return out;
  // Option values with spaces are quoted, and quotes inside them doubled.
  const options = 'HighlightAll=TRUE, StartSel="<span class=""highlight"">", StopSel="</span>"';
  // A topic is plain text: marked with characters no topic holds, escaped, then highlighted.
  const topicOptions = `HighlightAll=TRUE, StartSel=${TOPIC_MARK_START}, StopSel=${TOPIC_MARK_STOP}`;
  const result = await sql<{ id: number; match_content: string; match_subject: string }>`
    select id,
      ts_headline('english', rendered_content, websearch_to_tsquery('english', ${text}), ${options}) as match_content,
      ts_headline('english', topic, websearch_to_tsquery('english', ${text}), ${topicOptions}) as match_subject
    from messages where id in (${sql.join(ids)})`.execute(db);
  for (const r of result.rows) out.set(r.id, { match_content: r.match_content, match_subject: topicHtml(r.match_subject) });
  return out;
}

// Topics refuse control characters, so these never come from one.
const TOPIC_MARK_START = '\u0001';
const TOPIC_MARK_STOP = '\u0002';

/** A topic as HTML (the reference's escape), with the highlight marks made spans. */
function topicHtml(marked: string): string {
  return djangoEscape(marked).replaceAll(TOPIC_MARK_START, '<span class="highlight">').replaceAll(TOPIC_MARK_STOP, '</span>');
}

/** GET /messages/{id}: one message the viewer may read, with its raw Markdown. */
export async function fetchMessage(db: Executor, s: Searcher, id: number, opts: { applyMarkdown: boolean; allowEmptyTopicName: boolean }) {
  const message = await db.selectFrom('messages').selectAll().where('realm_id', '=', s.realm.id).where('id', '=', id).executeTakeFirst();
  const copy = s.viewer
    ? await db.selectFrom('user_messages').select('flags').where('user_id', '=', s.viewer.user.id).where('message_id', '=', id).executeTakeFirst()
    : undefined;
  if (!message || !(await canSee(db, s, message, copy !== undefined))) throw badRequest('Invalid message(s)');
  const flags = new Map<number, number>(copy ? [[id, copy.flags]] : []);
  const [formatted] = await formatMessages(db, s.realm, [message], {
    viewer: s.viewer?.user ?? null,
    applyMarkdown: opts.applyMarkdown,
    clientSvcavatar: false,
    allowEmptyTopicName: opts.allowEmptyTopicName,
    flags,
  });
  return { message: formatted, raw_content: message.content };
}

/** GET /messages/matches_narrow: which of these messages match, with highlights for searches. */
export async function matchesNarrow(db: Executor, s: Searcher, ids: number[], narrow: NarrowTerm[]) {
  const search = await buildSearch(db, s, narrow);
  const { found } = await rows(db, search, [{ where: sql`m.id = any(${intArray(ids)})`, order: 'asc', limit: ids.length }]);
  const highlights =
    search.text !== undefined
      ? await highlight(
          db,
          found.map((r) => r.id),
          search.text,
        )
      : new Map();
  const messages: Record<string, { match_content: string; match_subject: string }> = {};
  for (const r of found) {
    messages[String(r.id)] = highlights.get(r.id) ?? { match_content: r.rendered_content, match_subject: topicHtml(r.topic) };
  }
  return { messages };
}
