// What Notification Bot says about channels (the reference's texts): a new
// channel's first message, the organization's announcement of new channels, the
// direct message to someone another user subscribed, and the notices of changes
// to a channel.

import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Channel } from './tables.ts';
import type { Executor } from '../db/schema.ts';
import { settingsOf } from '../realm/queries.ts';
import { channelOfSetting, subscriberIds } from './queries.ts';
import { getNamedGroups } from '../user_groups/queries.ts';
import type { GroupSettingValue } from '../user_groups/group-setting.ts';
import { listUsers } from '../users/queries.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../events/shape.ts';
import { CHANNEL_EVENTS_TOPIC, channelLink, silentGroupMention, silentMention, type Notice } from '../notification_bot/index.ts';

/** Above this many newly subscribed users, nobody is told by direct message (`max_bulk_new_subscription_messages`). */
export const MAX_BULK_NEW_SUBSCRIPTION_MESSAGES = 100;

function policyName(channel: Channel): string {
  if (channel.is_web_public) return 'Web-public';
  if (!channel.invite_only) return 'Public';
  return channel.history_public_to_subscribers ? 'Private, shared history' : 'Private, protected history';
}

const quoted = (description: string) => `\`\`\`\` quote\n${description === '' ? '*No description.*' : description}\n\`\`\`\``;

/** The first message of a new channel, in its "channel events" topic. */
export function channelCreatedNotice(actor: User, channel: Channel): Notice {
  return {
    to: { channel, topic: CHANNEL_EVENTS_TOPIC },
    content: `**${policyName(channel)}** channel created by ${silentMention(actor)}. **Description:**\n${quoted(channel.description)}`,
    readBy: [actor.id],
  };
}

/** `announce`: the organization's new-channels channel hears of them, if it has one. */
export async function newChannelsAnnouncement(db: Executor, realm: Realm, actor: User, created: Channel[]): Promise<Notice[]> {
  if (created.length === 0) return [];
  const target = await channelOfSetting(db, realm, 'new_stream_announcements_stream_id');
  if (!target) return [];
  const links = created.map(channelLink).join(', ');
  const content =
    created.length > 1 ? `${silentMention(actor)} created the following channels: ${links}.` : `${silentMention(actor)} created a new channel ${links}.`;
  return [{ to: { channel: target, topic: 'new channels' }, content, readBy: [actor.id] }];
}

/** "X subscribed you to ...": to a user another subscribed to channels that already existed. */
export function subscribedYouNotice(actor: User, user: User, channels: Channel[]): Notice {
  const names = channels.map((c) => c.name).sort();
  const byName = new Map(channels.map((c) => [c.name, c]));
  const content =
    names.length === 1
      ? `${silentMention(actor)} subscribed you to ${channelLink(byName.get(names[0])!)}.`
      : `${silentMention(actor)} subscribed you to the following channels:\n\n${names.map((n) => `* ${channelLink(byName.get(n)!)}\n`).join('')}`;
  return { to: { user }, content, readBy: [actor.id] };
}

// ---------------------------------------------------------------- channel changes
// What Notification Bot says in a channel's "channel events" topic when the channel
// changes (the reference's zerver/actions/streams.py). These start unread for every
// subscriber, the one who made the change included: the reference marks none read.

/** The new name of a channel, in its own topic. */
export function channelRenamedNotice(actor: User, channel: Channel, oldName: string): Notice {
  return {
    to: { channel, topic: CHANNEL_EVENTS_TOPIC },
    content: `${silentMention(actor)} renamed channel **${oldName}** to **${channel.name}**.`,
  };
}

export function descriptionChangedNotice(actor: User, channel: Channel, oldDescription: string): Notice {
  return {
    to: { channel, topic: CHANNEL_EVENTS_TOPIC },
    content:
      `${silentMention(actor)} changed the description for this channel.\n\n` +
      `* **Old description:**\n${quoted(oldDescription)}\n` +
      `* **New description:**\n${quoted(channel.description)}`,
  };
}

/** Privacy, history and web-public changes, told as the change of the channel's kind. */
export function accessChangedNotice(actor: User, before: Channel, channel: Channel): Notice {
  return {
    to: { channel, topic: CHANNEL_EVENTS_TOPIC },
    content: `${silentMention(actor)} changed the [access permissions](/help/channel-permissions) for this channel from **${policyName(before)}** to **${policyName(channel)}**.`,
  };
}

/** -1: messages are kept forever. */
const UNLIMITED_RETENTION = -1;

export function retentionChangedNotice(realm: Realm, actor: User, channel: Channel, oldValue: number | null): Notice {
  // The organization's default stands for a channel that has none of its own.
  const realmDays = Number(settingsOf(realm).message_retention_days ?? UNLIMITED_RETENTION);
  const oldDays = oldValue ?? realmDays;
  const newDays = channel.message_retention_days ?? realmDays;
  const period = (days: number) => (days === UNLIMITED_RETENTION ? 'Forever' : `${days} days`);
  const summary =
    newDays === UNLIMITED_RETENTION
      ? 'Messages in this channel will now be retained forever.'
      : `Messages in this channel will now be automatically deleted ${newDays} days after they are sent.`;
  return {
    to: { channel, topic: CHANNEL_EVENTS_TOPIC },
    content:
      `${silentMention(actor)} has changed the [message retention period](/help/message-retention-policy) for this channel:\n` +
      `* **Old retention period**: ${period(oldDays)}\n` +
      `* **New retention period**: ${period(newDays)}\n\n` +
      summary,
  };
}

const TOPICS_POLICY_NAMES: Record<string, string> = {
  inherit: 'Automatic',
  allow_empty_topic: `*${EMPTY_TOPIC_DISPLAY_NAME}* topic allowed`,
  disable_empty_topic: `No *${EMPTY_TOPIC_DISPLAY_NAME}* topic`,
  empty_topic_only: `Only *${EMPTY_TOPIC_DISPLAY_NAME}* topic allowed`,
};

/** Posted after the change: a channel now kept to the general chat gets it there. */
export function topicsPolicyChangedNotice(actor: User, channel: Channel, oldPolicy: string): Notice {
  return {
    to: { channel, topic: CHANNEL_EVENTS_TOPIC },
    content: `${silentMention(actor)} changed the "Allow posting to the *general chat* topic?" setting from **${TOPICS_POLICY_NAMES[oldPolicy]}** to **${TOPICS_POLICY_NAMES[channel.topics_policy]}**.`,
  };
}

/** Who a setting's value names: groups, then users, each oldest first (the reference's get_users_string_with_permission). */
async function holdersOf(db: Executor, realmId: number, value: GroupSettingValue): Promise<string> {
  const groupIds = typeof value === 'number' ? [value] : value.direct_subgroups;
  const groups = await getNamedGroups(db, realmId, groupIds);
  const named = groups.sort((a, b) => a.id - b.id).map((g) => silentGroupMention({ name: g.name! }));
  if (typeof value === 'number') return named.join(', ');
  const users = value.direct_members.length === 0 ? [] : await listUsers(db, realmId, value.direct_members);
  return [...named, ...users.sort((a, b) => a.id - b.id).map(silentMention)].join(', ');
}

/** Of the channel's permission settings, the reference announces only who may post. */
export async function postingPermissionChangedNotice(
  db: Executor,
  actor: User,
  channel: Channel,
  oldValue: GroupSettingValue,
  newValue: GroupSettingValue,
): Promise<Notice> {
  const [oldHolders, newHolders] = [await holdersOf(db, channel.realm_id, oldValue), await holdersOf(db, channel.realm_id, newValue)];
  return {
    to: { channel, topic: CHANNEL_EVENTS_TOPIC },
    content:
      `${silentMention(actor)} changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n` +
      `* **Old**: ${oldHolders}\n` +
      `* **New**: ${newHolders}\n`,
  };
}

/** Read by everyone from the start: the reference tells of archiving without making it unread news. */
export async function archivedNotice(db: Executor, channel: Channel): Promise<Notice> {
  const subscribers = (await subscriberIds(db, [channel.id])).get(channel.id) ?? [];
  return { to: { channel, topic: CHANNEL_EVENTS_TOPIC }, content: `Channel ${channelLink(channel)} has been archived.`, readBy: subscribers };
}

export function unarchivedNotice(channel: Channel): Notice {
  return { to: { channel, topic: CHANNEL_EVENTS_TOPIC }, content: `Channel ${channelLink(channel)} has been unarchived.` };
}
