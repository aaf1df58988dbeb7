// The Channel and Subscription resources as the API returns them (spec
// "Channel", "Subscription"; digest 1.19). Formatting works on many channels at
// once, so that register and GET /streams cost a few queries, not a few per channel.

import type { Hooked } from '../services.ts';
import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import type { Channel, Subscription } from './tables.ts';
import { groupSettingValues, systemGroupIds, type GroupSettingValue } from '../user_groups/group-setting.ts';
import type { SystemGroupName } from '../user_groups/system-groups.ts';
import { subscriberCounts } from './queries.ts';

// Defined beside the permission checks (access.ts), below queries.ts, which needs it too.
import { CHANNEL_PERMISSIONS } from './access.ts';
export { CHANNEL_PERMISSIONS };

/** Facts about a channel that come from its messages (the messages domain supplies them). */
export interface ChannelStats {
  first_message_id: number | null;
  /** Newest message time, in seconds; null without messages. */
  last_message_at: number | null;
  /** Messages in the last four weeks. */
  recent_messages: number;
}

export type ChannelStatsSource = (db: Executor, channelIds: number[]) => Promise<Map<number, ChannelStats>>;

const DAY = 86_400;
const RECENTLY_ACTIVE_DAYS = 180;

/** Legacy `stream_post_policy` from `can_send_message_group` (inaccurate after level 333, as the spec says). */
const POST_POLICY: Partial<Record<SystemGroupName, number>> = {
  'role:everyone': 1,
  'role:members': 1,
  'role:administrators': 2,
  'role:owners': 2,
  'role:nobody': 2,
  'role:fullmembers': 3,
  'role:moderators': 4,
};

export type ApiChannel = Record<string, unknown> & { stream_id: number; name: string; subscriber_count: number };

export async function formatChannels(
  svc: Hooked,
  db: Executor,
  realm: Realm,
  channels: Channel[],
  opts: {
    systemGroups?: Promise<Record<SystemGroupName, number>>;
    /** The rows were read by this request, which changes no subscriptions: their subscriber_count is current. */
    countsCurrent?: boolean;
  } = {},
): Promise<Map<number, ApiChannel>> {
  const result = new Map<number, ApiChannel>();
  if (channels.length === 0) return result;
  const ids = channels.map((c) => c.id);
  const settingIds = channels.flatMap((c) => CHANNEL_PERMISSIONS.map((p) => c[`${p}_id`]));
  const [values, counts, stats, system] = await Promise.all([
    groupSettingValues(db, settingIds),
    opts.countsCurrent ? new Map(channels.map((c) => [c.id, c.subscriber_count])) : subscriberCounts(db, ids),
    svc.hooks.channelStats(db, ids),
    opts.systemGroups ?? systemGroupIds(db, realm.id),
  ]);
  const systemName = new Map(Object.entries(system).map(([name, id]) => [id, name as SystemGroupName]));
  const now = Date.now() / 1000;
  for (const c of channels) {
    const created = Math.floor(c.date_created.getTime() / 1000);
    const s = stats.get(c.id) ?? { first_message_id: null, last_message_at: null, recent_messages: 0 };
    const ageDays = (now - created) / DAY;
    const postPolicy = POST_POLICY[systemName.get(c.can_send_message_group_id)!] ?? 1;
    const groups: Record<string, GroupSettingValue> = {};
    for (const p of CHANNEL_PERMISSIONS) groups[p] = values.get(c[`${p}_id`])!;
    result.set(c.id, {
      stream_id: c.id,
      name: c.name,
      is_archived: c.is_archived,
      description: c.description,
      rendered_description: c.rendered_description,
      date_created: created,
      creator_id: c.creator_id,
      invite_only: c.invite_only,
      is_web_public: c.is_web_public,
      stream_post_policy: postPolicy,
      is_announcement_only: postPolicy === 2,
      message_retention_days: c.message_retention_days,
      history_public_to_subscribers: c.history_public_to_subscribers,
      topics_policy: c.topics_policy,
      first_message_id: s.first_message_id,
      folder_id: c.folder_id,
      is_recently_active: ageDays < RECENTLY_ACTIVE_DAYS || (s.last_message_at !== null && now - s.last_message_at < RECENTLY_ACTIVE_DAYS * DAY),
      ...groups,
      subscriber_count: counts.get(c.id)!,
      // Too new to estimate during its first week; afterwards, messages per week.
      stream_weekly_traffic: ageDays < 7 ? null : Math.round((s.recent_messages * 7) / Math.min(28, ageDays)),
    });
  }
  return result;
}

/** The personal part of a subscription. */
export function personalSettings(sub: Subscription): Record<string, unknown> {
  return {
    color: sub.color,
    is_muted: sub.is_muted,
    in_home_view: !sub.is_muted,
    pin_to_top: sub.pin_to_top,
    desktop_notifications: sub.desktop_notifications,
    audible_notifications: sub.audible_notifications,
    push_notifications: sub.push_notifications,
    email_notifications: sub.email_notifications,
    wildcard_mentions_notify: sub.wildcard_mentions_notify,
  };
}

/** Colors given to new subscriptions, the first one the user does not use yet. */
export const SUBSCRIPTION_COLORS = [
  '#76ce90',
  '#fae589',
  '#a6c7e5',
  '#e79ab5',
  '#bfd56f',
  '#f4ae55',
  '#b0a5fd',
  '#addfe5',
  '#f5ce6e',
  '#c2726a',
  '#94c849',
  '#bd86e5',
  '#ee7e4a',
  '#a6dcbf',
  '#95a5fd',
  '#53a063',
  '#9987e1',
  '#e4523d',
  '#c2c2c2',
  '#4f8de4',
  '#c6a8ad',
  '#e7cc4d',
  '#c8bebf',
  '#a47462',
];

export function pickColor(used: Iterable<string>): string {
  const taken = new Set(used);
  return SUBSCRIPTION_COLORS.find((c) => !taken.has(c)) ?? SUBSCRIPTION_COLORS[taken.size % SUBSCRIPTION_COLORS.length];
}

/** The order channel lists come in: by name (code points, as the reference sorts). */
export function compareByName(a: { name?: unknown }, b: { name?: unknown }): number {
  const x = String(a.name);
  const y = String(b.name);
  return x < y ? -1 : x > y ? 1 : 0;
}
