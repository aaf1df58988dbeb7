// PATCH /realm (the reference's update_realm): administrators change the
// organization's name, description, settings and permission settings; some
// only owners may change (settings-validation.ts). All or nothing, in one
// transaction; every active user hears each change as a `realm` event, and what
// follows from a change is announced too: a new waiting period moves members in
// or out of role:fullmembers, and `can_access_all_users_group` changes whom
// guests see.

import type { Hooked, Services } from '../services.ts';
import type { Realm } from './tables.ts';
import type { User } from '../users/tables.ts';
import type { ServerEvent } from '../events/types.ts';
import { type ActionContext, transactAs, type Tx } from '../db/transact.ts';
import { badRequest } from '../http/errors.ts';
import { ROLE } from '../users/roles.ts';
import { activeUserIds } from '../users/queries.ts';
import { announceUserAccessChange } from '../users/access-changes.ts';
import { REALM_SETTING_DEFAULTS } from './settings.ts';
import { settingsOf } from './queries.ts';
import { CHANNEL_SETTINGS, settingValues, type ChangeableSetting } from './settings-validation.ts';
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
import { settingValuesNaming } from '../user_groups/queries.ts';
import { REALM_PERMISSION_SETTINGS, rulesOf, type RealmPermission } from '../user_groups/permission-settings.ts';
import { syncSystemGroupMembership } from '../user_groups/system-group-actions.ts';
import { isFullMember } from '../user_groups/system-groups.ts';
import { groupEventSender } from '../user_groups/events.ts';
import { channelViewer, type ChannelViewer } from '../channels/access.ts';
import { accessChannel } from '../channels/queries.ts';
import { announceChannelVisibility } from '../channels/actions.ts';
import { requireAdmin } from '../users/access.ts';

export interface RealmChanges {
  name?: string;
  description?: string;
  settings: Partial<Record<ChangeableSetting, unknown>>;
  groups: Partial<Record<RealmPermission, GroupSettingChange>>;
}

/** Settings whose event is `update_dict`, for their history (as the reference sends them). */
const DICT_EVENT: ReadonlySet<string> = new Set(['allow_message_editing', 'message_content_edit_limit_seconds']);

/** Free text the answer reports as "updated" rather than repeating it. */
const FREE_TEXT: ReadonlySet<string> = new Set(['name', 'description', 'default_code_block_language', 'default_language', 'jitsi_server_url']);

/**
 * Applies the changes; answers what changed (the reference's reply: each changed
 * setting with its new value, free text as "updated"). Nothing to change is no error.
 */
export async function updateRealmSettings(svc: Services, realm: Realm, actor: User, changes: RealmChanges): Promise<Record<string, unknown>> {
  requireAdmin(actor);
  const asked = [...Object.keys(changes.settings), ...Object.keys(changes.groups)];
  const wanted = settingValues(changes.settings, asked, actor);
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx, emit } = ctx;
    // The row as it is now, locked: concurrent changes take turns (the request's copy may be a cached one).
    const current = await tx.selectFrom('realms').selectAll().where('id', '=', realm.id).forUpdate().executeTakeFirstOrThrow();
    const settings = settingsOf(current);
    const stored: Record<string, unknown> = { ...current.settings };
    const groupIds = { ...current.group_settings };
    const events: ServerEvent[] = [];
    const answer: Record<string, unknown> = {};
    const changed = (key: string, value: unknown, event: ServerEvent) => {
      events.push(event);
      answer[key] = FREE_TEXT.has(key) && typeof value === 'string' ? 'updated' : value;
    };
    const update = (key: string, value: unknown) => changed(key, value, { type: 'realm', op: 'update', property: key, value });
    const updateDict = (key: string, data: Record<string, unknown>) => changed(key, data[key], { type: 'realm', op: 'update_dict', property: 'default', data });

    let { name, description } = current;
    if (changes.name !== undefined && changes.name !== name) update('name', (name = changes.name));
    if (changes.description !== undefined && changes.description !== description) update('description', (description = changes.description));

    for (const [key, value] of Object.entries(wanted) as [ChangeableSetting, unknown][]) {
      if (value === undefined || key === 'topics_policy' || (CHANNEL_SETTINGS as readonly string[]).includes(key)) continue;
      if (settings[key] === value) continue;
      stored[key] = value;
      if (DICT_EVENT.has(key)) updateDict(key, { [key]: value });
      else update(key, value);
    }

    // `mandatory_topics` is what `topics_policy` replaced; both are kept in step.
    const topicsPolicy = wanted.topics_policy;
    if (topicsPolicy !== undefined && topicsPolicy !== (settings.mandatory_topics ? 'disable_empty_topic' : settings.topics_policy)) {
      stored.topics_policy = topicsPolicy;
      stored.mandatory_topics = topicsPolicy === 'disable_empty_topic';
      updateDict('topics_policy', { topics_policy: topicsPolicy, mandatory_topics: stored.mandatory_topics });
    }

    for (const setting of Object.keys(REALM_PERMISSION_SETTINGS) as RealmPermission[]) {
      const change = changes.groups[setting];
      if (change === undefined) continue;
      const currentId = current.group_settings[setting];
      if (change.old !== undefined && !(await settingValueEquals(tx, current.id, currentId, change.old))) throw expectationMismatch();
      if (await settingValueEquals(tx, current.id, currentId, change.new)) continue;
      groupIds[setting] = await storeGroupSettingValue(tx, current.id, change.new, setting, rulesOf(REALM_PERMISSION_SETTINGS[setting]));
      await dropIfAnonymous(tx, currentId);
      const value = await groupSettingValue(tx, groupIds[setting]);
      changed(setting, value, groupSettingEvent(setting, value));
    }

    for (const key of CHANNEL_SETTINGS) {
      const given = wanted[key] as number | undefined;
      if (given === undefined) continue;
      const id = given < 0 ? -1 : given;
      if (id === settings[key]) continue;
      if (id >= 0) await checkChannel(tx, current, actor, key, id);
      stored[key] = id;
      update(key, id);
    }

    if (events.length === 0) return answer;
    const updated = await tx
      .updateTable('realms')
      .set({ name, description, settings: JSON.stringify(differingFromDefaults(stored)), group_settings: JSON.stringify(groupIds) })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const everyone = await activeUserIds(tx, current.id);
    for (const event of events) emit(current.id, event, everyone);
    // What follows is told of the organization as it now is.
    const after = { ...ctx, realm: updated };
    const days = settingsOf(updated).waiting_period_threshold;
    if (days !== settings.waiting_period_threshold) await syncFullMembers(after, days);
    await announceUserAccessChange(after, current);
    return answer;
  });
}

/** A permission setting's new value, as every active user hears it. */
function groupSettingEvent(setting: RealmPermission, value: GroupSettingValue): ServerEvent {
  return { type: 'realm', op: 'update_dict', property: 'default', data: { [setting]: value } };
}

/**
 * After a user is deactivated or reactivated: the permission settings whose anonymous value
 * names them directly list them no longer, or again; every active user hears the new value.
 */
export async function announceRealmSettingMembers(ctx: ActionContext<unknown>, user: User): Promise<void> {
  const { tx, emit, realm } = ctx;
  const values = new Set(await settingValuesNaming(tx, realm.id, user.id));
  if (values.size === 0) return;
  // The row as it is now (the request's copy may be a cached one).
  const { group_settings } = await tx.selectFrom('realms').select('group_settings').where('id', '=', realm.id).executeTakeFirstOrThrow();
  const settings = (Object.keys(REALM_PERMISSION_SETTINGS) as RealmPermission[]).filter((s) => values.has(group_settings[s]));
  if (settings.length === 0) return;
  const everyone = await activeUserIds(tx, realm.id);
  for (const s of settings) emit(realm.id, groupSettingEvent(s, await groupSettingValue(tx, group_settings[s])), everyone);
}

/** A channel the organization has and the administrator may see, not archived ("Invalid channel ID" otherwise). */
async function checkChannel(tx: Tx, realm: Realm, actor: User, key: ChangeableSetting, id: number): Promise<void> {
  const channel = await accessChannel(tx, await channelViewer(tx, realm, actor), id);
  if (channel.is_archived) throw badRequest('Invalid channel ID');
  if (key === 'moderation_request_channel_id' && !channel.invite_only) throw badRequest('Moderation request channel must be private.');
}

/** The stored settings keep only what differs from the defaults. */
function differingFromDefaults(stored: Record<string, unknown>): Record<string, unknown> {
  const defaults: Record<string, unknown> = REALM_SETTING_DEFAULTS;
  return Object.fromEntries(Object.entries(stored).filter(([k, v]) => !(k in defaults) || defaults[k] !== v));
}

/**
 * After the waiting period changed: members whose account is now old enough join
 * role:fullmembers, the others leave it (one user_group event each way, as the
 * reference sends), and they gain or lose sight of channels that group reaches.
 */
async function syncFullMembers(ctx: ActionContext<Hooked>, days: number): Promise<void> {
  const { tx, realm } = ctx;
  const fullMembers = (await systemGroupIds(tx, realm.id))['role:fullmembers'];
  const now = new Set((await tx.selectFrom('user_group_members').select('user_id').where('group_id', '=', fullMembers).execute()).map((r) => r.user_id));
  const members = await tx
    .selectFrom('users')
    .selectAll()
    .where('realm_id', '=', realm.id)
    .where('role', '=', ROLE.MEMBER)
    // System bots are in no group.
    .where('is_system_bot', '=', false)
    .orderBy('id')
    .execute();
  const moving = members.filter((u) => isFullMember(u.date_joined, days) !== now.has(u.id));
  if (moving.length === 0) return;
  // Deactivated users belong to no group: their rows follow silently.
  const active = moving.filter((u) => u.is_active);
  const sight = new Map<number, ChannelViewer>();
  for (const u of active) sight.set(u.id, await channelViewer(tx, realm, u));
  const joined = new Map<number, number[]>();
  const left = new Map<number, number[]>();
  for (const u of moving) {
    const { added, removed } = await syncSystemGroupMembership(tx, u, days);
    if (!u.is_active) continue;
    for (const g of added) joined.set(g, [...(joined.get(g) ?? []), u.id]);
    for (const g of removed) left.set(g, [...(left.get(g) ?? []), u.id]);
  }
  const send = await groupEventSender(ctx);
  for (const [id, userIds] of left) send({ id, deactivated: false }, { op: 'remove_members', group_id: id, user_ids: userIds });
  for (const [id, userIds] of joined) send({ id, deactivated: false }, { op: 'add_members', group_id: id, user_ids: userIds });
  for (const u of active) await announceChannelVisibility(ctx, sight.get(u.id)!, u);
}
