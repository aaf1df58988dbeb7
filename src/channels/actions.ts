// Every change to channels and subscriptions (spec endpoints 2, 19 and the
// channel API of digest section 2). Each action checks permissions, writes in
// one transaction and emits its events after the commit.

import type { Hooked, Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Channel, Subscription } from './tables.ts';
import { transact, type Emit, type Tx } from '../db/transact.ts';
import { isRowId } from '../db/ids.ts';
import { ApiError, badRequest, insufficientPermission, mustBeAdmin, mustBeOwner } from '../http/errors.ts';
import { ROLE, isAdmin, isGuest, isOwner } from '../users/roles.ts';
import { getUser, getUserByEmail } from '../users/queries.ts';
import { settingsOf } from '../realm/queries.ts';
import { prerenderHtml, renderHtml } from '../rendering/index.ts';
import {
  dropIfAnonymous,
  expectationMismatch,
  groupSettingValue,
  settingValueEquals,
  storeGroupSettingValue,
  systemGroupIds,
  type GroupSettingChange,
  type GroupSettingValue,
} from '../user_groups/group-setting.ts';
import { CHANNEL_PERMISSION_SETTINGS, rulesOf, type ChannelPermission } from '../user_groups/permission-settings.ts';
import type { SystemGroupName } from '../user_groups/system-groups.ts';
import {
  canAddSubscribers,
  canAdminister,
  canRemoveSubscribers,
  canSubscribeSelf,
  channelViewer,
  hasContentAccess,
  hasMetadataAccess,
  holdsRealmPermission,
  type ChannelViewer,
} from './access.ts';
import { accessChannel, accessChannelByName, channelAudience, channelSettingsIn, defaultChannelIds, getChannelByName, subscriberIds } from './queries.ts';
import { settingValuesNaming } from '../user_groups/queries.ts';
import { watchUserAccess } from '../users/access-changes.ts';
import { CHANNEL_PERMISSIONS, formatChannels, pickColor } from './format.ts';
import { HEX_COLOR, checkChannelDescription, checkChannelName, type TopicsPolicy } from './validation.ts';
import {
  MAX_BULK_NEW_SUBSCRIPTION_MESSAGES,
  accessChangedNotice,
  archivedNotice,
  channelCreatedNotice,
  channelRenamedNotice,
  descriptionChangedNotice,
  newChannelsAnnouncement,
  postingPermissionChangedNotice,
  retentionChangedNotice,
  subscribedYouNotice,
  topicsPolicyChangedNotice,
  unarchivedNotice,
} from './notices.ts';
import { sendNotices, type Notice } from '../notification_bot/index.ts';
import { emitChannelUpdate, emitChannelsCreated, emitChannelsGone, emitPeerChanges, emitSubscriptionsAdded, emitUnarchived } from './events.ts';

/** The settings a channel can be created with (spec endpoint 2, FL 417 /channels/create). */
export interface ChannelSettings {
  invite_only?: boolean;
  is_web_public?: boolean;
  is_default_stream?: boolean;
  history_public_to_subscribers?: boolean | null;
  message_retention_days?: number | null;
  topics_policy?: TopicsPolicy;
  folder_id?: number | null;
  groups?: Partial<Record<ChannelPermission, GroupSettingValue>>;
}

// ---------------------------------------------------------------- creating

/** Checks and inserts one channel; the caller emits `stream/create`. */
export async function insertChannel(
  html: (text: string) => string,
  tx: Tx,
  viewer: ChannelViewer,
  name: string,
  description: string,
  s: ChannelSettings,
): Promise<Channel> {
  const { realm, user } = viewer;
  const inviteOnly = s.invite_only ?? false;
  const webPublic = s.is_web_public ?? false;
  if (webPublic && inviteOnly) throw badRequest('Invalid parameters');
  if (webPublic) {
    if (!settingsOf(realm).enable_spectator_access) throw badRequest('Web-public channels are not enabled.');
    if (!holdsRealmPermission(viewer, 'can_create_web_public_channel_group')) throw insufficientPermission();
  } else if (!holdsRealmPermission(viewer, inviteOnly ? 'can_create_private_channel_group' : 'can_create_public_channel_group')) {
    throw insufficientPermission();
  }
  // Default channels are the administrators' choice, however the channel comes to exist (as the reference).
  if (s.is_default_stream && !isAdmin(user)) throw insufficientPermission();
  if (s.is_default_stream && inviteOnly) throw badRequest('A default channel cannot be private.');
  if (s.message_retention_days !== undefined && s.message_retention_days !== null && !isOwner(user)) throw mustBeOwner();
  if (s.topics_policy !== undefined && s.topics_policy !== 'inherit' && !holdsRealmPermission(viewer, 'can_set_topics_policy_group')) {
    throw insufficientPermission();
  }
  if (DELETE_POLICY_SETTINGS.some((p) => s.groups?.[p] !== undefined)) checkDeletePolicyPermission(viewer);
  if (s.folder_id !== undefined && s.folder_id !== null) await checkFolder(tx, realm.id, s.folder_id);
  // Public channels always share their history; private ones by choice (default: no, as the reference).
  const historyPublic = !inviteOnly || (s.history_public_to_subscribers ?? false);

  const system = await systemGroupIds(tx, realm.id);
  const groupIds = {} as Record<`${ChannelPermission}_id`, number>;
  for (const p of CHANNEL_PERMISSIONS) {
    const given = s.groups?.[p];
    const d = CHANNEL_PERMISSION_SETTINGS[p].default;
    const value: GroupSettingValue =
      given ?? (d === 'creator' ? { direct_members: [user.id], direct_subgroups: [] } : system[d as SystemGroupName]);
    groupIds[`${p}_id`] = await storeGroupSettingValue(tx, realm.id, value, p, rulesOf(CHANNEL_PERMISSION_SETTINGS[p]));
  }
  const channel = await tx
    .insertInto('channels')
    .values({
      realm_id: realm.id,
      name,
      description,
      rendered_description: html(description),
      date_created: new Date(),
      creator_id: user.id,
      invite_only: inviteOnly,
      is_web_public: webPublic,
      history_public_to_subscribers: historyPublic,
      message_retention_days: s.message_retention_days ?? null,
      topics_policy: s.topics_policy ?? 'inherit',
      folder_id: s.folder_id ?? null,
      ...groupIds,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (s.is_default_stream) await tx.insertInto('default_channels').values({ realm_id: realm.id, channel_id: channel.id }).execute();
  return channel;
}

/**
 * Users who can no longer see channels are told they are gone, and their former
 * subscriptions to them are forgotten: should the channels reappear, they come
 * back as never subscribed, which is what their clients will have recorded.
 */
async function loseSight(tx: Tx, emit: Emit, realm: Realm, channels: Channel[], users: number[]): Promise<void> {
  if (channels.length === 0 || users.length === 0) return;
  await tx
    .deleteFrom('subscriptions')
    .where('channel_id', 'in', channels.map((c) => c.id))
    .where('user_id', 'in', users)
    .where('active', '=', false)
    .execute();
  emitChannelsGone(emit, realm, channels, users);
}

/** Per-channel message deletion settings: only for `can_set_delete_message_policy_group` (as the reference, FL 407). */
const DELETE_POLICY_SETTINGS: ChannelPermission[] = ['can_delete_any_message_group', 'can_delete_own_message_group'];

function checkDeletePolicyPermission(viewer: ChannelViewer): void {
  if (!holdsRealmPermission(viewer, 'can_set_delete_message_policy_group')) throw insufficientPermission();
}

async function checkFolder(tx: Tx, realmId: number, folderId: number): Promise<void> {
  if (!isRowId(folderId)) throw badRequest('Invalid channel folder ID');
  const folder = await tx.selectFrom('channel_folders').select('id').where('realm_id', '=', realmId).where('id', '=', folderId).executeTakeFirst();
  if (!folder) throw badRequest('Invalid channel folder ID');
}

// ---------------------------------------------------------------- subscribing

interface Pair {
  user: User;
  channel: Channel;
}

/**
 * Subscribes users to channels (no permission checks: callers decided), and
 * emits subscription/add and peer_add. Returns which pairs were new.
 */
export async function addSubscriptions(
  svc: Hooked,
  tx: Tx,
  emit: Emit,
  realm: Realm,
  pairs: Pair[],
  /** Colors asked for new subscriptions, by channel id (`subscriptions[].color`). */
  chosenColors?: Map<number, string>,
): Promise<{ added: Pair[]; already: Pair[] }> {
  // Limited users (can_access_all_users_group) meet the channel's subscribers, and they them.
  const access = await watchUserAccess(svc, tx, realm, async () => [
    ...pairs.map((p) => p.user.id),
    ...[...(await subscriberIds(tx, [...new Set(pairs.map((p) => p.channel.id))])).values()].flat(),
  ]);
  // Users who could not see a channel (private, or public to a guest) learn of it before joining.
  const byChannelPairs = new Map<number, { channel: Channel; users: number[] }>();
  for (const { user, channel } of pairs) {
    const entry = byChannelPairs.get(channel.id) ?? { channel, users: [] };
    entry.users.push(user.id);
    byChannelPairs.set(channel.id, entry);
  }
  for (const { channel, users } of byChannelPairs.values()) {
    const audience = new Set(await channelAudience(tx, realm, channel));
    const newViewers = users.filter((id) => !audience.has(id));
    if (newViewers.length > 0) await emitChannelsCreated(svc, tx, emit, realm, [channel], { newViewers, subscribing: newViewers });
  }
  const added: { user: User; channel: Channel; sub: Subscription }[] = [];
  const already: Pair[] = [];
  const colorsByUser = new Map<number, string[]>();
  for (const { user, channel } of pairs) {
    const existing = await tx.selectFrom('subscriptions').selectAll().where('user_id', '=', user.id).where('channel_id', '=', channel.id).executeTakeFirst();
    if (existing?.active) {
      already.push({ user, channel });
      continue;
    }
    let sub: Subscription;
    if (existing) {
      sub = await tx
        .updateTable('subscriptions')
        .set({ active: true })
        .where('user_id', '=', user.id)
        .where('channel_id', '=', channel.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    } else {
      let colors = colorsByUser.get(user.id);
      if (!colors) {
        colors = (await tx.selectFrom('subscriptions').select('color').where('user_id', '=', user.id).execute()).map((r) => r.color);
        colorsByUser.set(user.id, colors);
      }
      const color = chosenColors?.get(channel.id) ?? pickColor(colors);
      colors.push(color);
      sub = await tx
        .insertInto('subscriptions')
        .values({
          realm_id: realm.id,
          user_id: user.id,
          channel_id: channel.id,
          color,
          desktop_notifications: null,
          audible_notifications: null,
          push_notifications: null,
          email_notifications: null,
          wildcard_mentions_notify: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    }
    added.push({ user, channel, sub });
  }
  await emitSubscriptionsAdded(svc, tx, emit, realm, added);
  const byChannel = new Map<number, { channel: Channel; userIds: number[] }>();
  for (const a of added) {
    const entry = byChannel.get(a.channel.id) ?? { channel: a.channel, userIds: [] };
    entry.userIds.push(a.user.id);
    byChannel.set(a.channel.id, entry);
  }
  await emitPeerChanges(tx, emit, realm, 'peer_add', [...byChannel.values()]);
  await access.announce(emit);
  return { added, already };
}

/** Principals: user ids or emails; unknown or deactivated ones are refused (level 208+). */
async function resolvePrincipals(tx: Tx, realm: Realm, principals: (number | string)[]): Promise<User[]> {
  const users: User[] = [];
  for (const p of principals) {
    const user = typeof p === 'number' ? await getUser(tx, realm.id, p) : await getUserByEmail(tx, realm.id, p);
    if (!user || !user.is_active || user.is_system_bot) throw badRequest('No such user');
    if (!users.some((u) => u.id === user.id)) users.push(user);
  }
  return users;
}

const keyed = (pairs: Pair[]) => {
  const out: Record<string, string[]> = {};
  for (const { user, channel } of pairs) (out[String(user.id)] ??= []).push(channel.name);
  return out;
};

export interface SubscribeRequest extends ChannelSettings {
  subscriptions: { name: string; description?: string; color?: string }[];
  principals?: (number | string)[];
  authorization_errors_fatal: boolean;
  announce: boolean;
  /** Tell users subscribed by someone else (FL 397; the response says whether it did). */
  send_new_subscription_messages?: boolean;
}

/** POST /users/me/subscriptions: subscribes the caller or `principals`, creating channels that do not exist. */
export async function subscribe(svc: Services, realm: Realm, actor: User, req: SubscribeRequest) {
  const html = await descriptionsHtml(svc, realm, req.subscriptions);
  return transact(svc, (tx, emit) => subscribeWithin(svc, tx, emit, realm, actor, req, html));
}

/** The descriptions of the channels a request may create, rendered before its transaction. */
function descriptionsHtml(svc: Services, realm: Realm, subscriptions: SubscribeRequest['subscriptions']) {
  return prerenderHtml(svc, realm, subscriptions.map((s) => () => checkChannelDescription(s.description ?? '')));
}

async function subscribeWithin(
  svc: Services,
  tx: Tx,
  emit: Emit,
  realm: Realm,
  actor: User,
  req: SubscribeRequest,
  html: (text: string) => string,
) {
  const names = req.subscriptions.map((s) => ({
    name: checkChannelName(s.name),
    description: checkChannelDescription(s.description ?? ''),
    color: s.color,
  }));
  const viewer = await channelViewer(tx, realm, actor);
  const targets = req.principals && req.principals.length > 0 ? await resolvePrincipals(tx, realm, req.principals) : [actor];
  const othersIncluded = targets.some((u) => u.id !== actor.id);
  const channels: Channel[] = [];
  const created: Channel[] = [];
  const unauthorized: string[] = [];
  const colors = new Map<number, string>();
  for (const { name, description, color } of names) {
    if (channels.some((c) => c.name.toLowerCase() === name.toLowerCase())) continue;
    const existing = await getChannelByName(tx, realm.id, name);
    if (!existing) {
      const channel = await insertChannel(html, tx, viewer, name, description, req);
      created.push(channel);
      channels.push(channel);
      if (color !== undefined) colors.set(channel.id, color);
      continue;
    }
    const allowed = othersIncluded ? canAddSubscribers(viewer, existing) : canSubscribeSelf(viewer, existing);
    if (allowed) {
      channels.push(existing);
      if (color !== undefined) colors.set(existing.id, color);
    } else if (!hasMetadataAccess(viewer, existing) || !othersIncluded) {
      if (req.authorization_errors_fatal) throw badRequest(`Unable to access channel (${existing.name}).`);
      unauthorized.push(existing.name);
    } else {
      throw insufficientPermission();
    }
  }
  // The creator of a channel may subscribe others to it, whatever the organization's settings.
  await emitChannelsCreated(svc, tx, emit, realm, created);
  if (created.length > 0 && req.is_default_stream) await emitDefaultChannels(tx, emit, realm);
  const pairs = targets.flatMap((user) => channels.map((channel) => ({ user, channel })));
  const { added, already } = await addSubscriptions(svc, tx, emit, realm, pairs, colors);

  // Notification Bot, as the reference: those subscribed by someone else to existing channels
  // (unless too many), then the announcement, then each new channel's first message.
  const notices: Notice[] = [];
  const subscribedUsers = new Set(added.map((a) => a.user.id));
  const tellSubscribers = req.send_new_subscription_messages && subscribedUsers.size <= MAX_BULK_NEW_SUBSCRIPTION_MESSAGES;
  if (tellSubscribers) {
    for (const user of targets) {
      if (user.id === actor.id || user.is_bot) continue;
      const existing = added.filter((a) => a.user.id === user.id && !created.includes(a.channel)).map((a) => a.channel);
      if (existing.length > 0) notices.push(subscribedYouNotice(actor, user, existing));
    }
  }
  if (req.announce) notices.push(...(await newChannelsAnnouncement(tx, realm, actor, created)));
  for (const channel of created) notices.push(channelCreatedNotice(actor, channel));
  await sendNotices(svc, tx, emit, realm, notices);

  return {
    subscribed: keyed(added),
    already_subscribed: keyed(already),
    ...(req.authorization_errors_fatal ? {} : { unauthorized }),
    ...(req.send_new_subscription_messages ? { new_subscription_messages_sent: tellSubscribers } : {}),
  };
}

/** POST /channels/create (FL 417): creates one channel with its first subscribers. */
export async function createChannel(
  svc: Services,
  realm: Realm,
  actor: User,
  req: ChannelSettings & { name: string; description: string; subscribers: number[]; announce: boolean },
): Promise<Channel> {
  const name = checkChannelName(req.name);
  const description = checkChannelDescription(req.description);
  const html = await prerenderHtml(svc, realm, [description]);
  return transact(svc, async (tx, emit) => {
    if (await getChannelByName(tx, realm.id, name)) throw badRequest(`Channel '${name}' already exists`);
    const viewer = await channelViewer(tx, realm, actor);
    const channel = await insertChannel(html, tx, viewer, name, description, req);
    const users = await resolvePrincipals(tx, realm, req.subscribers);
    await emitChannelsCreated(svc, tx, emit, realm, [channel]);
    if (req.is_default_stream) await emitDefaultChannels(tx, emit, realm);
    await addSubscriptions(svc, 
      tx,
      emit,
      realm,
      users.map((user) => ({ user, channel })),
    );
    const notices = req.announce ? await newChannelsAnnouncement(tx, realm, actor, [channel]) : [];
    await sendNotices(svc, tx, emit, realm, [...notices, channelCreatedNotice(actor, channel)]);
    return channel;
  });
}

/** The messages domain marks a left channel's messages read (Services.hooks, wiring.ts). */
export type UnsubscribeHook = (tx: Tx, emit: Emit, realmId: number, userId: number, channelId: number) => Promise<unknown>;

/** DELETE /users/me/subscriptions: `subscriptions` are channel names. */
export async function unsubscribe(svc: Services, realm: Realm, actor: User, names: string[], principals?: (number | string)[]) {
  return transact(svc, (tx, emit) => unsubscribeWithin(svc, tx, emit, realm, actor, names, principals));
}

/** The legacy PATCH /users/me/subscriptions: `add` then `delete`, all or nothing (as the reference). */
export async function changeSubscriptions(svc: Services, realm: Realm, actor: User, add: SubscribeRequest['subscriptions'], remove: string[]) {
  if (add.length === 0 && remove.length === 0) throw badRequest('Nothing to do. Specify at least one of "add" or "delete".');
  const html = await descriptionsHtml(svc, realm, add);
  return transact(svc, async (tx, emit) => {
    const added =
      add.length > 0
        ? await subscribeWithin(svc, tx, emit, realm, actor, { subscriptions: add, authorization_errors_fatal: true, announce: false }, html)
        : { subscribed: {}, already_subscribed: {} };
    const removed = remove.length > 0 ? await unsubscribeWithin(svc, tx, emit, realm, actor, remove) : { removed: [], not_removed: [] };
    return { ...added, ...removed };
  });
}

async function unsubscribeWithin(svc: Hooked, tx: Tx, emit: Emit, realm: Realm, actor: User, names: string[], principals?: (number | string)[]) {
  const viewer = await channelViewer(tx, realm, actor);
  const targets = principals && principals.length > 0 ? await resolvePrincipals(tx, realm, principals) : [actor];
  const channels: Channel[] = [];
  for (const name of names) {
    const channel = await accessChannelByName(tx, viewer, name.trim());
    if (!channels.some((c) => c.id === channel.id)) channels.push(channel);
  }
  if (targets.some((u) => u.id !== actor.id)) {
    for (const c of channels) if (!canRemoveSubscribers(viewer, c)) throw insufficientPermission();
  }
  return removeSubscriptions(svc, tx, emit, realm, targets, channels);
}

async function removeSubscriptions(svc: Hooked, tx: Tx, emit: Emit, realm: Realm, users: User[], channels: Channel[]) {
  // Limited users may stop seeing those they met only in these channels.
  const access = await watchUserAccess(svc, tx, realm, async () => [...(await subscriberIds(tx, channels.map((c) => c.id))).values()].flat());
  const removed: Pair[] = [];
  const notRemoved: Pair[] = [];
  for (const user of users) {
    for (const channel of channels) {
      const r = await tx
        .updateTable('subscriptions')
        .set({ active: false })
        .where('user_id', '=', user.id)
        .where('channel_id', '=', channel.id)
        .where('active', '=', true)
        .executeTakeFirst();
      (r.numUpdatedRows > 0n ? removed : notRemoved).push({ user, channel });
    }
  }
  for (const user of users) {
    const mine = removed.filter((r) => r.user.id === user.id);
    if (mine.length === 0) continue;
    emit(realm.id, { type: 'subscription', op: 'remove', subscriptions: mine.map((r) => ({ name: r.channel.name, stream_id: r.channel.id })) }, [user.id]);
  }
  // Unread messages live only in subscribed channels: leaving marks the channel read (as Zulip does, after
  // telling of the unsubscription),
  // else rejoining would bring old messages back unread.
  for (const r of removed) await svc.hooks.afterUnsubscribe(tx, emit, realm.id, r.user.id, r.channel.id);
  await emitPeerChanges(
    tx,
    emit,
    realm,
    'peer_remove',
    channels.map((channel) => ({ channel, userIds: removed.filter((r) => r.channel.id === channel.id).map((r) => r.user.id) })),
  );
  // A user who lost the only way to see a private channel is told it is gone.
  for (const user of users) {
    const lost: Channel[] = [];
    const viewer = await channelViewer(tx, realm, user);
    for (const r of removed) if (r.user.id === user.id && !hasMetadataAccess(viewer, r.channel)) lost.push(r.channel);
    await loseSight(tx, emit, realm, lost, [user.id]);
  }
  await access.announce(emit);
  return { removed: removed.map((r) => r.channel.name), not_removed: notRemoved.map((r) => r.channel.name) };
}

// ---------------------------------------------------------------- subscription settings

export const SUBSCRIPTION_PROPERTIES = [
  'color',
  'is_muted',
  'in_home_view',
  'pin_to_top',
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'wildcard_mentions_notify',
] as const;

export interface PropertyChange {
  stream_id: number;
  property: string;
  value: unknown;
}

function checkPropertyValue(property: string, value: unknown): string | boolean | null {
  if (property === 'color') {
    if (typeof value !== 'string' || !HEX_COLOR.test(value)) throw badRequest('color is not a valid hex color code');
    return value;
  }
  const nullable = property.endsWith('_notifications') || property === 'wildcard_mentions_notify';
  if (value === null && nullable) return null;
  if (typeof value !== 'boolean') throw badRequest(`${property} is not a boolean`);
  return value;
}

/** POST /users/me/subscriptions/properties (and the legacy single-property PATCH). */
export async function updateSubscriptionProperties(svc: Services, realm: Realm, actor: User, changes: PropertyChange[]) {
  return transact(svc, async (tx, emit) => {
    for (const { stream_id, property, value } of changes) {
      if (!(SUBSCRIPTION_PROPERTIES as readonly string[]).includes(property)) throw badRequest(`Unknown subscription property: ${property}`);
      const checked = checkPropertyValue(property, value);
      if (!isRowId(stream_id)) throw badRequest(`Not subscribed to channel ID ${stream_id}`);
      const sub = await tx
        .selectFrom('subscriptions')
        .selectAll()
        .where('user_id', '=', actor.id)
        .where('channel_id', '=', stream_id)
        .where('active', '=', true)
        .executeTakeFirst();
      if (!sub) throw badRequest(`Not subscribed to channel ID ${stream_id}`);
      // in_home_view is the legacy inverse of is_muted: both names are announced.
      const column = property === 'in_home_view' ? 'is_muted' : property;
      const stored = property === 'in_home_view' ? !checked : checked;
      await tx
        .updateTable('subscriptions')
        .set({ [column]: stored } as Record<string, unknown>)
        .where('user_id', '=', actor.id)
        .where('channel_id', '=', stream_id)
        .execute();
      if (column === 'is_muted') {
        emit(realm.id, { type: 'subscription', op: 'update', stream_id, property: 'in_home_view', value: !stored }, [actor.id]);
        emit(realm.id, { type: 'subscription', op: 'update', stream_id, property: 'is_muted', value: stored }, [actor.id]);
      } else {
        emit(realm.id, { type: 'subscription', op: 'update', stream_id, property, value: stored }, [actor.id]);
      }
    }
    return changes;
  });
}

// ---------------------------------------------------------------- channel settings

export interface ChannelChanges {
  description?: string;
  new_name?: string;
  is_private?: boolean;
  is_web_public?: boolean;
  history_public_to_subscribers?: boolean;
  is_default_stream?: boolean;
  message_retention_days?: number | null;
  topics_policy?: TopicsPolicy;
  folder_id?: number | null;
  is_archived?: boolean;
  groups?: Partial<Record<ChannelPermission, GroupSettingChange>>;
}

export function cannotAdminister(): ApiError {
  return new ApiError('CANNOT_ADMINISTER_CHANNEL', 'You do not have permission to administer this channel.');
}

/**
 * PATCH /streams/{stream_id}: everything in one transaction, events after. Each
 * change that Notification Bot tells of is told once it is written, in the
 * reference's order (access, retention, topics policy, description, name, posting
 * permission).
 */
export async function updateChannel(svc: Services, realm: Realm, actor: User, channelId: number, ch: ChannelChanges): Promise<void> {
  const html = await prerenderHtml(svc, realm, ch.description === undefined ? [] : [() => checkChannelDescription(ch.description!)]);
  await transact(svc, async (tx, emit) => {
    const viewer = await channelViewer(tx, realm, actor);
    let channel = await accessChannel(tx, viewer, channelId);
    if (!canAdminister(viewer, channel)) throw cannotAdminister();
    const tell = (notice: Notice) => sendNotices(svc, tx, emit, realm, [notice]);

    // Unarchiving first: the other changes apply to a live channel.
    if (ch.is_archived === false && channel.is_archived) {
      channel = await setColumns(tx, channel, { is_archived: false });
      await emitChannelUpdate(svc, tx, emit, realm, channel, 'is_archived', false);
      await emitUnarchived(svc, tx, emit, realm, channel);
      await tell(unarchivedNotice(channel));
    }
    if (ch.is_private !== undefined || ch.is_web_public !== undefined || ch.history_public_to_subscribers !== undefined) {
      const before = channel;
      channel = await changePrivacy(svc, tx, emit, viewer, channel, ch);
      if (channel !== before) await tell(accessChangedNotice(actor, before, channel));
    }
    if (ch.message_retention_days !== undefined && ch.message_retention_days !== channel.message_retention_days) {
      if (!isOwner(actor)) throw mustBeOwner();
      const old = channel.message_retention_days;
      channel = await setColumns(tx, channel, { message_retention_days: ch.message_retention_days });
      await emitChannelUpdate(svc, tx, emit, realm, channel, 'message_retention_days', ch.message_retention_days);
      await tell(retentionChangedNotice(realm, actor, channel, old));
    }
    if (ch.topics_policy !== undefined && ch.topics_policy !== channel.topics_policy) {
      if (ch.topics_policy !== 'inherit' && !holdsRealmPermission(viewer, 'can_set_topics_policy_group')) throw insufficientPermission();
      if (ch.topics_policy === 'empty_topic_only') await checkOnlyEmptyTopic(svc, tx, channel);
      const old = channel.topics_policy;
      channel = await setColumns(tx, channel, { topics_policy: ch.topics_policy });
      await emitChannelUpdate(svc, tx, emit, realm, channel, 'topics_policy', ch.topics_policy);
      await tell(topicsPolicyChangedNotice(actor, channel, old));
    }
    if (ch.description !== undefined) {
      const description = checkChannelDescription(ch.description);
      if (description !== channel.description) {
        const old = channel.description;
        const rendered = html(description);
        channel = await setColumns(tx, channel, { description, rendered_description: rendered });
        await emitChannelUpdate(svc, tx, emit, realm, channel, 'description', description, { rendered_description: rendered });
        await tell(descriptionChangedNotice(actor, channel, old));
      }
    }
    if (ch.new_name !== undefined) {
      const name = checkChannelName(ch.new_name);
      if (name !== channel.name) {
        const other = await getChannelByName(tx, realm.id, name);
        if (other && other.id !== channel.id) throw badRequest('Channel name is already in use.');
        const oldName = channel.name;
        channel = await setColumns(tx, channel, { name });
        await emitChannelUpdate(svc, tx, emit, realm, { ...channel, name: oldName }, 'name', name);
        await tell(channelRenamedNotice(actor, channel, oldName));
      }
    }
    if (ch.folder_id !== undefined && ch.folder_id !== channel.folder_id) {
      if (ch.folder_id !== null) await checkFolder(tx, realm.id, ch.folder_id);
      channel = await setColumns(tx, channel, { folder_id: ch.folder_id });
      await emitChannelUpdate(svc, tx, emit, realm, channel, 'folder_id', ch.folder_id);
    }
    for (const [setting, change] of Object.entries(ch.groups ?? {}) as [ChannelPermission, GroupSettingChange][]) {
      if (DELETE_POLICY_SETTINGS.includes(setting)) checkDeletePolicyPermission(viewer);
      const before = channel;
      // Read before the change: an anonymous group it replaces is dropped.
      const oldValue = setting === 'can_send_message_group' ? await groupSettingValue(tx, before.can_send_message_group_id) : undefined;
      channel = await changeGroupSetting(svc, tx, emit, realm, channel, setting, change);
      if (oldValue !== undefined && channel !== before) {
        const newValue = await groupSettingValue(tx, channel.can_send_message_group_id);
        await tell(await postingPermissionChangedNotice(tx, actor, channel, oldValue, newValue));
      }
    }
    if (ch.is_default_stream !== undefined) {
      if (!isAdmin(actor)) throw mustBeAdmin();
      await setDefault(tx, emit, realm, channel, ch.is_default_stream);
    }
    if (ch.is_archived === true && !channel.is_archived) channel = await archive(svc, tx, emit, realm, channel);
  });
}

async function setColumns(tx: Tx, channel: Channel, values: Partial<Channel>): Promise<Channel> {
  return tx.updateTable('channels').set(values).where('id', '=', channel.id).returningAll().executeTakeFirstOrThrow();
}

/** The messages domain says whether a channel has messages outside the empty topic (Services.hooks). */
export type NamedTopicCheck = (tx: Tx, channelId: number) => Promise<boolean>;

/** `empty_topic_only` only for a channel whose messages are all in the empty topic. */
async function checkOnlyEmptyTopic(svc: Hooked, tx: Tx, channel: Channel): Promise<void> {
  if (await svc.hooks.namedTopicCheck(tx, channel.id)) {
    throw badRequest('To enable this configuration, all messages in this channel must be in the general chat topic. Consider renaming or deleting topics.');
  }
}

async function changePrivacy(svc: Hooked, tx: Tx, emit: Emit, viewer: ChannelViewer, channel: Channel, ch: ChannelChanges): Promise<Channel> {
  const { realm } = viewer;
  const inviteOnly = ch.is_private ?? channel.invite_only;
  const webPublic = ch.is_web_public ?? (inviteOnly ? false : channel.is_web_public);
  // As the reference: a privacy change without a history choice gives private channels protected history.
  let history = ch.history_public_to_subscribers ?? (ch.is_private !== undefined ? !ch.is_private : channel.history_public_to_subscribers);
  if (!inviteOnly) history = true;
  if (webPublic && inviteOnly) throw badRequest('Invalid parameters');
  if (ch.history_public_to_subscribers === false && !inviteOnly) throw badRequest('Invalid parameters');
  if (inviteOnly && (await isDefault(tx, channel.id))) throw badRequest('A default channel cannot be private.');
  // As the reference: even administrators must reach a private channel's content to change its
  // privacy (making it public would publish what they cannot read).
  if (ch.is_private !== undefined && !hasContentAccess(viewer, channel)) throw badRequest('Invalid channel ID');
  if (webPublic && !channel.is_web_public) {
    if (!settingsOf(realm).enable_spectator_access) throw badRequest('Web-public channels are not enabled.');
    if (!holdsRealmPermission(viewer, 'can_create_web_public_channel_group')) throw insufficientPermission();
  }
  if (inviteOnly === channel.invite_only && webPublic === channel.is_web_public && history === channel.history_public_to_subscribers) {
    return channel;
  }
  const before = new Set(await channelAudience(tx, realm, channel));
  const updated = await setColumns(tx, channel, { invite_only: inviteOnly, is_web_public: webPublic, history_public_to_subscribers: history });
  const after = await channelAudience(tx, realm, updated);
  const companions = { history_public_to_subscribers: history, is_web_public: webPublic };
  const stay = after.filter((id) => before.has(id));
  if (inviteOnly !== channel.invite_only) await emitChannelUpdate(svc, tx, emit, realm, updated, 'invite_only', inviteOnly, companions, stay);
  if (webPublic !== channel.is_web_public) await emitChannelUpdate(svc, tx, emit, realm, updated, 'is_web_public', webPublic, companions, stay);
  if (history !== channel.history_public_to_subscribers) {
    await emitChannelUpdate(svc, tx, emit, realm, updated, 'history_public_to_subscribers', history, companions, stay);
  }
  // Whoever gains or loses sight of the channel hears of it as a creation or a deletion.
  const gained = after.filter((id) => !before.has(id));
  if (gained.length > 0) await emitChannelsCreated(svc, tx, emit, realm, [updated], { newViewers: gained });
  await loseSight(tx, emit, realm, [updated], [...before].filter((id) => !after.includes(id)));
  return updated;
}

async function changeGroupSetting(svc: Hooked, tx: Tx, emit: Emit, realm: Realm, channel: Channel, setting: ChannelPermission, change: GroupSettingChange): Promise<Channel> {
  const column = `${setting}_id` as const;
  const current = channel[column];
  if (change.old !== undefined && !(await settingValueEquals(tx, realm.id, current, change.old))) throw expectationMismatch();
  if (await settingValueEquals(tx, realm.id, current, change.new)) return channel;
  const before = new Set(await channelAudience(tx, realm, channel));
  const oldPostPolicy = (await formatChannels(svc, tx, realm, [channel])).get(channel.id)!.stream_post_policy;
  const stored = await storeGroupSettingValue(tx, realm.id, change.new, setting, rulesOf(CHANNEL_PERMISSION_SETTINGS[setting]));
  const updated = await setColumns(tx, channel, { [column]: stored } as Partial<Channel>);
  await dropIfAnonymous(tx, current);
  const formatted = (await formatChannels(svc, tx, realm, [updated])).get(updated.id)!;
  const after = await channelAudience(tx, realm, updated);
  const stay = after.filter((id) => before.has(id));
  await emitChannelUpdate(svc, tx, emit, realm, updated, setting, formatted[setting], {}, stay);
  // Who may post decides the legacy stream_post_policy (and is_announcement_only): clients keeping those hear of it, as in the reference.
  if (formatted.stream_post_policy !== oldPostPolicy) {
    await emitChannelUpdate(svc, tx, emit, realm, updated, 'stream_post_policy', formatted.stream_post_policy, {}, stay);
    await emitChannelUpdate(svc, tx, emit, realm, updated, 'is_announcement_only', formatted.is_announcement_only, {}, stay);
  }
  // Administering or subscribing groups change who may see a private channel.
  const gained = after.filter((id) => !before.has(id));
  if (gained.length > 0) await emitChannelsCreated(svc, tx, emit, realm, [updated], { newViewers: gained });
  await loseSight(tx, emit, realm, [updated], [...before].filter((id) => !after.includes(id)));
  return updated;
}

// ---------------------------------------------------------------- archiving

async function archive(svc: Services, tx: Tx, emit: Emit, realm: Realm, channel: Channel): Promise<Channel> {
  if (await isDefault(tx, channel.id)) await setDefault(tx, emit, realm, channel, false);
  const updated = await setColumns(tx, channel, { is_archived: true });
  await emitChannelUpdate(svc, tx, emit, realm, updated, 'is_archived', true);
  await sendNotices(svc, tx, emit, realm, [await archivedNotice(tx, updated)]);
  return updated;
}

/** DELETE /streams/{stream_id}: archives (channels are never deleted). */
export async function archiveChannel(svc: Services, realm: Realm, actor: User, channelId: number): Promise<void> {
  await transact(svc, async (tx, emit) => {
    const viewer = await channelViewer(tx, realm, actor);
    const channel = await accessChannel(tx, viewer, channelId);
    if (!canAdminister(viewer, channel)) throw cannotAdminister();
    if (channel.is_archived) throw badRequest('Channel is already archived');
    await archive(svc, tx, emit, realm, channel);
  });
}

// ---------------------------------------------------------------- default channels

async function isDefault(tx: Tx, channelId: number): Promise<boolean> {
  return (await tx.selectFrom('default_channels').select('channel_id').where('channel_id', '=', channelId).executeTakeFirst()) !== undefined;
}

/** `default_streams` to those who may know them: active users who are not guests (as the reference). */
async function emitDefaultChannels(tx: Tx, emit: Emit, realm: Realm): Promise<void> {
  const ids = await defaultChannelIds(tx, realm.id);
  const users = await tx.selectFrom('users').select('id').where('realm_id', '=', realm.id).where('is_active', '=', true).where('role', '!=', ROLE.GUEST).execute();
  emit(realm.id, { type: 'default_streams', default_streams: ids }, users.map((u) => u.id));
}

async function setDefault(tx: Tx, emit: Emit, realm: Realm, channel: Channel, on: boolean): Promise<void> {
  if (on === (await isDefault(tx, channel.id))) return;
  if (on) {
    if (channel.invite_only) throw badRequest('Private channels cannot be made default.');
    if (channel.is_archived) throw badRequest('Archived channels cannot be made default.');
    await tx.insertInto('default_channels').values({ realm_id: realm.id, channel_id: channel.id }).execute();
  } else {
    await tx.deleteFrom('default_channels').where('channel_id', '=', channel.id).execute();
  }
  await emitDefaultChannels(tx, emit, realm);
}

/** A new organization's first channels (onboarding/): public, default, created by its owner. */
export async function createInitialChannels(
  svc: Services,
  tx: Tx,
  emit: Emit,
  realm: Realm,
  owner: User,
  channels: { name: string; description: string }[],
): Promise<Channel[]> {
  const viewer = await channelViewer(tx, realm, owner);
  // Fixed onboarding texts, rendered in the organization's creating transaction: on
  // PGlite's single connection a render reading outside it would wait for it forever.
  const rendered = new Map<string, string>();
  for (const c of channels) rendered.set(c.description, await renderHtml(svc, realm, c.description, tx));
  const html = (text: string) => rendered.get(text) ?? '';
  const created: Channel[] = [];
  for (const c of channels) created.push(await insertChannel(html, tx, viewer, c.name, c.description, { is_default_stream: true }));
  await emitChannelsCreated(svc, tx, emit, realm, created);
  await emitDefaultChannels(tx, emit, realm);
  return created;
}

/** POST/DELETE /default_streams: administrators only. */
export async function setDefaultChannel(svc: Services, realm: Realm, actor: User, channelId: number, on: boolean): Promise<void> {
  if (!isAdmin(actor)) throw mustBeAdmin();
  await transact(svc, async (tx, emit) => {
    const channel = await accessChannel(tx, await channelViewer(tx, realm, actor), channelId);
    if (!on && !(await isDefault(tx, channel.id))) throw badRequest('Channel is not a default channel.');
    await setDefault(tx, emit, realm, channel, on);
  });
}

// ---------------------------------------------------------------- hooks for the users domain

/** New users join the organization's default channels (as in the reference). */
export async function subscribeToDefaultChannels(svc: Hooked, tx: Tx, emit: Emit, realm: Realm, user: User): Promise<void> {
  const defaults = await tx
    .selectFrom('channels')
    .innerJoin('default_channels', 'default_channels.channel_id', 'channels.id')
    .selectAll('channels')
    .where('channels.realm_id', '=', realm.id)
    .where('channels.is_archived', '=', false)
    .orderBy('channels.id')
    .execute();
  await addSubscriptions(svc, 
    tx,
    emit,
    realm,
    defaults.map((channel) => ({ user, channel })),
  );
}

/** A user deactivated or back: others see them leave or rejoin their channels' subscriber lists. */
export async function announceSubscriberActivity(tx: Tx, emit: Emit, realm: Realm, user: User, active: boolean): Promise<void> {
  const rows = await tx
    .selectFrom('channels')
    .innerJoin('subscriptions', 'subscriptions.channel_id', 'channels.id')
    .selectAll('channels')
    .where('subscriptions.user_id', '=', user.id)
    .where('subscriptions.active', '=', true)
    .execute();
  await emitPeerChanges(
    tx,
    emit,
    realm,
    active ? 'peer_add' : 'peer_remove',
    rows.map((channel) => ({ channel, userIds: [user.id] })),
  );
}

/**
 * After a user is deactivated or reactivated: the channel settings whose anonymous value names
 * them directly list them no longer, or again; those who may see each channel hear the new value.
 */
export async function announceChannelSettingMembers(svc: Hooked, tx: Tx, emit: Emit, realm: Realm, user: User): Promise<void> {
  const values = await settingValuesNaming(tx, realm.id, user.id);
  const uses = await channelSettingsIn(tx, realm.id, new Set(values), { includeArchived: true });
  if (uses.length === 0) return;
  const formatted = await formatChannels(svc, tx, realm, uses.map((u) => u.channel));
  for (const { channel, settings } of uses) {
    const audience = await channelAudience(tx, realm, channel);
    for (const setting of settings) await emitChannelUpdate(svc, tx, emit, realm, channel, setting, formatted.get(channel.id)![setting], {}, audience);
  }
}

/** After a role change: channels the user can newly see, or no longer see. */
export async function announceChannelVisibility(svc: Hooked, tx: Tx, emit: Emit, realm: Realm, before: ChannelViewer, user: User): Promise<void> {
  const after = await channelViewer(tx, realm, user);
  const channels = await tx.selectFrom('channels').selectAll().where('realm_id', '=', realm.id).orderBy('id').execute();
  // Guests know of no default channels: a user becoming or ceasing to be one hears the list as it now is for them.
  if (isGuest(before.user) !== isGuest(user)) {
    emit(realm.id, { type: 'default_streams', default_streams: isGuest(user) ? [] : await defaultChannelIds(tx, realm.id) }, [user.id]);
  }
  const gained = channels.filter((c) => !hasMetadataAccess(before, c) && hasMetadataAccess(after, c));
  const lost = channels.filter((c) => hasMetadataAccess(before, c) && !hasMetadataAccess(after, c));
  if (gained.length > 0) await emitChannelsCreated(svc, tx, emit, realm, gained, { newViewers: [user.id] });
  await loseSight(tx, emit, realm, lost, [user.id]);
}
