// PATCH /settings: a user's own account settings (digest section 2 "Settings").
// Everything is checked before anything is written; the changes are written in
// one transaction. Each changed setting sends `user_settings/update` to the
// user's queues (with the legacy event for clients without
// `user_settings_object`); changes others can see send `realm_user` events.

import { apiEmailFor } from './format.ts';
import type { Hooked, Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from './tables.ts';
import { type ActionContext, transactAs } from '../db/transact.ts';
import { badRequest } from '../http/errors.ts';
import { mayChangeOwn } from './access.ts';
import { checkFullName, checkPasswordStrength } from './validation.ts';
import { checkEmailChange, startEmailChange } from './email-change.ts';
import { activeAdministratorIds, getUser } from './queries.ts';
import { canSeeDeliveryEmail } from './format.ts';
import { avatarFacet, notifyUsers } from './actions.ts';
import {
  LANGUAGES,
  USER_SETTINGS,
  canonicalTimezone,
  storedSettings,
  userSettings,
  type SettingValue,
  type UserSettingName,
  type UserSettingSpec,
  type UserSettings,
} from './settings.ts';
import { recordPresence } from '../presence/actions.ts';
import { OFFLINE_THRESHOLD_SECS } from '../presence/format.ts';
import { deleteAllDrafts } from '../drafts/actions.ts';
import type { LegacySettingsEvent, RealmExportConsentEvent } from './events.ts';

export interface SettingsChanges {
  full_name?: string;
  email?: string;
  old_password?: string;
  new_password?: string;
  settings: Partial<UserSettings>;
}

async function checkPasswordChange(svc: Services, realm: Realm, user: User, oldPassword: string, newPassword: string): Promise<string> {
  // Failed attempts count with failed logins of the same account.
  const { loginFailures, loginWindowSeconds } = svc.config.rateLimit;
  const key = `login:${realm.id}:${user.delivery_email.toLowerCase()}`;
  const limit = await svc.rateLimiter.peek(key, loginFailures, loginWindowSeconds);
  if (!limit.allowed) throw badRequest(`You're making too many attempts! Try again in ${Math.ceil(limit.retryAfter)} seconds.`);
  const ok = user.password_hash !== null && (await svc.passwords.verify(user.password_hash, oldPassword));
  if (!ok) {
    await svc.rateLimiter.hit(key, loginFailures, loginWindowSeconds);
    throw badRequest('Wrong password!');
  }
  try {
    checkPasswordStrength(newPassword);
  } catch {
    throw badRequest('New password is too weak!');
  }
  await svc.rateLimiter.reset(key);
  return svc.passwords.hash(newPassword);
}

export async function updateSettings(svc: Services, realm: Realm, actor: User, changes: SettingsChanges): Promise<void> {
  // Bots have no personal settings to change (Zulip's human_users_only).
  if (actor.is_bot) throw badRequest('This endpoint does not accept bot requests.');
  // The authenticated row may be a few seconds old: decide on a fresh one.
  const current = (await getUser(svc.db, realm.id, actor.id))!;
  const passwordHash =
    changes.new_password !== undefined && changes.new_password !== ''
      ? await checkPasswordChange(svc, realm, current, changes.old_password ?? '', changes.new_password)
      : undefined;
  // A new address is confirmed through an emailed link (users/email-change.ts).
  const emailChange = changes.email !== undefined && (await checkEmailChange(svc, realm, current, changes.email));
  let fullName: string | undefined;
  if (changes.full_name !== undefined && changes.full_name !== current.full_name) {
    // Like Zulip, a name change the organization forbids is silently not made.
    if (mayChangeOwn(realm, current, 'name_changes_disabled')) fullName = checkFullName(changes.full_name);
  }
  const requested = { ...changes.settings };
  if (requested.timezone !== undefined) requested.timezone = canonicalTimezone(requested.timezone as string)!;

  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx, emit } = ctx;
    const before = await tx.selectFrom('users').selectAll().where('id', '=', actor.id).forUpdate().executeTakeFirstOrThrow();
    if (emailChange) await startEmailChange(svc, tx, realm, before, changes.email!);
    const old = userSettings(before);
    const changed = (Object.entries(requested) as [UserSettingName, SettingValue][]).filter(([name, value]) => old[name] !== value);
    if (passwordHash === undefined && (fullName === undefined || fullName === before.full_name) && changed.length === 0) return;

    const values = Object.fromEntries(changed) as Partial<UserSettings>;
    const visibility = values.email_address_visibility as number | undefined;
    const after = await tx
      .updateTable('users')
      .set({
        ...(fullName !== undefined ? { full_name: fullName } : {}),
        ...(passwordHash !== undefined ? { password_hash: passwordHash } : {}),
        ...(values.timezone !== undefined ? { timezone: values.timezone as string } : {}),
        ...(visibility !== undefined ? { email: apiEmailFor(before, visibility, realm, svc.config) } : {}),
        settings: JSON.stringify(storedSettings(before.settings, values)),
      })
      .where('id', '=', before.id)
      .returningAll()
      .executeTakeFirstOrThrow();

    if (fullName !== undefined && fullName !== before.full_name) {
      await notifyUsers(ctx, after, 'update', () => ({ user_id: after.id, full_name: fullName }));
    }
    for (const [name, value] of changed) emitSettingChange(ctx, after, name, value);
    if (values.timezone !== undefined) {
      await notifyUsers(ctx, after, 'update', () => ({ user_id: after.id, email: after.email, timezone: after.timezone }));
    }
    if (visibility !== undefined) await announceEmailVisibility(ctx, before, after);
    // Administrators follow who allows a private data export (the reference's realm_export_consent).
    if (values.allow_private_data_export !== undefined) {
      const consent: RealmExportConsentEvent = { type: 'realm_export_consent', user_id: after.id, consented: values.allow_private_data_export as boolean };
      emit(realm.id, consent, await activeAdministratorIds(tx, realm.id));
    }
    if (values.presence_enabled !== undefined) await announcePresenceSharing(ctx, after, values.presence_enabled as boolean);
    // Turning synchronization off deletes the server's copies (clients keep theirs): no events.
    if (values.enable_drafts_synchronization === false) await deleteAllDrafts(tx, after.id);
  });
}

function emitSettingChange(ctx: ActionContext<unknown>, user: User, name: UserSettingName, value: SettingValue): void {
  const { emit, realm } = ctx;
  const language = name === 'default_language' ? { language_name: LANGUAGES[value as string] } : {};
  const legacyGroup = (USER_SETTINGS[name] as UserSettingSpec).legacy;
  const legacy: LegacySettingsEvent | undefined =
    legacyGroup === 'display'
      ? { type: 'update_display_settings', user: user.email, setting_name: name, setting: value, ...language }
      : legacyGroup === 'notification'
        ? { type: 'update_global_notifications', user: user.email, notification_name: name, setting: value }
        : undefined;
  emit(realm.id, { type: 'user_settings', op: 'update', property: name, value, ...language }, [user.id], legacy ? { hidden: { legacy } } : {});
}

/** Who sees the real address changed: tell exactly those, and everyone about a new API email. */
async function announceEmailVisibility(ctx: ActionContext<Hooked>, before: User, after: User): Promise<void> {
  const viewChanged = (viewer: Pick<User, 'id' | 'role'>) => canSeeDeliveryEmail(viewer, before) !== canSeeDeliveryEmail(viewer, after);
  await notifyUsers(ctx, after, 'update', (canSee) => ({ user_id: after.id, delivery_email: canSee ? after.delivery_email : null }), viewChanged);
  if (after.email !== before.email) await notifyUsers(ctx, after, 'update', () => ({ user_id: after.id, new_email: after.email }));
  // Clients that compute provider avatars can do so only for addresses they see.
  if (after.avatar_source === 'G') await notifyUsers(ctx, after, 'update', () => avatarFacet(after), viewChanged);
}

/**
 * Turning presence sharing on shows the user online at once; turning it off
 * leaves them as last seen well before the offline threshold, for as long as it
 * stays off (pings are then not recorded).
 */
async function announcePresenceSharing(ctx: ActionContext<Hooked>, user: User, enabled: boolean): Promise<void> {
  const now = Date.now();
  if (enabled) await recordPresence(ctx, user, { time: new Date(now), status: 'active', force: true });
  // Both times in the past (not just the connection): a user who joined a minute ago must not read as active.
  else await recordPresence(ctx, user, { time: new Date(now - (OFFLINE_THRESHOLD_SECS + 120) * 1000), status: 'active', force: true, replace: true });
}
