// Every change to a user account. Each action checks permissions, writes in one
// transaction and emits `realm_user` events after the commit (db/transact.ts).

import type { Hooked, Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from './tables.ts';
import { type ActionContext, transactAs, type Tx } from '../db/transact.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import { newApiKey } from '../auth/passwords.ts';
import { isOwner, ROLE, type Role } from './roles.ts';
import { checkFullName, checkPasswordStrength, emailRefusal, isValidEmail } from './validation.ts';
import { accessibleUsers, accessUser, activeUserIds, canAccess, countActiveOwners, emailInUse, getUser, usersWhoCanSee } from './queries.ts';
import { realmHost, settingsOf } from '../realm/queries.ts';
import { unknownUser } from './state.ts';
import { syncSystemGroupMembership } from '../user_groups/system-group-actions.ts';
import { announceMembershipChanges, announceMemberships } from '../user_groups/events.ts';
import { apiEmailFor, avatarUrl, canSeeDeliveryEmail, formatUser, mediumAvatarUrl } from './format.ts';
import { EMAIL_ADDRESS_VISIBILITY } from './settings.ts';
import { announceChannelSettingMembers, announceChannelVisibility } from '../channels/actions.ts';
import { addSubscriptions, announceSubscriberActivity, subscribeToDefaultChannels } from '../channels/subscription-actions.ts';
import { countUserActivity } from '../channels/subscriber-counts.ts';
import { announceRealmSettingMembers } from '../realm/settings-actions.ts';
import type { Channel } from '../channels/tables.ts';
import { channelViewer } from '../channels/access.ts';
import { applyProfileData, renderProfileTexts } from '../custom_profile_fields/actions.ts';
import type { ProfileDataEntry } from '../custom_profile_fields/validation.ts';
import { sendNotices, type Notice } from '../notification_bot/index.ts';
import { newUserNotices } from './notices.ts';
import { announceOwnAccessChange } from './access-changes.ts';
import { requireAdmin, requireCanChangeUserEmails, requireCanCreateUsers, requireMayDeactivate, requireOwnerForOwnerRole, requireRoleFits } from './access.ts';
import type { Person } from './events.ts';

export interface NewUser {
  email: string;
  fullName: string;
  /** Null: the account cannot log in with a password until one is set. */
  password: string | null;
  role: Role;
  isBot?: boolean;
  botType?: number | null;
  botOwnerId?: number | null;
  timezone?: string;
  canCreateUsers?: boolean;
  canChangeUserEmails?: boolean;
}

/** What other domains do when an account comes or goes, in the same transaction (Services.hooks, wiring.ts). */
export interface UserLifecycleHooks {
  created?: (ctx: ActionContext<Services>, user: User) => Promise<void>;
  deactivated?: (ctx: ActionContext<Services>, user: User) => Promise<void>;
  reactivated?: (ctx: ActionContext<Services>, user: User) => Promise<void>;
}

/** How an account came to be, where that changes its announcement (an invitation). */
export interface Arrival {
  /** The organization's default channels unless given. */
  channels?: 'default' | Channel[];
  /** Said first (to the inviter). */
  notices?: Notice[];
  /** Welcome Bot's text: null or absent for the organization's, empty for none. */
  welcomeText?: string | null;
}

/**
 * A new account, announced: everyone who may see it hears of it, then it joins
 * the organization's default channels, or the channels given (an invitation's);
 * then the system bots speak of it (users/notices.ts).
 */
export async function announceNewUser(ctx: ActionContext<Services>, user: User, arrival: Arrival = {}): Promise<void> {
  const { svc, tx, realm } = ctx;
  const channels = arrival.channels ?? 'default';
  await emitUserAdded(ctx, user, svc.config);
  if (channels === 'default') await subscribeToDefaultChannels(ctx, user);
  else
    await addSubscriptions(
      ctx,
      channels.map((channel) => ({ user, channel })),
    );
  for (const h of svc.hooks.userLifecycle) await h.created?.(ctx, user);
  const notices = [...(arrival.notices ?? []), ...(await newUserNotices(tx, realm, user, arrival.welcomeText))];
  await sendNotices(ctx, notices);
}

/** The password as stored: hashed before the transaction opens (hashing is slow on purpose). */
export async function passwordHashOf(svc: Pick<Services, 'passwords'>, password: string | null): Promise<string | null> {
  return password === null ? null : svc.passwords.hash(password);
}

/** Inserts the account and its system-group memberships; no checks, no events. `passwordHash` from passwordHashOf. */
export async function insertUser(
  tx: Tx,
  svc: Pick<Services, 'config'>,
  realm: Realm,
  u: Omit<NewUser, 'password'> & { passwordHash: string | null },
): Promise<User> {
  const settings = settingsOf(realm);
  const visibility = u.isBot ? EMAIL_ADDRESS_VISIBILITY.EVERYONE : settings.default_email_address_visibility;
  const user = await tx
    .insertInto('users')
    .values({
      realm_id: realm.id,
      // Hidden addresses get their fake API email once the id is known (below).
      email: u.email,
      delivery_email: u.email,
      full_name: u.fullName,
      role: u.role,
      is_bot: u.isBot ?? false,
      bot_type: u.botType ?? null,
      bot_owner_id: u.botOwnerId ?? null,
      api_key: newApiKey(),
      password_hash: u.passwordHash,
      date_joined: new Date(),
      timezone: u.timezone ?? '',
      can_create_users: u.canCreateUsers ?? false,
      can_change_user_emails: u.canChangeUserEmails ?? false,
      settings: JSON.stringify({ email_address_visibility: visibility }),
    })
    .returningAll()
    .executeTakeFirstOrThrow()
    .catch((err: unknown) => {
      // Two requests for one address passed the emailInUse check together; the index decides.
      throw isUniqueViolation(err) ? badRequest('Email is already in use.') : err;
    });
  await syncSystemGroupMembership(tx, user, settings.waiting_period_threshold);
  const apiEmail = apiEmailFor(user, visibility, realm, svc.config);
  if (apiEmail === user.email) return user;
  return tx.updateTable('users').set({ email: apiEmail }).where('id', '=', user.id).returningAll().executeTakeFirstOrThrow();
}

/**
 * Sends a `realm_user` event about `subject` to every active user of the
 * organization; `person` builds the payload knowing whether that viewer may see
 * the subject's real email.
 */
export async function notifyUsers(
  ctx: ActionContext<Hooked>,
  subject: User,
  op: 'add' | 'update',
  person: (canSeeEmail: boolean, viewer: Pick<User, 'id' | 'role'>) => Person,
  /** Only these viewers (e.g. those whose view of the subject changed). */
  only?: (viewer: Pick<User, 'id' | 'role'>) => boolean,
): Promise<void> {
  const { svc, tx, emit, realm } = ctx;
  // Only those who may see the subject hear of it (can_access_all_users_group).
  const audience = await usersWhoCanSee(svc, tx, realm, subject);
  const viewers = (await tx.selectFrom('users').select(['id', 'role']).where('realm_id', '=', realm.id).where('is_active', '=', true).execute()).filter((v) =>
    canAccess(audience, v.id),
  );
  const byVisibility = new Map<boolean, number[]>([
    [true, []],
    [false, []],
  ]);
  for (const v of viewers) if (!only || only(v)) byVisibility.get(canSeeDeliveryEmail(v, subject))!.push(v.id);
  for (const [canSee, ids] of byVisibility) {
    if (ids.length === 0) continue;
    const sample = viewers.find((v) => v.id === ids[0])!;
    const payload = person(canSee, sample);
    // Clients with client_svcavatar compute provider avatars of users whose email they see.
    const computable = canSee && subject.avatar_source === 'G' && 'avatar_url' in payload;
    emit(realm.id, { type: 'realm_user', op, person: payload }, ids, computable ? { hidden: { avatar_nullable_for: 'all' } } : {});
  }
}

/** Active users who may not see `subject` (a limited can_access_all_users_group). */
async function usersWhoCannotSee(svc: Hooked, tx: Tx, realm: Realm, subject: User): Promise<number[]> {
  const access = await usersWhoCanSee(svc, tx, realm, subject);
  if (access === 'all') return [];
  return (await activeUserIds(tx, realm.id)).filter((id) => !access.has(id));
}

export async function emitUserAdded(ctx: ActionContext<Hooked>, user: User, config: Services['config']): Promise<void> {
  const { svc, tx, emit, realm } = ctx;
  await notifyUsers(ctx, user, 'add', (_canSee, viewer) => {
    const person: Person = { ...formatUser(user, viewer, { clientSvcavatar: false }) };
    if (!user.is_bot) person.profile_data = {};
    return person;
  });
  // Those who may not see the newcomer list an "Unknown user" in its place, as register shows it
  // (clients with user_list_incomplete leave such users out: events/shape.ts drops it for them).
  const blind = await usersWhoCannotSee(svc, tx, realm, user);
  if (blind.length > 0) {
    const placeholder = { ...unknownUser(user.id, realmHost(realm, config)), is_active: true };
    emit(realm.id, { type: 'realm_user', op: 'add', person: placeholder }, blind, { hidden: { inaccessible_user: true } });
  }
  await announceMemberships(ctx, user);
}

/** POST /users: administrators with `can_create_users`. */
export async function createUser(svc: Services, realm: Realm, actor: User, params: { email: string; password: string; full_name: string }): Promise<User> {
  requireCanCreateUsers(actor);
  const fullName = checkFullName(params.full_name);
  const email = params.email.trim();
  if (!isValidEmail(email)) throw badRequest('Bad name or username');
  const refusal = emailRefusal(settingsOf(realm), email);
  if (refusal === 'domain') throw badRequest(`Email '${email}' not allowed in this organization`);
  if (refusal === 'plus') throw badRequest('Email addresses containing + are not allowed.');
  if (refusal === 'disposable') throw badRequest('Disposable email addresses are not allowed in this organization');
  checkPasswordStrength(params.password);
  const passwordHash = await passwordHashOf(svc, params.password);
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    if (await emailInUse(tx, realm.id, email)) throw badRequest('Email is already in use.');
    const user = await insertUser(tx, svc, realm, { email, fullName, passwordHash, role: ROLE.MEMBER });
    await announceNewUser(ctx, user);
    return user;
  });
}

/** For operators (the manage command and bootstrap): no acting user, the same rules on data. */
export async function createUserAsOperator(svc: Services, realm: Realm, u: NewUser): Promise<User> {
  const fullName = checkFullName(u.fullName);
  if (!isValidEmail(u.email)) throw badRequest(`Invalid email '${u.email}'`);
  if (u.password !== null) checkPasswordStrength(u.password);
  const passwordHash = await passwordHashOf(svc, u.password);
  return transactAs(svc, realm, null, async (ctx) => {
    const { tx } = ctx;
    if (await emailInUse(tx, realm.id, u.email)) throw badRequest('Email is already in use.');
    const user = await insertUser(tx, svc, realm, { ...u, fullName, passwordHash });
    await announceNewUser(ctx, user);
    return user;
  });
}

export interface UserChanges {
  full_name?: string;
  role?: number;
  new_email?: string;
  /** Custom profile field values; administrators may set any field. */
  profile_data?: ProfileDataEntry[];
}

/** PATCH /users/{user_id} (spec endpoint 13, digest 1.13). */
export async function updateUser(svc: Services, realm: Realm, actor: User, targetId: number, changes: UserChanges): Promise<void> {
  requireAdmin(actor);
  const profileHtml = await renderProfileTexts(svc, realm, changes.profile_data);
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const target = await accessUser(svc, tx, realm, actor, targetId, { allowDeactivated: true, allowBots: true });
    if (changes.role !== undefined && changes.role !== target.role) {
      await changeRole(ctx, target, changes.role as Role);
    }
    // A blank name is ignored rather than refused, as Zulip does.
    if (changes.full_name !== undefined && changes.full_name.trim() !== '' && changes.full_name !== target.full_name) {
      const name = checkFullName(changes.full_name);
      await tx.updateTable('users').set({ full_name: name }).where('id', '=', target.id).execute();
      await notifyUsers(ctx, target, 'update', () => ({ user_id: target.id, full_name: name }));
    }
    if (changes.new_email !== undefined && changes.new_email !== target.delivery_email) {
      requireCanChangeUserEmails(actor);
      const email = changes.new_email.trim();
      if (!isValidEmail(email)) throw badRequest('Invalid new email address.');
      if (await emailInUse(tx, realm.id, email, target.id)) throw badRequest('New email value error: Email is already in use.');
      await changeDeliveryEmail(ctx, target, email);
    }
    if (changes.profile_data !== undefined) await applyProfileData(ctx, target, changes.profile_data, profileHtml);
  });
}

/** The rules for role changes (digest 1.13), shared by the API and the manage command. */
export async function changeRole(ctx: ActionContext<Hooked>, target: User, role: Role): Promise<void> {
  const { svc, tx, realm, actor } = ctx;
  if (actor) requireOwnerForOwnerRole(actor, role, target.role);
  if (target.role === ROLE.OWNER && role !== ROLE.OWNER && target.is_active && (await countActiveOwners(tx, realm.id)) <= 1) {
    throw badRequest('The owner permission cannot be removed from the only organization owner.');
  }
  requireRoleFits(target, role);
  const channelsBefore = await channelViewer(tx, realm, target);
  const usersBefore = await accessibleUsers(svc, tx, realm, target);
  const updated = await tx.updateTable('users').set({ role }).where('id', '=', target.id).returningAll().executeTakeFirstOrThrow();
  const groupChanges = await syncSystemGroupMembership(tx, updated, settingsOf(realm).waiting_period_threshold);
  await notifyUsers(ctx, target, 'update', () => ({ user_id: target.id, role }));
  await announceMembershipChanges(ctx, updated, groupChanges);
  // A guest promoted into can_access_all_users_group sees everyone; a member made a guest, fewer.
  await announceOwnAccessChange(ctx, updated, usersBefore);
  // A guest sees fewer channels than a member: the difference is announced.
  await announceChannelVisibility(ctx, channelsBefore, updated);
}

/** A new delivery address (and API email where everyone sees it), with its events. */
export async function changeDeliveryEmail(ctx: ActionContext<Hooked>, target: User, email: string): Promise<void> {
  const { tx } = ctx;
  const visibleToAll = canSeeDeliveryEmail(null, target);
  // A provider avatar is derived from the email: it changes with it.
  const avatarChanges = target.avatar_source === 'G';
  const updated = await tx
    .updateTable('users')
    .set({
      delivery_email: email,
      ...(visibleToAll ? { email } : {}),
      ...(avatarChanges ? { avatar_version: target.avatar_version + 1 } : {}),
    })
    .where('id', '=', target.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await notifyUsers(ctx, updated, 'update', (canSee) =>
    canSee ? { user_id: target.id, delivery_email: email } : { user_id: target.id, delivery_email: null },
  );
  if (visibleToAll) {
    await notifyUsers(ctx, updated, 'update', () => ({ user_id: target.id, new_email: email }));
  }
  if (avatarChanges) await notifyUsers(ctx, updated, 'update', () => avatarFacet(updated));
}

/** The avatar facet of a realm_user update. */
export function avatarFacet(user: User): Person {
  const url = avatarUrl(user);
  return {
    user_id: user.id,
    avatar_url: url,
    avatar_source: user.avatar_source,
    avatar_url_medium: mediumAvatarUrl(user),
    avatar_version: user.avatar_version,
  };
}

/** For operators: a role change with the data rules but no acting user. */
export async function changeRoleAsOperator(svc: Services, realm: Realm, userId: number, role: Role): Promise<void> {
  await transactAs(svc, realm, null, async (ctx) => {
    const { tx } = ctx;
    const target = await getUser(tx, realm.id, userId);
    if (!target) throw badRequest('No such user');
    if (target.role !== role) await changeRole(ctx, target, role);
  });
}

/** (De)activates an account with every announcement; no checks (for actions that made theirs). */
export async function setActive(ctx: ActionContext<Services>, target: User, active: boolean): Promise<void> {
  const { svc, tx, realm } = ctx;
  const changed = await tx.updateTable('users').set({ is_active: active }).where('id', '=', target.id).where('is_active', '=', !active).executeTakeFirst();
  // A concurrent request (de)activated them first, and announced it.
  if (changed.numUpdatedRows === 0n) return;
  await countUserActivity(tx, target.id, active);
  await notifyUsers(ctx, target, 'update', () => ({ user_id: target.id, is_active: active }));
  // Deactivated users leave every group (clients drop them; those who cannot see the user are
  // told); reactivated, they are back in them.
  await announceMemberships(ctx, target, active ? undefined : await usersWhoCannotSee(svc, tx, realm, target));
  // Channel and organization settings naming the user change for everyone who knows them.
  await announceChannelSettingMembers(ctx, target);
  await announceRealmSettingMembers(ctx, target);
  await announceSubscriberActivity(ctx, target, active);
  for (const h of svc.hooks.userLifecycle) await (active ? h.reactivated : h.deactivated)?.(ctx, { ...target, is_active: active });
}

/** DELETE /users/{user_id}. */
export async function deactivateUser(svc: Services, realm: Realm, actor: User, targetId: number): Promise<void> {
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const target = await accessUser(svc, tx, realm, actor, targetId, { allowBots: true });
    // Leaving oneself is DELETE /users/me.
    requireMayDeactivate(actor, target);
    if (isOwner(target) && !target.is_bot && (await countActiveOwners(tx, realm.id)) <= 1) {
      throw badRequest('Cannot deactivate the only organization owner');
    }
    await setActive(ctx, target, false);
  });
}

/** DELETE /users/me. */
export async function deactivateOwnAccount(svc: Services, realm: Realm, actor: User): Promise<void> {
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    if (isOwner(actor) && (await countActiveOwners(tx, realm.id)) <= 1) {
      throw new ApiError('CANNOT_DEACTIVATE_LAST_USER', 'Cannot deactivate the only organization owner.', {
        data: { is_last_owner: true, entity: 'user' },
      });
    }
    const others = await tx
      .selectFrom('users')
      .select('id')
      .where('realm_id', '=', realm.id)
      .where('is_active', '=', true)
      .where('is_bot', '=', false)
      .where('id', '!=', actor.id)
      .executeTakeFirst();
    if (!others) {
      throw new ApiError('CANNOT_DEACTIVATE_LAST_USER', 'Cannot deactivate the only user.', {
        data: { is_last_owner: false, entity: 'user' },
      });
    }
    await setActive(ctx, actor, false);
  });
}

/** POST /users/{user_id}/reactivate: administrators only. */
export async function reactivateUser(svc: Services, realm: Realm, actor: User, targetId: number): Promise<void> {
  requireAdmin(actor);
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const target = await accessUser(svc, tx, realm, actor, targetId, { allowDeactivated: true, allowBots: true });
    if (target.is_active) throw badRequest('User is already active.');
    await setActive(ctx, target, true);
  });
}

/** For operators: sets a password without knowing the old one. */
export async function setPasswordAsOperator(svc: Services, realm: Realm, userId: number, password: string): Promise<void> {
  checkPasswordStrength(password);
  const passwordHash = await svc.passwords.hash(password);
  const result = await svc.db
    .updateTable('users')
    .set({ password_hash: passwordHash })
    .where('realm_id', '=', realm.id)
    .where('id', '=', userId)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw badRequest('No such user');
}
