// Every change to channels (spec endpoint 2 and the channel API of digest
// section 2): creating, settings, archiving, default channels. Subscriptions
// are subscription-actions.ts'; a new channel's checks and row, create.ts'.
// Each action checks permissions, writes in one transaction and emits its
// events after the commit.

import type { Hooked, Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Channel } from './tables.ts';
import { type ActionContext, transactAs, type Tx } from '../db/transact.ts';
import { ApiError, badRequest, insufficientPermission } from '../http/errors.ts';
import { isGuest } from '../users/roles.ts';
import { settingsOf } from '../realm/queries.ts';
import { prerenderHtml, renderHtml } from '../rendering/index.ts';
import {
  dropIfAnonymous,
  expectationMismatch,
  groupSettingValue,
  settingValueEquals,
  storeGroupSettingValue,
  type GroupSettingChange,
} from '../user_groups/group-setting.ts';
import { CHANNEL_PERMISSION_SETTINGS, rulesOf, type ChannelPermission } from '../user_groups/permission-settings.ts';
import { canAdminister, channelViewer, hasContentAccess, hasMetadataAccess, holdsRealmPermission, type ChannelViewer } from './access.ts';
import { accessChannel, channelAudience, channelSettingsIn, defaultChannelIds, getChannelByName } from './queries.ts';
import { settingValuesNaming } from '../user_groups/queries.ts';
import { formatChannels } from './format.ts';
import { checkChannelDescription, checkChannelName, type TopicsPolicy } from './validation.ts';
import {
  accessChangedNotice,
  archivedNotice,
  channelCreatedNotice,
  channelRenamedNotice,
  descriptionChangedNotice,
  newChannelsAnnouncement,
  postingPermissionChangedNotice,
  retentionChangedNotice,
  topicsPolicyChangedNotice,
  unarchivedNotice,
} from './notices.ts';
import { sendNotices, type Notice } from '../notification_bot/index.ts';
import { emitChannelUpdate, emitChannelsCreated, emitDefaultChannels, emitUnarchived } from './events.ts';
import { DELETE_POLICY_SETTINGS, checkDeletePolicyPermission, checkFolder, insertChannel, type ChannelSettings } from './create.ts';
import { addSubscriptions, loseSight, resolvePrincipals } from './subscription-actions.ts';
import { requireAdmin, requireOwner } from '../users/access.ts';

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
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    if (await getChannelByName(tx, realm.id, name)) throw badRequest(`Channel '${name}' already exists`);
    const viewer = await channelViewer(tx, realm, actor);
    const channel = await insertChannel(html, tx, viewer, name, description, req);
    const users = await resolvePrincipals(tx, realm, req.subscribers);
    await emitChannelsCreated(ctx, [channel]);
    if (req.is_default_stream) await emitDefaultChannels(ctx);
    await addSubscriptions(
      ctx,
      users.map((user) => ({ user, channel })),
    );
    const notices = req.announce ? await newChannelsAnnouncement(tx, realm, actor, [channel]) : [];
    await sendNotices(ctx, [...notices, channelCreatedNotice(actor, channel)]);
    return channel;
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
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const viewer = await channelViewer(tx, realm, actor);
    let channel = await accessChannel(tx, viewer, channelId);
    if (!canAdminister(viewer, channel)) throw cannotAdminister();
    const u: Update = { ...ctx, viewer, tell: (notice) => sendNotices(ctx, [notice]) };

    // Unarchiving first: the other changes apply to a live channel.
    if (ch.is_archived === false && channel.is_archived) channel = await unarchive(u, channel);
    if (ch.is_private !== undefined || ch.is_web_public !== undefined || ch.history_public_to_subscribers !== undefined) {
      const before = channel;
      channel = await changePrivacy(u, channel, ch);
      if (channel !== before) await u.tell(accessChangedNotice(actor, before, channel));
    }
    channel = await changeRetention(u, channel, ch.message_retention_days);
    channel = await changeTopicsPolicy(u, channel, ch.topics_policy);
    if (ch.description !== undefined) channel = await changeDescription(u, channel, checkChannelDescription(ch.description), html);
    if (ch.new_name !== undefined) channel = await rename(u, channel, checkChannelName(ch.new_name));
    if (ch.folder_id !== undefined && ch.folder_id !== channel.folder_id) {
      if (ch.folder_id !== null) await checkFolder(tx, realm.id, ch.folder_id);
      channel = await setColumns(tx, channel, { folder_id: ch.folder_id });
      await emitChannelUpdate(ctx, channel, 'folder_id', ch.folder_id);
    }
    for (const [setting, change] of Object.entries(ch.groups ?? {}) as [ChannelPermission, GroupSettingChange][]) {
      channel = await changePermission(u, channel, setting, change);
    }
    if (ch.is_default_stream !== undefined) {
      requireAdmin(actor);
      await setDefault(ctx, channel, ch.is_default_stream);
    }
    if (ch.is_archived === true && !channel.is_archived) channel = await archive(ctx, channel);
  });
}

/** What each change of a channel update works with: the action's context, and the actor as a channel viewer. */
interface Update extends ActionContext<Services, User> {
  viewer: ChannelViewer;
  /** Notification Bot's notice of a change, once it is written. */
  tell: (notice: Notice) => Promise<unknown>;
}

async function unarchive(u: Update, channel: Channel): Promise<Channel> {
  const updated = await setColumns(u.tx, channel, { is_archived: false });
  await emitChannelUpdate(u, updated, 'is_archived', false);
  await emitUnarchived(u, updated);
  await u.tell(unarchivedNotice(updated));
  return updated;
}

/** Message retention: owners only. */
async function changeRetention(u: Update, channel: Channel, days: number | null | undefined): Promise<Channel> {
  if (days === undefined || days === channel.message_retention_days) return channel;
  const { tx, viewer } = u;
  requireOwner(viewer.user);
  const updated = await setColumns(tx, channel, { message_retention_days: days });
  await emitChannelUpdate(u, updated, 'message_retention_days', days);
  await u.tell(retentionChangedNotice(viewer.realm, viewer.user, updated, channel.message_retention_days));
  return updated;
}

async function changeTopicsPolicy(u: Update, channel: Channel, policy: TopicsPolicy | undefined): Promise<Channel> {
  if (policy === undefined || policy === channel.topics_policy) return channel;
  const { svc, tx, viewer } = u;
  if (policy !== 'inherit' && !holdsRealmPermission(viewer, 'can_set_topics_policy_group')) throw insufficientPermission();
  if (policy === 'empty_topic_only') await checkOnlyEmptyTopic(svc, tx, channel);
  const updated = await setColumns(tx, channel, { topics_policy: policy });
  await emitChannelUpdate(u, updated, 'topics_policy', policy);
  await u.tell(topicsPolicyChangedNotice(viewer.user, updated, channel.topics_policy));
  return updated;
}

/** A checked description, rendered before the transaction (`html`). */
async function changeDescription(u: Update, channel: Channel, description: string, html: (text: string) => string): Promise<Channel> {
  if (description === channel.description) return channel;
  const { tx, viewer } = u;
  const rendered = html(description);
  const updated = await setColumns(tx, channel, { description, rendered_description: rendered });
  await emitChannelUpdate(u, updated, 'description', description, { rendered_description: rendered });
  await u.tell(descriptionChangedNotice(viewer.user, updated, channel.description));
  return updated;
}

/** A checked name, unless another channel has it. */
async function rename(u: Update, channel: Channel, name: string): Promise<Channel> {
  if (name === channel.name) return channel;
  const { tx, viewer } = u;
  const other = await getChannelByName(tx, viewer.realm.id, name);
  if (other && other.id !== channel.id) throw badRequest('Channel name is already in use.');
  const updated = await setColumns(tx, channel, { name });
  await emitChannelUpdate(u, { ...updated, name: channel.name }, 'name', name);
  await u.tell(channelRenamedNotice(viewer.user, updated, channel.name));
  return updated;
}

/** One permission setting; who may post is told of in the channel. */
async function changePermission(u: Update, channel: Channel, setting: ChannelPermission, change: GroupSettingChange): Promise<Channel> {
  const { tx, viewer } = u;
  if (DELETE_POLICY_SETTINGS.includes(setting)) checkDeletePolicyPermission(viewer);
  // Read before the change: an anonymous group it replaces is dropped.
  const oldValue = setting === 'can_send_message_group' ? await groupSettingValue(tx, channel.can_send_message_group_id) : undefined;
  const updated = await changeGroupSetting(u, channel, setting, change);
  if (oldValue !== undefined && updated !== channel) {
    const newValue = await groupSettingValue(tx, updated.can_send_message_group_id);
    await u.tell(await postingPermissionChangedNotice(tx, viewer.user, updated, oldValue, newValue));
  }
  return updated;
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

async function changePrivacy(ctx: Update, channel: Channel, ch: ChannelChanges): Promise<Channel> {
  const { tx, viewer, realm } = ctx;
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
  if (inviteOnly !== channel.invite_only) await emitChannelUpdate(ctx, updated, 'invite_only', inviteOnly, companions, stay);
  if (webPublic !== channel.is_web_public) await emitChannelUpdate(ctx, updated, 'is_web_public', webPublic, companions, stay);
  if (history !== channel.history_public_to_subscribers) {
    await emitChannelUpdate(ctx, updated, 'history_public_to_subscribers', history, companions, stay);
  }
  await announceSightChanges(ctx, updated, before, after);
  return updated;
}

async function changeGroupSetting(ctx: ActionContext<Hooked>, channel: Channel, setting: ChannelPermission, change: GroupSettingChange): Promise<Channel> {
  const { svc, tx, realm } = ctx;
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
  await emitChannelUpdate(ctx, updated, setting, formatted[setting], {}, stay);
  // Who may post decides the legacy stream_post_policy (and is_announcement_only): clients keeping those hear of it, as in the reference.
  if (formatted.stream_post_policy !== oldPostPolicy) {
    await emitChannelUpdate(ctx, updated, 'stream_post_policy', formatted.stream_post_policy, {}, stay);
    await emitChannelUpdate(ctx, updated, 'is_announcement_only', formatted.is_announcement_only, {}, stay);
  }
  // Administering or subscribing groups change who may see a private channel.
  await announceSightChanges(ctx, updated, before, after);
  return updated;
}

/** Whoever gains or loses sight of a channel hears of it as a creation or a deletion. */
async function announceSightChanges(ctx: ActionContext<Hooked>, channel: Channel, before: Set<number>, after: number[]): Promise<void> {
  const gained = after.filter((id) => !before.has(id));
  if (gained.length > 0) await emitChannelsCreated(ctx, [channel], { newViewers: gained });
  await loseSight(
    ctx,
    [channel],
    [...before].filter((id) => !after.includes(id)),
  );
}

// ---------------------------------------------------------------- archiving

async function archive(ctx: ActionContext, channel: Channel): Promise<Channel> {
  const { tx } = ctx;
  if (await isDefault(tx, channel.id)) await setDefault(ctx, channel, false);
  const updated = await setColumns(tx, channel, { is_archived: true });
  await emitChannelUpdate(ctx, updated, 'is_archived', true);
  await sendNotices(ctx, [await archivedNotice(tx, updated)]);
  return updated;
}

/** DELETE /streams/{stream_id}: archives (channels are never deleted). */
export async function archiveChannel(svc: Services, realm: Realm, actor: User, channelId: number): Promise<void> {
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const viewer = await channelViewer(tx, realm, actor);
    const channel = await accessChannel(tx, viewer, channelId);
    if (!canAdminister(viewer, channel)) throw cannotAdminister();
    if (channel.is_archived) throw badRequest('Channel is already archived');
    await archive(ctx, channel);
  });
}

// ---------------------------------------------------------------- default channels

async function isDefault(tx: Tx, channelId: number): Promise<boolean> {
  return (await tx.selectFrom('default_channels').select('channel_id').where('channel_id', '=', channelId).executeTakeFirst()) !== undefined;
}

async function setDefault(ctx: ActionContext<unknown>, channel: Channel, on: boolean): Promise<void> {
  const { tx, realm } = ctx;
  if (on === (await isDefault(tx, channel.id))) return;
  if (on) {
    if (channel.invite_only) throw badRequest('Private channels cannot be made default.');
    if (channel.is_archived) throw badRequest('Archived channels cannot be made default.');
    await tx.insertInto('default_channels').values({ realm_id: realm.id, channel_id: channel.id }).execute();
  } else {
    await tx.deleteFrom('default_channels').where('channel_id', '=', channel.id).execute();
  }
  await emitDefaultChannels(ctx);
}

/** A new organization's first channels (onboarding/): public, default, created by its owner. */
export async function createInitialChannels(ctx: ActionContext<Services, User>, channels: { name: string; description: string }[]): Promise<Channel[]> {
  const { svc, tx, realm, actor: owner } = ctx;
  const viewer = await channelViewer(tx, realm, owner);
  // Fixed onboarding texts, rendered in the organization's creating transaction: on
  // PGlite's single connection a render reading outside it would wait for it forever.
  const rendered = new Map<string, string>();
  for (const c of channels) rendered.set(c.description, await renderHtml(svc, realm, c.description, tx));
  const html = (text: string) => rendered.get(text) ?? '';
  const created: Channel[] = [];
  for (const c of channels) created.push(await insertChannel(html, tx, viewer, c.name, c.description, { is_default_stream: true }));
  await emitChannelsCreated(ctx, created);
  await emitDefaultChannels(ctx);
  return created;
}

/** POST/DELETE /default_streams: administrators only. */
export async function setDefaultChannel(svc: Services, realm: Realm, actor: User, channelId: number, on: boolean): Promise<void> {
  requireAdmin(actor);
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const channel = await accessChannel(tx, await channelViewer(tx, realm, actor), channelId);
    if (!on && !(await isDefault(tx, channel.id))) throw badRequest('Channel is not a default channel.');
    await setDefault(ctx, channel, on);
  });
}

// ---------------------------------------------------------------- hooks for the users domain

/**
 * After a user is deactivated or reactivated: the channel settings whose anonymous value names
 * them directly list them no longer, or again; those who may see each channel hear the new value.
 */
export async function announceChannelSettingMembers(ctx: ActionContext<Hooked>, user: User): Promise<void> {
  const { svc, tx, realm } = ctx;
  const values = await settingValuesNaming(tx, realm.id, user.id);
  const uses = await channelSettingsIn(tx, realm.id, new Set(values), { includeArchived: true });
  if (uses.length === 0) return;
  const formatted = await formatChannels(
    svc,
    tx,
    realm,
    uses.map((u) => u.channel),
  );
  for (const { channel, settings } of uses) {
    const audience = await channelAudience(tx, realm, channel);
    for (const setting of settings) await emitChannelUpdate(ctx, channel, setting, formatted.get(channel.id)![setting], {}, audience);
  }
}

/** After a role change: channels the user can newly see, or no longer see. */
export async function announceChannelVisibility(ctx: ActionContext<Hooked>, before: ChannelViewer, user: User): Promise<void> {
  const { tx, emit, realm } = ctx;
  const after = await channelViewer(tx, realm, user);
  const channels = await tx.selectFrom('channels').selectAll().where('realm_id', '=', realm.id).orderBy('id').execute();
  // Guests know of no default channels: a user becoming or ceasing to be one hears the list as it now is for them.
  if (isGuest(before.user) !== isGuest(user)) {
    emit(realm.id, { type: 'default_streams', default_streams: isGuest(user) ? [] : await defaultChannelIds(tx, realm.id) }, [user.id]);
  }
  const gained = channels.filter((c) => !hasMetadataAccess(before, c) && hasMetadataAccess(after, c));
  const lost = channels.filter((c) => hasMetadataAccess(before, c) && !hasMetadataAccess(after, c));
  if (gained.length > 0) await emitChannelsCreated(ctx, gained, { newViewers: [user.id] });
  await loseSight(ctx, lost, [user.id]);
}
