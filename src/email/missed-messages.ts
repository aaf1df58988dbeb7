// Missed-message emails, batched as the reference batches them (its
// missedmessage_emails worker and ScheduledMessageNotificationEmail):
//
// - When a message is sent (the message-sent hook, in the send's transaction),
//   each recipient who is offline and whose settings ask for an email about it
//   (a direct message, a personal or group mention, a wildcard mention, a
//   followed topic, a channel with email notifications) gets a row here. The
//   first row of a user sets the batch's time, now + their
//   `email_notifications_batching_period_seconds`, and queues one job for it;
//   later rows join that batch.
// - When the job runs, the batch's rows go; the messages the user has read
//   meanwhile (or that were deleted) are dropped, and the rest become one
//   email per conversation (a channel topic, a direct message conversation),
//   queued as email jobs in the same transaction (email/queue.ts).
//
// "Offline" is the presence the user's clients report: no "active" report in
// the last 140 seconds (the reference's presence-idle test; docs/DECISIONS.md).
// A user's rows and batch job are written under an advisory lock on the user,
// so that a batch being sent and a message arriving cannot lose each other.

import { sql } from 'kysely';
import type { Services } from '../services.ts';
import type { Tx } from '../db/transact.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { JobKind } from '../jobs/worker.ts';
import type { Participant, SentMessage } from '../messages/send/send.ts';
import type { Email } from './mailer.ts';
import { transact } from '../db/transact.ts';
import { enqueueJobs } from '../jobs/worker.ts';
import { intArray } from '../db/ids.ts';
import { RaceLostError } from '../db/errors.ts';
import { FLAG_BITS } from '../messages/flags/flags.ts';
import { VISIBILITY } from '../messages/topics/user-topics.ts';
import { userSettings } from '../users/settings.ts';
import { getUser } from '../users/queries.ts';
import { realmUrl, settingsOf } from '../realm/queries.ts';
import { messagePath } from '../notification_bot/index.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../events/shape.ts';
import { escapeHtml } from '../markdown/util.ts';
import { queueEmail } from './queue.ts';

export const MISSED_MESSAGES_JOB = 'missed_message_emails';

/** A user reported "active" within this many seconds is reading (the reference's presence-idle threshold). */
const ACTIVE_WITHIN_SECS = 140;

/** Why a user hears of a message, in the reference's order of precedence. */
export type MissedTrigger = 'direct_message' | 'mention' | 'group_mention' | 'topic_wildcard' | 'stream_wildcard' | 'followed_topic' | 'stream_email';

/** The email trigger of one recipient, or undefined (the reference's get_email_notification_trigger, roughly). */
function triggerFor(user: Participant, flags: number, sent: SentMessage): MissedTrigger | undefined {
  const s = userSettings(user);
  const offline = s.enable_offline_email_notifications as boolean;
  if (!sent.channel) return offline ? 'direct_message' : undefined;
  // The send read each channel recipient's subscription and topic policy with them.
  const sub = user.inChannel;
  const topicPolicy = sub?.topic_policy ?? VISIBILITY.INHERIT;
  if (flags & FLAG_BITS.mentioned && offline) return sent.mentionedUserIds.includes(user.id) ? 'mention' : 'group_mention';
  const followed = topicPolicy === VISIBILITY.FOLLOWED;
  const wildcardsNotify =
    offline &&
    ((sub?.wildcard_mentions_notify ?? (s.wildcard_mentions_notify as boolean)) || (followed && (s.enable_followed_topic_wildcard_mentions_notify as boolean)));
  if (flags & FLAG_BITS.topic_wildcard_mentioned && wildcardsNotify) return 'topic_wildcard';
  if (flags & FLAG_BITS.stream_wildcard_mentioned && wildcardsNotify) return 'stream_wildcard';
  if (followed && (s.enable_followed_topic_email_notifications as boolean)) return 'followed_topic';
  const muted = topicPolicy === VISIBILITY.MUTED || (sub?.is_muted && topicPolicy !== VISIBILITY.UNMUTED);
  if (!muted && (sub?.email_notifications ?? (s.enable_stream_email_notifications as boolean))) return 'stream_email';
  return undefined;
}

/** The message-sent hook (wiring.ts): rows for the offline recipients who are to hear of it. */
export async function queueMissedMessageEmails(tx: Tx, sent: SentMessage): Promise<void> {
  const candidates = sent.participants.filter((u) => u.id !== sent.sender.id && u.is_active && !u.is_bot && !((sent.flags.get(u.id) ?? 0) & FLAG_BITS.read));
  if (candidates.length === 0) return;
  const triggers = new Map<number, MissedTrigger>();
  for (const user of candidates) {
    const trigger = triggerFor(user, sent.flags.get(user.id) ?? 0, sent);
    if (trigger) triggers.set(user.id, trigger);
  }
  if (triggers.size === 0) return;
  const now = new Date();
  const byId = new Map(candidates.map((u) => [u.id, u]));
  const batchEnds = new Map(
    [...triggers.keys()].map((id) => [
      id,
      new Date(now.getTime() + (userSettings(byId.get(id)!).email_notifications_batching_period_seconds as number) * 1000),
    ]),
  );
  // Users active since then are reading: left out by the batches' statement (presence read there).
  const activeSince = new Date(now.getTime() - ACTIVE_WITHIN_SECS * 1000);
  await addToBatches(tx, { realmId: sent.realm.id, messageId: sent.messageId, triggers, activeSince }, batchEnds);
}

/**
 * Adds the message to each user's pending batch, starting a batch (and its
 * job) where the user has none. Set-based: a wildcard mention in a large
 * channel reaches thousands of users in a handful of statements.
 */
async function addToBatches(tx: Tx, message: MissedBy, ifNew: Map<number, Date>): Promise<void> {
  const { realmId, triggers } = message;
  const ids = [...triggers.keys()].sort((a, b) => a - b);
  const { scheduled, created } = await joinBatches(tx, message, ids, ifNew);
  await enqueueJobs(
    tx,
    created.map((userId) => {
      const at = scheduled.get(userId)!;
      return { realmId, kind: MISSED_MESSAGES_JOB, payload: { user_id: userId, scheduled_at: at.toISOString() }, runAfter: at };
    }),
  );
}

/** A message and who is to hear of it, why, unless they were active since `activeSince`. */
interface MissedBy {
  realmId: number;
  messageId: number;
  triggers: Map<number, MissedTrigger>;
  activeSince: Date;
}

/**
 * Each user's pending batch, held until the commit so that its job (which
 * deletes it first) cannot take it while a message joins it, and the message's
 * row in it (same statement). Users whose presence says they are active are
 * left out. Existing batches are held by a shared lock: sends adding to the
 * same batches do not wait on each other (an upsert's exclusive lock made
 * them). Missing ones are created; a user whose batch a concurrent send created
 * meanwhile is read (and joined) again.
 */
async function joinBatches(tx: Tx, message: MissedBy, ids: number[], ifNew: Map<number, Date>): Promise<{ scheduled: Map<number, Date>; created: number[] }> {
  const { realmId, messageId, triggers, activeSince } = message;
  const scheduled = new Map<number, Date>();
  const created: number[] = [];
  let missing = ids;
  for (let round = 0; missing.length > 0; round++) {
    // transact() runs the whole send again rather than answer 500.
    if (round === 3) throw new RaceLostError('missed-message batches kept changing under a send');
    const { rows } = await sql<{ user_id: number; scheduled_at: Date | string | null; created: boolean; active: boolean }>`
      with active as (
        select user_id from user_presence
        where realm_id = ${realmId}::integer and user_id = any(${intArray(missing)}) and last_active_time > ${activeSince.toISOString()}::timestamptz
      ), existing as (
        select user_id, scheduled_at from missed_message_batches
        where user_id = any(${intArray(missing)}) and user_id not in (select user_id from active) order by user_id for key share
      ), inserted as (
        insert into missed_message_batches (user_id, realm_id, scheduled_at)
        select u, ${realmId}::integer, s from unnest(${intArray(missing)}, ${missing.map((id) => ifNew.get(id)!.toISOString())}::timestamptz[]) as x(u, s)
        where u not in (select user_id from existing) and u not in (select user_id from active)
        on conflict (user_id) do nothing
        returning user_id, scheduled_at
      ), batches as (
        select user_id, scheduled_at, false as created from existing
        union all
        select user_id, scheduled_at, true as created from inserted
      ), joined as (
        insert into missed_message_emails (realm_id, user_id, message_id, trigger, scheduled_at)
        select ${realmId}::integer, b.user_id, ${messageId}::integer, x.t, b.scheduled_at
        from batches b join unnest(${intArray(missing)}, ${missing.map((id) => triggers.get(id)!)}::text[]) as x(u, t) on x.u = b.user_id
      )
      select user_id, scheduled_at, created, false as active from batches
      union all
      select user_id, null, false, true from active`.execute(tx);
    const done = new Set<number>();
    for (const r of rows) {
      done.add(r.user_id);
      if (r.active) continue;
      scheduled.set(r.user_id, new Date(r.scheduled_at!));
      if (r.created) created.push(r.user_id);
    }
    missing = missing.filter((id) => !done.has(id));
  }
  return { scheduled, created };
}

interface MissedMessage {
  id: number;
  sender_name: string;
  channel_id: number | null;
  channel_name: string | null;
  recipient_id: number;
  topic: string;
  content: string;
  rendered_content: string | null;
  date_sent: Date;
  trigger: string;
}

/** The job: the user's due batch becomes emails (one per conversation), queued in one transaction. */
export const missedMessagesJob: JobKind = {
  maxAttempts: 5,
  leaseMs: 60_000,
  backoffMs: (attempt) => 10_000 * 2 ** (attempt - 1),
  async run(svc, job) {
    const { user_id: userId, scheduled_at } = job.payload as { user_id: number; scheduled_at: string };
    await transact(svc, async (tx) => {
      // Taking the batch waits for a send that is adding to it; a later send starts a new batch.
      await tx.deleteFrom('missed_message_batches').where('user_id', '=', userId).where('scheduled_at', '<=', new Date(scheduled_at)).execute();
      const rows = await tx
        .selectFrom('missed_message_emails')
        .select(['id', 'message_id', 'trigger'])
        .where('user_id', '=', userId)
        // This job's batch (a later batch has a later time, and its own job).
        .where('scheduled_at', '<=', new Date(scheduled_at))
        .execute();
      if (rows.length === 0) return;
      await tx
        .deleteFrom('missed_message_emails')
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute();
      const realm = await tx.selectFrom('realms').selectAll().where('id', '=', job.realm_id!).executeTakeFirst();
      const user = realm && (await getUser(tx, realm.id, userId));
      if (!realm || realm.deactivated || !user?.is_active) return;
      const triggers = new Map(rows.map((r) => [r.message_id, r.trigger]));
      // Still unread: what the user read meanwhile is not emailed (nor what was deleted).
      const messages = await tx
        .selectFrom('messages as m')
        .innerJoin('user_messages as um', (j) => j.onRef('um.message_id', '=', 'm.id').on('um.user_id', '=', userId))
        .innerJoin('users as s', 's.id', 'm.sender_id')
        .leftJoin('channels as c', 'c.id', 'm.channel_id')
        .select([
          'm.id',
          's.full_name as sender_name',
          'm.channel_id',
          'c.name as channel_name',
          'm.recipient_id',
          'm.topic',
          'm.content',
          'm.rendered_content',
          'm.date_sent',
        ])
        .where('m.id', 'in', [...triggers.keys()])
        .where(sql<boolean>`(um.flags & ${FLAG_BITS.read}) = 0`)
        .orderBy('m.id')
        .execute();
      if (messages.length === 0) return;
      const conversations = new Map<string, MissedMessage[]>();
      for (const m of messages) {
        const key = m.channel_id === null ? `dm:${m.recipient_id}` : `channel:${m.channel_id}:${m.topic.toLowerCase()}`;
        const list = conversations.get(key) ?? [];
        list.push({ ...m, trigger: triggers.get(m.id)! });
        conversations.set(key, list);
      }
      for (const list of conversations.values()) {
        const dm = list[0].channel_id === null ? await dmConversation(tx, list[0].recipient_id, user.id) : undefined;
        await queueEmail(tx, realm.id, missedMessageEmail(svc, realm, user, list, dm));
      }
    });
  },
};

/** Everyone in a direct message conversation: ids (for its link) and the others' names. */
async function dmConversation(tx: Tx, recipientId: number, except: number): Promise<DmConversation> {
  const row = await tx.selectFrom('recipients').select('dm_user_ids').where('id', '=', recipientId).executeTakeFirstOrThrow();
  const ids = row.dm_user_ids ?? [];
  const others = ids.filter((id) => id !== except);
  const names = others.length === 0 ? [] : await tx.selectFrom('users').select(['id', 'full_name']).where('id', 'in', others).execute();
  return { ids, others: others.map((id) => names.find((n) => n.id === id)?.full_name ?? '') };
}

interface DmConversation {
  ids: number[];
  /** The other participants' names, in id order. */
  others: string[];
}

const REASONS: Record<string, string> = {
  direct_message: 'you were sent a direct message',
  mention: 'you were mentioned',
  group_mention: 'a group you belong to was mentioned',
  topic_wildcard: 'everyone in the topic was mentioned',
  stream_wildcard: 'everyone in the channel was mentioned',
  followed_topic: 'you follow this topic',
  stream_email: 'you get email notifications for this channel',
};

/** One conversation's missed messages: subject as the reference words it, text and HTML. */
function missedMessageEmail(svc: Services, realm: Realm, user: User, list: MissedMessage[], dm: DmConversation | undefined): Email {
  const first = list[0];
  const last = list[list.length - 1];
  const base = realmUrl(realm, svc.config);
  let subject: string;
  let link: string;
  if (!dm) {
    const topic = first.topic === '' ? EMPTY_TOPIC_DISPLAY_NAME : first.topic;
    subject = `#${first.channel_name} > ${topic}`;
    link = `${base}/${messagePath({ id: first.channel_id!, name: first.channel_name ?? '' }, first.topic, last.id)}`;
  } else {
    subject = dm.others.length <= 1 ? `DMs with ${dm.others[0] || first.sender_name}` : `Group DMs with ${dm.others.join(', ')}`;
    link = `${base}/#narrow/dm/${dm.ids.join(',')}-${dm.ids.length > 2 ? 'group' : 'dm'}/near/${last.id}`;
  }
  const showContent =
    (userSettings(user).message_content_in_email_notifications as boolean) && settingsOf(realm).message_content_allowed_in_email_notifications;
  const reason = REASONS[first.trigger] ?? 'you were sent messages';
  const settingsLink = `${base}/#settings/notifications`;
  const textBody = showContent
    ? list.map((m) => `${m.sender_name}:\n${m.content}`).join('\n\n')
    : `${list.length === 1 ? 'A message' : `${list.length} messages`} from ${[...new Set(list.map((m) => m.sender_name))].join(', ')} (content hidden by your settings).`;
  const text = [
    `You have ${list.length === 1 ? 'a message' : `${list.length} messages`} you missed in ${realm.name}:`,
    '',
    textBody,
    '',
    `Reply or read more: ${link}`,
    '',
    `You get this email because ${reason} while you were away. Change which emails you get: ${settingsLink}`,
    '',
  ].join('\n');
  const htmlBody = showContent
    ? list.map((m) => `<div><b>${escapeHtml(m.sender_name)}</b>${m.rendered_content ?? `<p>${escapeHtml(m.content)}</p>`}</div>`).join('\n')
    : `<p>${escapeHtml(textBody)}</p>`;
  const html = [
    `<p>You have ${list.length === 1 ? 'a message' : `${list.length} messages`} you missed in <b>${escapeHtml(realm.name)}</b>:</p>`,
    htmlBody,
    `<p><a href="${escapeHtml(link)}">Reply or read more</a></p>`,
    `<p>You get this email because ${escapeHtml(reason)} while you were away. <a href="${escapeHtml(settingsLink)}">Change which emails you get</a>.</p>`,
  ].join('\n');
  return { to: user.delivery_email, subject, text, html };
}
