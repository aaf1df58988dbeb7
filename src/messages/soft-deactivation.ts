// Soft deactivation (the reference's long_term_idle, zerver/lib/soft_deactivation.py):
// users with no activity for `softDeactivation.days` are marked long-term idle by a
// daily pass; a channel message leaves them no user_messages row unless they need one
// at once (send.ts: flags, or an email the message may trigger). Their missing rows are
// added, unread as the reference adds them, by a catch-up:
//
// - when they come back (any authenticated request: http/router.ts, through the
//   `softReactivate` hook), which also clears the flag;
// - before anything that would make the catch-up wrong or that reads their rows: a
//   subscription change or a deactivation (through the `catchUpIdle` hook), a move of
//   messages between channels, an edit that mentions them, an export; these keep them idle.
//
// The catch-up's rule: every message in a channel they are subscribed to, with an id
// above last_active_message_id. It holds because each of those events catches them up
// first, so they were subscribed to those channels, and active, since that id.
//
// Races with sends: a send takes a key-share lock on its channel before it reads the
// subscribers (send/recipients.ts); a catch-up locks the user's channels for update
// before it reads the messages. Either the send's message is committed before the
// catch-up reads, or the send reads the flag cleared (or the user caught up to an id
// below its message's).

import { sql, type RawBuilder } from 'kysely';
import type { Services } from '../services.ts';
import type { Tx } from '../db/transact.ts';
import type { User } from '../users/tables.ts';
import { USER_SETTINGS } from '../users/settings.ts';
import { VISIBILITY } from './topics/user-topics.ts';
import { transact } from '../db/transact.ts';
import { intArray } from '../db/ids.ts';
import { mutesSender } from '../muted_users/queries.ts';
import { CREDENTIALS_CHANGED } from '../auth/credential-cache.ts';
import { startPeriodic, type Periodic } from '../jobs/periodic.ts';

const DAY_MS = 86_400_000;
/** Channel emails where neither the subscription nor the user's settings say (users/settings.ts). */
const STREAM_EMAILS_DEFAULT = USER_SETTINGS.enable_stream_email_notifications.default as boolean;

/**
 * Adds the user's missing channel copies (flags 0: unread, as the reference's add_missing_messages).
 * `reactivate`: they came back, the flag is cleared; else they stay idle, caught up to now.
 * Nothing happens to a user who is not idle (a concurrent return did it first). Returns the rows added.
 */
export async function catchUpWithin(tx: Tx, userId: number, reactivate: boolean): Promise<number> {
  // Taking the user's row first: concurrent catch-ups of one user run one after the other.
  const idle = reactivate
    ? await tx
        .updateTable('users')
        .set({ long_term_idle: false, last_active_at: new Date() })
        .where('id', '=', userId)
        .where('long_term_idle', '=', true)
        .returning(['realm_id', 'last_active_message_id'])
        .executeTakeFirst()
    : await tx
        .selectFrom('users')
        .select(['realm_id', 'last_active_message_id'])
        .where('id', '=', userId)
        .where('long_term_idle', '=', true)
        .forUpdate()
        .executeTakeFirst();
  if (!idle) return 0;
  // Sends to these channels in flight finish first; new ones wait for the commit (see above).
  const { rows: channels } = await sql<{ id: number }>`
    select c.id from channels c join subscriptions s on s.channel_id = c.id
    where s.user_id = ${userId} and s.active order by c.id for update of c`.execute(tx);
  let added = 0;
  if (channels.length > 0) {
    const result = await sql`
      insert into user_messages (realm_id, user_id, message_id, flags)
      select m.realm_id, ${userId}::integer, m.id, 0 from messages m
      where m.channel_id = any(${intArray(channels.map((c) => c.id))}) and m.id > ${idle.last_active_message_id ?? 0}::integer
      on conflict (user_id, message_id) do nothing`.execute(tx);
    added = Number(result.numAffectedRows ?? 0n);
  }
  if (!reactivate) {
    await tx.updateTable('users').set({ last_active_message_id: sql<number>`(select coalesce(max(id), 0) from messages)` }).where('id', '=', userId).execute();
  }
  return added;
}

/** What a channel message may need of its long-term idle subscribers (from its rendering). */
export interface IdleReach {
  realmId: number;
  channelId: number;
  topic: string;
  senderId: number;
  /** Named in it: mentioned users, members of mentioned groups, those it is read or starred for. */
  named: number[];
  /** A channel wildcard mention flags every subscriber. */
  everyone: boolean;
  /** A topic wildcard mention flags the topic's participants. */
  topicWildcard: boolean;
}

/**
 * On the subscriber query of a send (`s` subscriptions, `u` users): the long-term idle subscribers it
 * reads are those the message may flag (as the reference's get_subscriptions_for_send_message): named,
 * every one for a channel wildcard, the topic's participants for a topic wildcard, those with alert
 * words, those who muted the sender (it arrives read), and those an email may tell of it. The others get
 * no row, no event (no live client), no email: reading them is the cost saved. Each set is read once (a
 * hashed subplan), not probed for each idle subscriber: in a channel of thousands of idle members the
 * probes cost more than the rest of the send. It refers to `s` and `u` only, so that the database
 * filters at their join, before anything else is joined.
 */
export function reachedNow(r: IdleReach): RawBuilder<boolean> {
  const topicWildcard = r.topicWildcard
    ? sql`or u.id in (select m.sender_id from messages m where m.channel_id = ${r.channelId} and lower(m.topic) = ${r.topic.toLowerCase()})`
    : sql``;
  return sql<boolean>`(not u.long_term_idle or ${r.everyone} or u.id = any(${intArray(r.named)}) ${topicWildcard}
    or u.id in (select a.user_id from alert_words a where a.realm_id = ${r.realmId})
    or ${mutesSender(r.senderId)}
    or ${copyWithoutFlags(r)})`;
}

/**
 * Whether a subscriber gets a row even when the message's flags for them are 0: an active one, or an
 * idle one whom an email may tell of it (the email's job reads the row): they follow the topic, or the
 * channel emails them. Confab sends no push notifications, so the push settings do not count.
 */
export function copyWithoutFlags(r: Pick<IdleReach, 'channelId' | 'topic'>): RawBuilder<boolean> {
  return sql<boolean>`(not u.long_term_idle
    or coalesce(s.email_notifications, (u.settings->>'enable_stream_email_notifications')::boolean, ${STREAM_EMAILS_DEFAULT})
    or u.id in (select t.user_id from user_topics t where t.channel_id = ${r.channelId}
                and lower(t.topic) = ${r.topic.toLowerCase()} and t.visibility_policy = ${VISIBILITY.FOLLOWED}))`;
}

/** The idle subscribers still waiting for their copy of a channel message (an edit may mention them). */
export async function idleAwaiting(tx: Tx, channelId: number, messageId: number): Promise<number[]> {
  const { rows } = await sql<{ user_id: number }>`
    select s.user_id from subscriptions s join users u on u.id = s.user_id
    where s.channel_id = ${channelId} and s.active and u.long_term_idle and coalesce(u.last_active_message_id, 0) < ${messageId}
      and not exists (select 1 from user_messages um where um.user_id = s.user_id and um.message_id = ${messageId})`.execute(tx);
  return rows.map((r) => r.user_id);
}

/** Their copy of a message now (flags 0, as their catch-up would add it); an existing one stays. */
export async function giveCopies(tx: Tx, messageId: number, userIds: number[]): Promise<void> {
  if (userIds.length === 0) return;
  await sql`
    insert into user_messages (realm_id, user_id, message_id, flags)
    select m.realm_id, u.id, m.id, 0 from messages m cross join unnest(${intArray(userIds)}) as u(id)
    where m.id = ${messageId}
    on conflict (user_id, message_id) do nothing`.execute(tx);
}

/** Catches up those of these users who are idle, keeping them idle (before their subscriptions or access change). */
export async function catchUpIdle(tx: Tx, userIds: Iterable<number>): Promise<void> {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return;
  const idle = await tx
    .selectFrom('users')
    .select('id')
    .where('id', '=', sql<number>`any(${intArray(ids)})`)
    .where('long_term_idle', '=', true)
    .orderBy('id')
    .execute();
  for (const { id } of idle) await catchUpWithin(tx, id, false);
}

/** An idle user reactivated: the messages of their deactivated time were never theirs, a return adds none of them. */
export async function skipDeactivatedTime(tx: Tx, userId: number): Promise<void> {
  await tx
    .updateTable('users')
    .set({ last_active_message_id: sql<number>`(select coalesce(max(id), 0) from messages)` })
    .where('id', '=', userId)
    .where('long_term_idle', '=', true)
    .execute();
}

/** The idle subscribers of these channels, caught up (before messages move between them). */
export async function catchUpIdleSubscribers(tx: Tx, channelIds: number[]): Promise<void> {
  const rows = await tx
    .selectFrom('subscriptions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select('u.id')
    .where('s.channel_id', '=', sql<number>`any(${intArray(channelIds)})`)
    .where('s.active', '=', true)
    .where('u.long_term_idle', '=', true)
    .execute();
  await catchUpIdle(
    tx,
    rows.map((r) => r.id),
  );
}

/** An idle user's request (the router): their missing rows first, then they are active again. */
export async function softReactivate(svc: Pick<Services, 'db' | 'events'>, user: User): Promise<void> {
  await transact(svc, async (tx, emit) => {
    await catchUpWithin(tx, user.id, true);
    // Cached copies of the user row still say idle: every process forgets them.
    emit(user.realm_id, { type: CREDENTIALS_CHANGED, user_id: user.id }, []);
  });
}

/** Every idle user of an organization caught up, still idle (an export reads everyone's rows). */
export async function catchUpRealm(svc: Pick<Services, 'db' | 'events'>, realmId: number): Promise<void> {
  const idle = await svc.db.selectFrom('users').select('id').where('realm_id', '=', realmId).where('long_term_idle', '=', true).orderBy('id').execute();
  for (const { id } of idle) await transact(svc, (tx) => catchUpWithin(tx, id, false));
}

/**
 * Marks the users with no activity since `days` before `now` as long-term idle (active humans only,
 * as the reference). Activity: the last presence report (users.last_active_at, user_presence), a
 * return from idleness (which sets last_active_at), else the day they joined.
 */
export async function markIdleUsers(svc: Pick<Services, 'db' | 'events'>, days: number, now = new Date()): Promise<number[]> {
  const cutoff = new Date(now.getTime() - days * DAY_MS);
  return transact(svc, async (tx, emit) => {
    const { rows } = await sql<{ id: number; realm_id: number }>`
      update users u set long_term_idle = true, last_active_message_id = (select coalesce(max(id), 0) from messages)
      where u.is_active and not u.is_bot and not u.is_system_bot and not u.long_term_idle
        and greatest(u.last_active_at, u.date_joined,
              (select greatest(p.last_active_time, p.last_connected_time) from user_presence p where p.user_id = u.id)) < ${cutoff}
      returning u.id, u.realm_id`.execute(tx);
    // A process that still holds one of them as active would skip their catch-up on return: all forget them.
    const byRealm = new Map<number, number[]>();
    for (const r of rows) {
      const ids = byRealm.get(r.realm_id);
      if (ids) ids.push(r.id);
      else byRealm.set(r.realm_id, [r.id]);
    }
    for (const [realmId, [first, ...more]] of byRealm) emit(realmId, { type: CREDENTIALS_CHANGED, user_id: first!, user_ids: more }, []);
    return rows.map((r) => r.id).sort((a, b) => a - b);
  });
}

export interface SoftDeactivationResult {
  marked: number[];
  caughtUp: number;
}

/** The daily pass: marks idle users, then (by default, as the reference) brings every idle user's rows up to date. */
export async function runSoftDeactivationPass(svc: Pick<Services, 'db' | 'events' | 'config' | 'log'>, now = new Date()): Promise<SoftDeactivationResult> {
  const { days, catchUp } = svc.config.softDeactivation;
  const marked = await markIdleUsers(svc, days, now);
  let caughtUp = 0;
  if (catchUp) {
    const idle = await svc.db.selectFrom('users').select('id').where('long_term_idle', '=', true).orderBy('id').execute();
    for (const { id } of idle) caughtUp += await transact(svc, (tx) => catchUpWithin(tx, id, false));
  }
  if (marked.length > 0 || caughtUp > 0) svc.log.info({ marked: marked.length, caughtUp }, 'soft deactivation pass');
  return { marked, caughtUp };
}

/** Started by server.ts; an interval of 0 turns it off (tests run passes themselves). */
export function startSoftDeactivation(svc: Services): Periodic | undefined {
  const { intervalMs } = svc.config.softDeactivation;
  if (intervalMs <= 0) return undefined;
  return startPeriodic(svc.log, 'soft deactivation pass', () => runSoftDeactivationPass(svc), intervalMs);
}
