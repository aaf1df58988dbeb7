// Every change to invitations (spec endpoint 10, "Authentication" 5; digest 1.10,
// section 2, 5.5): sending, reusable links, revoking, resending, and accepting
// one, which creates the account. Each writes in one transaction and tells
// administrators and the inviter `invites_changed` after the commit.
//
// Email invitations are queued in the same transaction (email/queue.ts) and
// sent by the job worker after the commit; the link is also logged, for the
// operator (docs/DECISIONS.md).

import { randomBytes } from 'node:crypto';
import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Channel } from '../channels/tables.ts';
import type { Invitation } from './tables.ts';
import { sql } from 'kysely';
import { type ActionContext, transact, transactAs, type Tx } from '../db/transact.ts';
import { ApiError, badRequest, insufficientPermission, missingArgument } from '../http/errors.ts';
import { ROLE, type Role } from '../users/roles.ts';
import { checkFullName, checkPasswordStrength } from '../users/validation.ts';
import { emailInUse, getUser } from '../users/queries.ts';
import { announceNewUser, insertUser, passwordHashOf } from '../users/actions.ts';
import { settingsOf } from '../realm/queries.ts';
import { canAddSubscribers, channelViewer, hasMetadataAccess } from '../channels/access.ts';
import { defaultChannelIds, getChannel, listChannels } from '../channels/queries.ts';
import { accessGroupForUpdate, hasRealmPermission } from '../user_groups/access.ts';
import { invitesAsAdministrator, requireAdmin, requireMayGrantRole, requireMemberOrAdmin, requireOwnerForOwnerRole } from '../users/access.ts';
import { addressRefusal, parseInviteeEmails } from './emails.ts';
import { invitationLink } from './format.ts';
import { invitationEmail } from './mail.ts';
import { queueEmail } from '../email/queue.ts';
import { acceptedNotices } from './notices.ts';
import {
  accountsByEmail,
  dailyLimit,
  getInvitation,
  invitationByToken,
  invitationChannelIds,
  invitationGroupIds,
  isLive,
  isRevoked,
  sentInLastDay,
} from './queries.ts';

/** Tells administrators and referrers to fetch the invitation list again. */
export interface InvitesChangedEvent {
  type: 'invites_changed';
}

/** Members younger than this may not invite into an organization anyone can join (digest 5.5). */
const MIN_INVITER_AGE_DAYS = 3;

export interface InvitationSettings {
  /** Null: never expires. */
  expiresInMinutes: number | null;
  invitedAs: Role;
  channelIds: number[];
  groupIds: number[];
  includeRealmDefaultSubscriptions: boolean;
  /** Administrators only; ignored (null) for anyone else. */
  welcomeMessageCustomText: string | null;
}

/** An error triple of INVITATION_FAILED: address, reason, whether the account is deactivated. */
type Skipped = [string, string, boolean];

function invitationFailed(msg: string, errors: Skipped[], flags: { sent: boolean; dailyLimit?: boolean }): ApiError {
  return new ApiError('INVITATION_FAILED', msg, {
    data: { errors, sent_invitations: flags.sent, license_limit_reached: false, daily_limit_reached: flags.dailyLimit ?? false },
  });
}

/**
 * Roles no higher than the caller's own (spec "Authentication" 5). `adminOnly`:
 * managing someone else's invitation, which only administrators may (owners for
 * invitations as owner).
 */
function checkRole(actor: User, role: number, adminOnly: boolean): void {
  requireOwnerForOwnerRole(actor, role);
  if (adminOnly) requireAdmin(actor);
  requireMayGrantRole(actor, role);
}

/** The reference's confirmation keys: 24 characters of lowercase base32 (120 random bits). */
function newToken(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  const bytes = randomBytes(15);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/**
 * Invitation changes of one organization take turns until the transaction ends,
 * so that two requests cannot both pass the daily limit. Taken before any row lock.
 */
async function takeTurns(tx: Tx, realmId: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(${0x494e5601}::integer, ${realmId}::integer)`.execute(tx);
}

/**
 * Channels a new account will join: each a default channel, or one the caller
 * knows of and may subscribe others to (spec endpoint 10).
 */
async function checkChannels(tx: Tx, realm: Realm, actor: User, ids: number[]): Promise<Channel[]> {
  const viewer = await channelViewer(tx, realm, actor);
  const defaults = new Set(await defaultChannelIds(tx, realm.id));
  const channels: Channel[] = [];
  for (const id of new Set(ids)) {
    const channel = await getChannel(tx, realm.id, id);
    if (!channel || channel.is_archived || !(defaults.has(id) || hasMetadataAccess(viewer, channel))) {
      throw badRequest(`Invalid channel ID ${id}. No invites were sent.`);
    }
    channels.push(channel);
  }
  if (channels.some((c) => !defaults.has(c.id) && !canAddSubscribers(viewer, c))) {
    throw badRequest('You do not have permission to subscribe other users to channels.');
  }
  return channels;
}

/** Groups a new account will join: the caller must be allowed to add members to each. */
async function checkGroups(tx: Tx, realm: Realm, actor: User, ids: number[]): Promise<number[]> {
  const groups = [...new Set(ids)];
  for (const id of groups) await accessGroupForUpdate(tx, realm, actor, id, ['can_add_members_group']);
  return groups;
}

async function checkDailyLimit(tx: Tx, svc: Services, realm: Realm, count: number): Promise<void> {
  if (count + (await sentInLastDay(tx, realm.id)) <= (await dailyLimit(tx, realm.id, svc.config))) return;
  throw invitationFailed(
    'To protect users, Confab limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.',
    [],
    { sent: false, dailyLimit: true },
  );
}

/** Where an invitation leads; no email: a reusable link. */
interface InvitationTarget {
  email: string | null;
  notifyReferrerOnJoin: boolean;
  channels: Channel[];
  groupIds: number[];
}

/** Stores an invitation from the actor. */
async function insertInvitation(ctx: ActionContext<unknown, User>, s: InvitationSettings, invite: InvitationTarget): Promise<Invitation> {
  const { tx, realm, actor } = ctx;
  const { channels, groupIds } = invite;
  const now = new Date();
  const inv = await tx
    .insertInto('invitations')
    .values({
      realm_id: realm.id,
      is_multiuse: invite.email === null,
      email: invite.email,
      referred_by_id: actor.id,
      invited_as: s.invitedAs,
      token: newToken(),
      invited_at: now,
      expires_at: s.expiresInMinutes === null ? null : new Date(now.getTime() + s.expiresInMinutes * 60_000),
      include_realm_default_subscriptions: s.includeRealmDefaultSubscriptions,
      notify_referrer_on_join: invite.notifyReferrerOnJoin,
      welcome_message_custom_text: s.welcomeMessageCustomText,
      created_user_id: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (channels.length > 0) {
    await tx
      .insertInto('invitation_channels')
      .values(channels.map((c) => ({ realm_id: realm.id, invitation_id: inv.id, channel_id: c.id })))
      .execute();
  }
  if (groupIds.length > 0) {
    await tx
      .insertInto('invitation_groups')
      .values(groupIds.map((group_id) => ({ realm_id: realm.id, invitation_id: inv.id, group_id })))
      .execute();
  }
  return inv;
}

async function recordSend(tx: Tx, realmId: number, count: number): Promise<void> {
  const now = new Date();
  await tx
    .insertInto('invitation_sends')
    .values(Array.from({ length: count }, () => ({ realm_id: realmId, sent_at: now })))
    .execute();
}

/** `invites_changed` to the organization's administrators and the inviters concerned (digest section 3). */
async function notifyInvitesChanged(ctx: ActionContext<unknown>, referrerIds: number[]): Promise<void> {
  const { tx, emit, realm } = ctx;
  const admins = await tx
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', realm.id)
    .where('is_active', '=', true)
    .where('role', '<=', ROLE.ADMINISTRATOR)
    .execute();
  emit(realm.id, { type: 'invites_changed' }, new Set([...admins.map((a) => a.id), ...referrerIds]));
}

/** Queues the invitation's email in the transaction that stores the invitation: both happen, or neither. */
async function deliver(ctx: ActionContext<Pick<Services, 'config' | 'log'>>, inv: Invitation, inviter: User): Promise<void> {
  const { svc, tx, realm } = ctx;
  const link = invitationLink(realm, svc.config, inv.token);
  svc.log.info({ realm: realm.string_id, invitation_id: inv.id, email: inv.email, link }, 'invitation to deliver');
  await queueEmail(tx, realm.id, invitationEmail(realm, inviter, inv, link));
}

/** Who may invite at all, and as what: shared by email invitations and links. */
async function checkInviter(svc: Services, realm: Realm, actor: User, setting: 'can_invite_users_group' | 'create_multiuse_invite_group', role: Role) {
  requireMemberOrAdmin(actor);
  if (!(await hasRealmPermission(svc.db, realm, actor, setting))) throw insufficientPermission();
  checkRole(actor, role, false);
}

/** POST /invites (spec endpoint 10, digest 1.10). */
export async function sendInvitations(
  svc: Services,
  realm: Realm,
  actor: User,
  inviteeEmails: string,
  s: InvitationSettings & { notifyReferrerOnJoin: boolean },
): Promise<void> {
  await checkInviter(svc, realm, actor, 'can_invite_users_group', s.invitedAs);
  const emails = parseInviteeEmails(inviteeEmails);
  if (emails.length === 0) throw badRequest('You must specify at least one email address.');
  const settings = { ...s, welcomeMessageCustomText: invitesAsAdministrator(actor) ? s.welcomeMessageCustomText : null };
  const { skipped } = await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    await takeTurns(tx, realm.id);
    const channels = await checkChannels(tx, realm, actor, s.channelIds);
    const groupIds = await checkGroups(tx, realm, actor, s.groupIds);
    await checkDailyLimit(tx, svc, realm, emails.length);
    const joined = actor.date_joined.getTime();
    if (!settingsOf(realm).invite_required && !invitesAsAdministrator(actor) && joined > Date.now() - MIN_INVITER_AGE_DAYS * 86_400_000) {
      throw invitationFailed('Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.', [], {
        sent: false,
      });
    }
    const invalid: Skipped[] = [];
    const valid: string[] = [];
    for (const email of emails) {
      const refusal = addressRefusal(realm, email);
      if (refusal === null) valid.push(email);
      else invalid.push([email, refusal, false]);
    }
    const accounts = new Map((await accountsByEmail(tx, realm.id, valid)).map((u) => [u.delivery_email.toLowerCase(), u]));
    const skipped: Skipped[] = [];
    for (const email of valid) {
      const account = accounts.get(email.toLowerCase());
      if (account) skipped.push([email, 'Already has an account.', !account.is_active]);
    }
    if (invalid.length > 0) {
      throw invitationFailed("Some emails did not validate, so we didn't send any invitations.", [...invalid, ...skipped], { sent: false });
    }
    if (skipped.length === emails.length) throw invitationFailed("We weren't able to invite anyone.", skipped, { sent: false });
    const sent: Invitation[] = [];
    for (const email of valid) {
      if (accounts.has(email.toLowerCase())) continue;
      sent.push(await insertInvitation(ctx, settings, { email, notifyReferrerOnJoin: s.notifyReferrerOnJoin, channels, groupIds }));
    }
    await recordSend(tx, realm.id, sent.length);
    for (const inv of sent) await deliver(ctx, inv, actor);
    await notifyInvitesChanged(ctx, [actor.id]);
    return { sent, skipped };
  });
  if (skipped.length > 0) {
    throw invitationFailed(
      "Some of those addresses are already using Confab, so we didn't send them an invitation. We did send invitations to everyone else!",
      skipped,
      { sent: true },
    );
  }
}

/** POST /invites/multiuse: a link anyone may join through until it expires or is revoked. */
export async function createInviteLink(svc: Services, realm: Realm, actor: User, s: InvitationSettings): Promise<string> {
  await checkInviter(svc, realm, actor, 'create_multiuse_invite_group', s.invitedAs);
  const settings = { ...s, welcomeMessageCustomText: invitesAsAdministrator(actor) ? s.welcomeMessageCustomText : null };
  const inv = await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const channels = await checkChannels(tx, realm, actor, s.channelIds);
    const groupIds = await checkGroups(tx, realm, actor, s.groupIds);
    const inv = await insertInvitation(ctx, settings, { email: null, notifyReferrerOnJoin: true, channels, groupIds });
    await notifyInvitesChanged(ctx, [actor.id]);
    return inv;
  });
  return invitationLink(realm, svc.config, inv.token);
}

/**
 * An invitation `actor` may manage, locked: their own, or anyone's for
 * administrators. Used invitations are gone, as in the reference.
 */
async function accessInvitation(tx: Tx, realm: Realm, actor: User, id: number, multiuse: boolean): Promise<Invitation> {
  const inv = await getInvitation(tx, realm.id, id, { multiuse, forUpdate: true });
  if (!inv || inv.status === 'used') throw badRequest('No such invitation');
  if (inv.referred_by_id !== actor.id) checkRole(actor, inv.invited_as, true);
  return inv;
}

/** DELETE /invites/{id} and DELETE /invites/multiuse/{id}. */
export async function revokeInvitation(svc: Services, realm: Realm, actor: User, id: number, multiuse: boolean): Promise<void> {
  requireMemberOrAdmin(actor);
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const inv = await accessInvitation(tx, realm, actor, id, multiuse);
    if (isRevoked(inv)) throw badRequest('Invitation has already been revoked');
    await tx.updateTable('invitations').set({ status: 'revoked' }).where('id', '=', inv.id).execute();
    await notifyInvitesChanged(ctx, [inv.referred_by_id]);
  });
}

/**
 * POST /invites/{id}/resend: a new link (the old one stops working), valid as
 * long after now as the invitation was at first; counts toward the daily limit.
 */
export async function resendInvitation(svc: Services, realm: Realm, actor: User, id: number): Promise<void> {
  requireMemberOrAdmin(actor);
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    await takeTurns(tx, realm.id);
    const inv = await accessInvitation(tx, realm, actor, id, false);
    if (isRevoked(inv)) throw badRequest('No such invitation');
    await checkDailyLimit(tx, svc, realm, 1);
    const now = new Date();
    const validity = inv.expires_at === null ? null : inv.expires_at.getTime() - inv.invited_at.getTime();
    const updated = await tx
      .updateTable('invitations')
      .set({ token: newToken(), invited_at: now, expires_at: validity === null ? null : new Date(now.getTime() + validity) })
      .where('id', '=', inv.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordSend(tx, realm.id, 1);
    const inviter = (await getUser(tx, realm.id, inv.referred_by_id)) ?? actor;
    await deliver(ctx, updated, inviter);
    await notifyInvitesChanged(ctx, [inv.referred_by_id]);
  });
}

export interface Acceptance {
  key: string;
  /** Required for reusable links; for email invitations, if given, the invited address. */
  email: string | undefined;
  full_name: string;
  password: string;
}

/**
 * POST /invites/accept (ours, docs/DECISIONS.md): creates the account an
 * invitation describes — its role, channels (and the default channels where it
 * says so) and groups — with everything account creation announces.
 */
export async function acceptInvitation(svc: Services, realm: Realm | undefined, a: Acceptance): Promise<User> {
  if (!realm) throw new ApiError('NONEXISTENT_SUBDOMAIN', 'Invalid subdomain');
  if (realm.deactivated) throw new ApiError('REALM_DEACTIVATED', 'This organization has been deactivated');
  const fullName = checkFullName(a.full_name);
  checkPasswordStrength(a.password);
  const passwordHash = await passwordHashOf(svc, a.password);
  return transactAs(svc, realm, null, async (ctx) => {
    const { tx } = ctx;
    const inv = await invitationByToken(tx, a.key.trim());
    if (!inv || inv.realm_id !== realm.id) throw badRequest('Invalid invitation link.');
    if (inv.status === 'used') throw badRequest('This invitation has already been used.');
    if (isRevoked(inv)) throw badRequest('This invitation has been revoked.');
    if (!isLive(inv)) throw badRequest('This invitation has expired.');
    let email: string;
    if (inv.email === null) {
      if (a.email === undefined) throw missingArgument('email');
      email = a.email.trim();
      const refusal = addressRefusal(realm, email);
      if (refusal !== null) throw badRequest(refusal);
    } else {
      email = inv.email;
      if (a.email !== undefined && a.email.trim().toLowerCase() !== email.toLowerCase()) {
        throw badRequest('This invitation was sent to another email address.');
      }
    }
    if (await emailInUse(tx, realm.id, email)) throw badRequest('Email is already in use.');

    const user = await insertUser(tx, svc, realm, { email, fullName, passwordHash, role: inv.invited_as as Role });
    // Memberships first: the creation announcement then includes the invitation's groups.
    const groupIds = await invitationGroupIds(tx, inv.id);
    if (groupIds.length > 0) {
      await tx
        .insertInto('user_group_members')
        .values(groupIds.map((group_id) => ({ realm_id: realm.id, group_id, user_id: user.id })))
        .execute();
    }
    if (!inv.is_multiuse) {
      await tx.updateTable('invitations').set({ status: 'used', created_user_id: user.id }).where('id', '=', inv.id).execute();
    }
    const channelIds = new Set(await invitationChannelIds(tx, inv.id));
    if (inv.include_realm_default_subscriptions) for (const id of await defaultChannelIds(tx, realm.id)) channelIds.add(id);
    const channels = (await listChannels(tx, realm.id, [...channelIds])).filter((c) => !c.is_archived);
    const notices = acceptedNotices(inv, await getUser(tx, realm.id, inv.referred_by_id), user);
    // The users domain's creation hook (spendInvitationsTo, wiring.ts) sends an email invitation's inviter invites_changed.
    await announceNewUser(ctx, user, { channels, notices, welcomeText: inv.welcome_message_custom_text });
    if (inv.is_multiuse) await notifyInvitesChanged(ctx, [inv.referred_by_id]);
    return user;
  });
}

// ---------------------------------------------------------------- hooks for the users domain

/**
 * A new account spends every other pending invitation to its address, however
 * it was created (as the reference revokes them); the inviters concerned, and
 * the one whose invitation created it, are told.
 */
export async function spendInvitationsTo(ctx: ActionContext<unknown>, user: User): Promise<void> {
  const { tx, realm } = ctx;
  const revoked = await tx
    .updateTable('invitations')
    .set({ status: 'revoked' })
    .where('realm_id', '=', realm.id)
    .where('status', '=', 'pending')
    .where('is_multiuse', '=', false)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', user.delivery_email.toLowerCase()))
    .returning('referred_by_id')
    .execute();
  const used = await tx.selectFrom('invitations').select('referred_by_id').where('created_user_id', '=', user.id).execute();
  const referrers = [...revoked, ...used].map((r) => r.referred_by_id);
  if (referrers.length > 0) await notifyInvitesChanged(ctx, referrers);
}

/** A deactivated account's pending invitations and links are revoked for good (as in the reference). */
export async function revokeInvitationsBy(ctx: ActionContext<unknown>, user: User): Promise<void> {
  const { tx, realm } = ctx;
  const revoked = await tx
    .updateTable('invitations')
    .set({ status: 'revoked' })
    .where('realm_id', '=', realm.id)
    .where('referred_by_id', '=', user.id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  if (revoked.numUpdatedRows > 0n) await notifyInvitesChanged(ctx, []);
}

/** For operators: an organization's own daily limit; null goes back to the server's (INVITES_DAILY_LIMIT). */
export async function setDailyInvitationLimit(svc: Services, realmId: number, limit: number | null): Promise<void> {
  if (limit !== null && (!Number.isInteger(limit) || limit < 0)) throw badRequest('The daily limit is a number of invitations (0 or more)');
  await transact(svc, async (tx) => {
    await tx.deleteFrom('realm_invite_limits').where('realm_id', '=', realmId).execute();
    if (limit !== null) await tx.insertInto('realm_invite_limits').values({ realm_id: realmId, daily_max: limit }).execute();
  });
}
