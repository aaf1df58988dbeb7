// Sending a message (spec endpoint 1, digest 1.1): where it goes, who may send
// it, what it says, who receives it with which flags, and the events.

import { sql } from 'kysely';
import type { Hooked, Services } from '../../services.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import type { Channel } from '../../channels/tables.ts';
import { transactAs, type ActionContext, type Tx } from '../../db/transact.ts';
import { NOTIFICATION_BOT, systemBot } from '../../users/system-bots.ts';
import type { Notice } from '../../notification_bot/index.ts';
import { ApiError, badRequest, missingArgument } from '../../http/errors.ts';
import { escapeHtml } from '../../markdown/util.ts';
import { prerender, renderMarkdown, type Rendered } from '../../rendering/index.ts';
import { queueLinkPreviews } from '../../previews/queue.ts';
import { claimAttachments } from '../../uploads/claims.ts';
import type { RenderResult } from '../../markdown/index.ts';
import { settingsOf } from '../../realm/queries.ts';
import { userSettings } from '../../users/settings.ts';
import { accessibleUsers, canAccess, getUserByEmail } from '../../users/queries.ts';
import { channelViewer, channelViewerAnd, hasContentAccess, holdsChannelPermission, holdsRealmPermission, type ChannelViewer } from '../../channels/access.ts';
import { activeSubscription } from '../../channels/queries.ts';
import { emitChannelUpdate } from '../../channels/events.ts';
import { groupMemberIds } from '../../user_groups/group-setting.ts';
import { checkGroupMentionsAllowed } from '../../user_groups/mentions.ts';
import { FLAG_BITS } from '../flags/flags.ts';
import { channelAddress, directAddress, normalizeContent, normalizeTopic } from '../validation.ts';
import { channelRecipientColumn, channelRecipientId, dmRecipientId } from './recipients.ts';
import { watchUserAccess } from '../../users/access-changes.ts';
import { setVisibilityPolicy, visibilityPolicy, VISIBILITY, type VisibilityPolicy } from '../topics/user-topics.ts';
import { emitNewMessage } from '../events.ts';
import { FORMATTED_COLUMNS } from '../format.ts';
import { countChannelMessage } from './channel-stats.ts';
import { intArray, isRowId, isStorableText } from '../../db/ids.ts';
import { mutersAmong, mutesSender } from '../../muted_users/queries.ts';
import { alertedBy, alertWordsOf, alertWordsOfUser } from '../../alert_words/matching.ts';
import { attachWidget } from '../submessages/submessages.ts';
import { checkDirectMessagePolicy } from '../access.ts';
import { copyWithoutFlags, reachedNow, type IdleReach } from '../soft-deactivation.ts';

export interface SendRequest {
  type: 'stream' | 'private';
  to: string | undefined;
  topic: string | undefined;
  content: string;
  queue_id?: string;
  local_id?: string;
  read_by_sender?: boolean;
  clientName: string;
}

/** Above this many subscribers (or topic participants), wildcard mentions need permission. */
export const WILDCARD_MENTION_THRESHOLD = 15;

/** Clients whose users read what they send (digest 1.1). */
const READING_CLIENTS = ['zulipandroid', 'zulipios', 'zulipdesktop', 'zulipmobile', 'zulipelectron', 'zulipterminal', 'snipe', 'website', 'ios', 'android'];

export function channelDoesNotExistError(address: { name: string } | { id: number }): ApiError {
  if ('id' in address) {
    return new ApiError('STREAM_DOES_NOT_EXIST', `Channel with ID '${address.id}' does not exist`, { data: { stream_id: address.id } });
  }
  return new ApiError('STREAM_DOES_NOT_EXIST', `Channel '${escapeHtml(address.name)}' does not exist`, { data: { stream: address.name } });
}

/** The channel's effective topics policy (inherit = the organization's). */
export function topicsPolicyOf(realm: Realm, channel: Channel): string {
  if (channel.topics_policy !== 'inherit') return channel.topics_policy;
  const settings = settingsOf(realm);
  return settings.mandatory_topics ? 'disable_empty_topic' : settings.topics_policy;
}

export function checkTopicAllowed(realm: Realm, channel: Channel, topic: string): void {
  const policy = topicsPolicyOf(realm, channel);
  if (policy === 'disable_empty_topic' && topic === '') {
    throw badRequest('Sending messages to the general chat topic is not allowed in this channel.');
  }
  if (policy === 'empty_topic_only' && topic !== '') throw badRequest('Only the general chat topic is allowed in this channel.');
}

/** Who may post in a channel (can_send_message_group), and reach it at all (`viaOwner`: a bot whose owner is subscribed). */
export function checkCanPost(viewer: ChannelViewer, channel: Channel, viaOwner = false): void {
  if (channel.is_archived || !(viaOwner || hasContentAccess(viewer, channel))) throw badRequest(`Not authorized to send to channel '${channel.name}'`);
  if (!holdsChannelPermission(viewer, channel, 'can_send_message_group')) throw badRequest('You do not have permission to post in this channel.');
}

/**
 * The sender as a channel viewer and the channel `to` names, checked, and the channel's recipient row
 * (null before its first message), read in one round trip. That read takes the channel's key-share
 * lock as channelRecipientId does (see there): before the send reads the channel's subscribers.
 */
async function resolveChannel(
  tx: Tx,
  realm: Realm,
  sender: User,
  to: string | undefined,
): Promise<{ viewer: ChannelViewer; channel: Channel; recipientId: number | null }> {
  if (to === undefined) throw badRequest('Missing channel');
  const address = channelAddress(to);
  const ref =
    'id' in address
      ? { id: isRowId(address.id) ? address.id : null, name: null }
      : { id: null, name: isStorableText(address.name.trim()) ? address.name.trim() : null };
  const { viewer, channel, also: recipientId } = await channelViewerAnd(tx, realm, sender, ref, channelRecipientColumn);
  if (!channel) throw channelDoesNotExistError(address);
  checkCanPost(viewer, channel, await ownerSubscribed(tx, viewer, channel));
  return { viewer, channel, recipientId };
}

/** Bots may send to any channel their owner is subscribed to (the reference's access_stream_for_send_message). */
async function ownerSubscribed(tx: Tx, viewer: ChannelViewer, channel: Channel): Promise<boolean> {
  const ownerId = viewer.user.is_bot ? viewer.user.bot_owner_id : null;
  if (ownerId === null || hasContentAccess(viewer, channel)) return false;
  const sub = await tx
    .selectFrom('subscriptions')
    .select('user_id')
    .where('user_id', '=', ownerId)
    .where('channel_id', '=', channel.id)
    .where('active', '=', true)
    .executeTakeFirst();
  return sub !== undefined;
}

async function resolveDirectRecipients(ctx: ActionContext<Hooked, User>, to: string | undefined): Promise<User[]> {
  const { svc, tx, realm, actor: sender } = ctx;
  if (to === undefined) throw missingArgument('to');
  const address = directAddress(to);
  const access = await accessibleUsers(svc, tx, realm, sender);
  const users: User[] = [];
  if ('ids' in address) {
    const rows = await tx
      .selectFrom('users')
      .selectAll()
      .where('realm_id', '=', realm.id)
      .where('id', '=', sql<number>`any(${intArray(address.ids)})`)
      .execute();
    for (const id of address.ids) {
      const user = rows.find((u) => u.id === id);
      if (!user || !canAccess(access, id)) throw badRequest(`Invalid user ID ${id}`);
      users.push(user);
    }
  } else {
    for (const email of address.emails) {
      const user = await getUserByEmail(tx, realm.id, email);
      if (!user || !canAccess(access, user.id)) throw badRequest(`Invalid email '${email}'`);
      users.push(user);
    }
  }
  for (const user of users) if (!user.is_active && !user.is_bot) throw badRequest(`'${user.email}' is no longer using Confab.`);
  return users;
}

/** The topic normalized, or undefined where normalizing refuses it (the send refuses it in its own order). */
function validTopic(raw: string): string | undefined {
  try {
    return normalizeTopic(raw);
  } catch {
    return undefined;
  }
}

/** Users who took part in a topic: those a topic wildcard mention reaches. */
async function topicParticipants(tx: Tx, channelId: number, topic: string): Promise<Set<number>> {
  const rows = await tx
    .selectFrom('messages')
    .select('sender_id')
    .distinct()
    .where('channel_id', '=', channelId)
    .where((eb) => eb(eb.fn('lower', ['topic']), '=', topic.toLowerCase()))
    .execute();
  return new Set(rows.map((r) => r.sender_id));
}

/** Members of the groups a message notifies; refuses groups the sender may not mention. */
async function mentionedGroupMembers(tx: Tx, viewer: ChannelViewer, groupIds: number[]): Promise<Set<number>> {
  await checkGroupMentionsAllowed(tx, viewer.user, groupIds);
  const members = new Set<number>();
  for (const groupId of groupIds) for (const id of await groupMemberIds(tx, groupId)) members.add(id);
  return members;
}

/**
 * The policy a send changes for the sender (or a mentioned user), if any (digest 1.1).
 * `state`: the user's subscription and topic policy as the send read them (undefined: not subscribed, read here).
 */
async function automaticPolicy(
  tx: Tx,
  user: Participant,
  state: InChannel | undefined,
  channel: Channel,
  topic: string,
  reason: { sent: boolean; initiated: boolean; mentioned: boolean },
): Promise<VisibilityPolicy | undefined> {
  const s = userSettings(user);
  const applies = (policy: unknown) => (policy === 1 || policy === 2 ? reason.sent : policy === 3 ? reason.initiated : false);
  const follow = (reason.sent && applies(s.automatically_follow_topics_policy)) || (reason.mentioned && s.automatically_follow_topics_where_mentioned);
  const unmute = reason.sent && applies(s.automatically_unmute_topics_in_muted_streams_policy);
  // Neither policy applies: nothing to read.
  if (!follow && !unmute) return undefined;
  const current = state ? state.topic_policy : await visibilityPolicy(tx, user.id, channel.id, topic);
  if (current === VISIBILITY.FOLLOWED) return undefined;
  if (follow) return VISIBILITY.FOLLOWED;
  if (current === VISIBILITY.UNMUTED) return undefined;
  const muted = state ? state.is_muted : (await activeSubscription(tx, user.id, channel.id))?.is_muted;
  return muted ? VISIBILITY.UNMUTED : undefined;
}

/** A channel recipient's own settings there: their subscription's (null: the account-wide default) and their policy for the topic. */
export interface InChannel {
  email_notifications: boolean | null;
  wildcard_mentions_notify: boolean | null;
  is_muted: boolean;
  topic_policy: VisibilityPolicy;
}

/**
 * What a send needs of each recipient: who they are and the settings that decide their notices and follows
 * (`inChannel`: set for every recipient of a channel message, read with them).
 */
export type Participant = Pick<User, 'id' | 'role' | 'is_active' | 'is_bot' | 'settings' | 'timezone' | 'long_term_idle'> & {
  inChannel?: InChannel;
};

/** A message a user sent, as the hooks of higher domains see it (outgoing webhooks, missed-message emails). */
export interface SentMessage {
  realm: Realm;
  sender: User;
  messageId: number;
  channel: Channel | undefined;
  topic: string;
  participants: Participant[];
  /** Users the content mentions by name (not through groups or wildcards). */
  mentionedUserIds: readonly number[];
  /** Each participant's flags from the start (FLAG_BITS: read, mentions...). */
  flags: ReadonlyMap<number, number>;
}

/** Runs in the send's transaction (see wiring.ts). */
export type MessageSentHook = (tx: Tx, sent: SentMessage) => Promise<void>;

export interface SendResult {
  id: number;
  automatic_new_visibility_policy?: number;
}

export async function sendMessage(svc: Services, realm: Realm, sender: User, req: SendRequest): Promise<SendResult> {
  if (req.queue_id !== undefined && req.local_id === undefined) throw missingArgument('local_id');
  // Rendering is slow: done before the transaction opens (prerender checks it again inside).
  // The topic's links come from the same read of the linkifiers (a topic refused is refused inside).
  const topic = req.type === 'stream' && req.topic !== undefined ? validTopic(req.topic) : undefined;
  const prerendered = await prerender(svc, { realm, content: normalizeContent(req.content), author: sender, onFailure: 'error', topic });
  return transactAs(svc, realm, sender, (ctx) => sendWithin(ctx, req, prerendered));
}

/**
 * A send inside the caller's transaction, by `ctx.actor`, with every check POST /messages makes
 * (the scheduler delivers through it, and marks the delivery in the same transaction).
 */
export async function sendWithin(ctx: ActionContext<Services, User>, req: SendRequest, rendered?: () => Rendered): Promise<SendResult> {
  const { svc, tx, emit, realm, actor: sender } = ctx;
  const content = normalizeContent(req.content);
  let topic = '';
  if (req.type === 'stream') {
    if (req.topic === undefined) throw badRequest('Missing topic');
    topic = normalizeTopic(req.topic);
  }
  {
    let viewer: ChannelViewer;
    let channel: Channel | undefined;
    let participants: Participant[] | undefined;
    let recipientId: number;
    if (req.type === 'stream') {
      let known: number | null;
      ({ viewer, channel, recipientId: known } = await resolveChannel(tx, realm, sender, req.to));
      checkTopicAllowed(realm, channel, topic);
      recipientId = known ?? (await channelRecipientId(tx, realm.id, channel.id));
      // Read by deliver, once the rendering says which idle subscribers the message may need.
      participants = undefined;
    } else {
      viewer = await channelViewer(tx, realm, sender);
      const recipients = await resolveDirectRecipients(ctx, req.to);
      const users = [...new Map([sender, ...recipients].map((u) => [u.id, u])).values()];
      participants = users;
      // A first conversation lets limited participants (can_access_all_users_group) see each other.
      const access = await watchUserAccess(svc, tx, realm, async () => users.map((u) => u.id));
      recipientId = await dmRecipientId(
        tx,
        realm.id,
        users.map((u) => u.id),
      );
      await checkDirectMessagePolicy(tx, viewer, users, recipientId);
      await access.announce(emit);
    }
    const readBySender = req.read_by_sender ?? READING_CLIENTS.includes(req.clientName.toLowerCase());
    const delivered = await deliver(ctx, viewer, {
      channel,
      topic,
      participants,
      recipientId,
      content,
      rendered,
      client: req.clientName,
      readBy: readBySender ? [sender.id] : [],
      localEcho: req.queue_id !== undefined && req.local_id !== undefined ? { queueId: req.queue_id, localId: req.local_id } : undefined,
    });
    const { message, flags, mentionedUserIds, firstInTopic } = delivered;
    participants = delivered.participants;

    for (const hook of svc.hooks.messageSent) await hook(tx, { realm, sender, messageId: message.id, channel, topic, participants, mentionedUserIds, flags });
    const result: SendResult = { id: message.id };
    if (channel) {
      // The first message of a topic: its sender initiated the topic.
      const mine = await automaticPolicy(tx, sender, participants.find((u) => u.id === sender.id)?.inChannel, channel, topic, {
        sent: true,
        initiated: firstInTopic,
        mentioned: false,
      });
      if (mine !== undefined) {
        await setVisibilityPolicy(ctx, { userId: sender.id, channelId: channel.id, topic, policy: mine });
        result.automatic_new_visibility_policy = mine;
      }
      for (const user of participants) {
        if (user.id === sender.id || !((flags.get(user.id) ?? 0) & FLAG_BITS.mentioned)) continue;
        const theirs = await automaticPolicy(tx, user, user.inChannel, channel, topic, { sent: false, initiated: false, mentioned: true });
        if (theirs !== undefined) await setVisibilityPolicy(ctx, { userId: user.id, channelId: channel.id, topic, policy: theirs });
      }
    }
    return result;
  }
}

/** A channel's recipients as the send reads them, with who muted the sender and their alert words (no read of their own). */
interface ChannelRecipients {
  participants: Participant[];
  /** Long-term idle subscribers who get a row only if their flags are not 0. */
  copyIfFlagged: Set<number>;
  muters: number[];
  alertWords: { user_id: number; word: string }[];
}

/**
 * A channel message reaches its subscribers only: a sender who is not one keeps no copy (as the reference).
 * The active subscribers (as subscriberIds) but the long-term idle it cannot need (soft-deactivation.ts),
 * with what the send and its hooks need of them (their subscription's settings, their policy for the
 * topic, whether they muted the sender, their alert words), in one read.
 */
async function channelParticipants(tx: Tx, reach: IdleReach): Promise<ChannelRecipients> {
  const rows = await tx
    .selectFrom('subscriptions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .leftJoin('user_topics as t', (join) =>
      join.onRef('t.user_id', '=', 's.user_id').onRef('t.channel_id', '=', 's.channel_id').on(sql<string>`lower(t.topic)`, '=', reach.topic.toLowerCase()),
    )
    .select([
      'u.id',
      'u.role',
      'u.is_active',
      'u.is_bot',
      'u.settings',
      'u.timezone',
      'u.long_term_idle',
      's.email_notifications',
      's.wildcard_mentions_notify',
      's.is_muted',
      't.visibility_policy',
      copyWithoutFlags(reach).as('copy_without_flags'),
      mutesSender(reach.senderId).as('mutes_sender'),
      alertWordsOfUser.as('alert_words'),
    ])
    .where('s.channel_id', '=', reach.channelId)
    .where('s.active', '=', true)
    .where('u.is_active', '=', true)
    .where(reachedNow(reach))
    .orderBy('u.id')
    .execute();
  const read: ChannelRecipients = { participants: [], copyIfFlagged: new Set(), muters: [], alertWords: [] };
  for (const { copy_without_flags, mutes_sender, alert_words, email_notifications, wildcard_mentions_notify, is_muted, visibility_policy, ...user } of rows) {
    if (!copy_without_flags) read.copyIfFlagged.add(user.id);
    if (mutes_sender) read.muters.push(user.id);
    for (const word of alert_words ?? []) read.alertWords.push({ user_id: user.id, word });
    const topic_policy = (visibility_policy ?? VISIBILITY.INHERIT) as VisibilityPolicy;
    read.participants.push({ ...user, inChannel: { email_notifications, wildcard_mentions_notify, is_muted, topic_policy } });
  }
  return read;
}

/** Whom a channel message may need among the long-term idle: whom it names (soft-deactivation.ts). */
async function idleReach(tx: Tx, sender: User, channel: Channel, topic: string, rendered: RenderResult, d: Delivery): Promise<IdleReach> {
  const { mentions } = rendered;
  const named = [...mentions.user_ids, ...d.readBy, ...(d.starredFor ?? [])];
  for (const groupId of mentions.group_ids) named.push(...(await groupMemberIds(tx, groupId)));
  return {
    realmId: channel.realm_id,
    channelId: channel.id,
    topic,
    senderId: sender.id,
    named,
    everyone: mentions.stream_wildcard,
    topicWildcard: mentions.topic_wildcard,
  };
}

/** A message's columns but its search vector (written by the database, read by search only). */
const MESSAGE_COLUMNS = [...FORMATTED_COLUMNS, 'realm_id', 'has_link', 'has_image', 'has_attachment'] as const;

interface Delivery {
  channel: Channel | undefined;
  topic: string;
  /** Everyone who gets the message (event, and a row unless long-term idle); a channel's: read by deliver. */
  participants?: Participant[];
  recipientId: number;
  content: string;
  /** The content rendered before the transaction (messages users write); else rendered here. */
  rendered?: () => Rendered;
  client: string;
  /** Who has it read from the start. */
  readBy: number[];
  /** Who has it starred from the start. */
  starredFor?: number[];
  localEcho?: { queueId: string; localId: string };
}

/**
 * What every message goes through once its place and readers are known:
 * rendering, mention flags, the rows, the channel's counters and the events.
 */
async function deliver(ctx: ActionContext, viewer: ChannelViewer, d: Delivery) {
  const { svc, tx } = ctx;
  const { realm, user: sender } = viewer;
  const { channel, topic } = d;
  const rendered = d.rendered ? d.rendered() : await renderMarkdown(svc, { realm, content: d.content, author: sender, db: tx, onFailure: 'error', topic });
  const read = d.participants ? undefined : await channelParticipants(tx, await idleReach(tx, sender, channel!, topic, rendered, d));
  const participants = read?.participants ?? d.participants!;
  const copyIfFlagged = read?.copyIfFlagged ?? new Set<number>();
  const recipientIds = new Set(participants.map((u) => u.id));
  const flags = await mentionFlags(tx, viewer, channel, topic, rendered, recipientIds);
  for (const id of d.readBy) if (recipientIds.has(id)) flags.set(id, (flags.get(id) ?? 0) | FLAG_BITS.read);
  for (const id of d.starredFor ?? []) if (recipientIds.has(id)) flags.set(id, (flags.get(id) ?? 0) | FLAG_BITS.starred);
  // A channel's were read with its recipients.
  const { muters, alerted } = read
    ? { muters: read.muters, alerted: alertedBy(d.content, read.alertWords) }
    : await mutersAndAlerted(tx, realm.id, sender.id, d.content, [...recipientIds]);
  for (const id of muters) flags.set(id, (flags.get(id) ?? 0) | FLAG_BITS.read);
  for (const id of alerted) flags.set(id, (flags.get(id) ?? 0) | FLAG_BITS.has_alert_word);

  const inChannel = channel?.id ?? null;
  const {
    first_in_channel: firstInChannel,
    first_in_topic: firstInTopic,
    ...message
  } = await tx
    .insertInto('messages')
    .values({
      realm_id: realm.id,
      sender_id: sender.id,
      recipient_id: d.recipientId,
      channel_id: channel?.id ?? null,
      topic,
      content: d.content,
      rendered_content: rendered.html,
      date_sent: new Date(),
      client: d.client,
      is_me_message: rendered.is_me_message,
      has_link: rendered.has_link,
      has_image: rendered.has_image,
      has_attachment: rendered.has_attachment,
      last_edit_at: null,
      last_moved_at: null,
      edit_history: null,
    })
    // The statement does not see its own row: these say whether messages were there before it.
    .returning([
      ...MESSAGE_COLUMNS,
      sql<boolean>`${inChannel}::integer is not null and not exists (select 1 from messages m where m.channel_id = ${inChannel}::integer)`.as(
        'first_in_channel',
      ),
      sql<boolean>`${inChannel}::integer is not null and not exists (select 1 from messages m where m.channel_id = ${inChannel}::integer and lower(m.topic) = ${topic.toLowerCase()})`.as(
        'first_in_topic',
      ),
    ])
    .executeTakeFirstOrThrow();
  // Long-term idle subscribers get their copy when they return, unless they need it now.
  const ids = [...recipientIds].filter((id) => !copyIfFlagged.has(id) || flags.get(id));
  // Two array parameters, however many recipients (one bind parameter each would overflow 65,535).
  const copies = tx
    .insertInto('user_messages')
    .columns(['realm_id', 'user_id', 'message_id', 'flags'])
    .expression(
      sql`select ${realm.id}::integer, u.id, ${message.id}::integer, u.flags
          from unnest(${intArray(ids)}, ${sql.val(ids.map((id) => flags.get(id) ?? 0))}::int[]) as u(id, flags)`,
    );
  // A channel's day count goes with the copies, one round trip: its row lock is then held to the
  // commit (consecutive messages lock different rows).
  if (channel) await countChannelMessage(ids.length > 0 ? tx.with('copies', () => copies) : tx, realm.id, channel.id, message.id, message.date_sent);
  else if (ids.length > 0) await copies.execute();
  await queueLinkPreviews(tx, realm, message.id, d.content, rendered);
  if (rendered.attachment_path_ids.length > 0) {
    message.has_attachment = await claimAttachments({ ...ctx, actor: sender }, message.id, rendered.attachment_path_ids);
  }
  const submessages = await attachWidget(tx, message);

  const topicLinks = rendered.topicLinks?.topic === topic ? rendered.topicLinks.links : undefined;
  await emitNewMessage(ctx, { message, sender, recipients: participants, flags, channel, submessages, topicLinks, localEcho: d.localEcho });
  if (channel && firstInChannel) await emitChannelUpdate(ctx, channel, 'first_message_id', message.id);
  return { message, flags, mentionedUserIds: rendered.mentions.user_ids, firstInTopic, participants };
}

/** Which recipients muted the sender (their copy arrives read) and which have an alert word in the content: one round trip. */
async function mutersAndAlerted(tx: Tx, realmId: number, senderId: number, content: string, ids: number[]): Promise<{ muters: number[]; alerted: number[] }> {
  if (ids.length === 0) return { muters: [], alerted: [] };
  const { rows } = await sql<{ muters: number[]; words: { user_id: number; word: string }[] | null }>`
    select array(${mutersAmong(tx, senderId, ids)}) as muters, (select json_agg(w) from (${alertWordsOf(tx, realmId, ids)}) w) as words`.execute(tx);
  return { muters: rows[0].muters, alerted: alertedBy(content, rows[0].words ?? []) };
}

/**
 * A message from Notification Bot, or another system bot the notice names
 * (notification_bot/), in the caller's transaction: no permission applies to it (the action that causes it has
 * checked its own).
 */
export async function sendInternalMessage(ctx: ActionContext, notice: Notice): Promise<number> {
  const { tx, realm } = ctx;
  const { to, content } = notice;
  const bot = await systemBot(tx, realm.id, notice.from ?? NOTIFICATION_BOT);
  const viewer = await channelViewer(tx, realm, bot);
  let delivery: Omit<Delivery, 'content' | 'client' | 'readBy'>;
  if ('channel' in to) {
    const { channel } = to;
    // A channel that keeps to the general chat topic keeps to it for notices too.
    const topic = topicsPolicyOf(realm, channel) === 'empty_topic_only' ? '' : normalizeTopic(to.topic);
    const recipientId = await channelRecipientId(tx, realm.id, channel.id);
    delivery = { channel, topic, recipientId };
  } else {
    const participants = [...new Map([bot, to.user].map((u) => [u.id, u])).values()];
    const recipientId = await dmRecipientId(
      tx,
      realm.id,
      participants.map((u) => u.id),
    );
    delivery = { channel: undefined, topic: '', participants, recipientId };
  }
  const { message } = await deliver(ctx, viewer, {
    ...delivery,
    content: normalizeContent(content),
    client: 'Internal',
    readBy: [bot.id, ...(notice.readBy ?? [])],
    starredFor: notice.starredFor,
  });
  return message.id;
}

/** Flags each recipient gets from what the message mentions; refuses wildcards the sender may not use. */
export async function mentionFlags(
  tx: Tx,
  viewer: ChannelViewer,
  channel: Channel | undefined,
  topic: string,
  rendered: RenderResult,
  recipientIds: Set<number>,
): Promise<Map<number, number>> {
  const { user: sender } = viewer;
  const flags = new Map<number, number>();
  const add = (userId: number, bit: number) => {
    if (recipientIds.has(userId)) flags.set(userId, (flags.get(userId) ?? 0) | bit);
  };
  const { mentions } = rendered;
  for (const id of mentions.user_ids) add(id, FLAG_BITS.mentioned);
  if (mentions.group_ids.length > 0) {
    for (const id of await mentionedGroupMembers(tx, viewer, mentions.group_ids)) add(id, FLAG_BITS.mentioned);
  }
  const mayMentionMany = holdsRealmPermission(viewer, 'can_mention_many_users_group');
  if (mentions.stream_wildcard) {
    if (channel && recipientIds.size > WILDCARD_MENTION_THRESHOLD && !mayMentionMany) {
      throw new ApiError('STREAM_WILDCARD_MENTION_NOT_ALLOWED', 'You do not have permission to use channel wildcard mentions in this channel.');
    }
    for (const id of recipientIds) add(id, FLAG_BITS.stream_wildcard_mentioned);
  }
  if (mentions.topic_wildcard) {
    const participants = channel ? await topicParticipants(tx, channel.id, topic) : new Set(recipientIds);
    participants.add(sender.id);
    if (channel && participants.size > WILDCARD_MENTION_THRESHOLD && !mayMentionMany) {
      throw new ApiError('TOPIC_WILDCARD_MENTION_NOT_ALLOWED', 'You do not have permission to use topic wildcard mentions in this topic.');
    }
    for (const id of participants) add(id, FLAG_BITS.topic_wildcard_mentioned);
  }
  return flags;
}
