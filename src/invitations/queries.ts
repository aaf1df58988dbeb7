// Reads of invitations: the live ones a user manages, one by id or by link, and
// what the daily limit counts.

import type { Executor } from '../db/schema.ts';
import type { Config } from '../config.ts';
import type { User } from '../users/tables.ts';
import type { Invitation } from './tables.ts';
import { managesEveryones, requireMemberOrAdmin } from '../users/access.ts';

/** Pending and not expired at `now`. */
export function isLive(invitation: Pick<Invitation, 'status' | 'expires_at'>, now = new Date()): boolean {
  return invitation.status === 'pending' && (invitation.expires_at === null || invitation.expires_at > now);
}

/**
 * The live invitations `viewer` manages (digest section 2: administrators manage
 * everyone's, other members their own; guests and bots none): email invitations
 * first, then links, each oldest first.
 */
export async function managedInvitations(db: Executor, viewer: User): Promise<Invitation[]> {
  requireMemberOrAdmin(viewer);
  let q = db
    .selectFrom('invitations')
    .selectAll()
    .where('realm_id', '=', viewer.realm_id)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', new Date())]));
  if (!managesEveryones(viewer)) q = q.where('referred_by_id', '=', viewer.id);
  else q = q.where('referred_by_id', 'in', (eb) => eb.selectFrom('users').select('id').where('realm_id', '=', viewer.realm_id).where('is_active', '=', true));
  return q.orderBy('is_multiuse').orderBy('id').execute();
}

/** Revoked by an administrator, by deactivating the inviter, or by the address's account being created. */
export function isRevoked(inv: Pick<Invitation, 'status'>): boolean {
  return inv.status === 'revoked';
}

export async function getInvitation(
  db: Executor,
  realmId: number,
  id: number,
  opts: { multiuse: boolean; forUpdate?: boolean },
): Promise<Invitation | undefined> {
  let q = db.selectFrom('invitations').selectAll().where('realm_id', '=', realmId).where('id', '=', id).where('is_multiuse', '=', opts.multiuse);
  if (opts.forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** The invitation a link names, locked until the transaction ends (two acceptances take turns). */
export async function invitationByToken(db: Executor, token: string): Promise<Invitation | undefined> {
  return db.selectFrom('invitations').selectAll().where('token', '=', token).forUpdate().executeTakeFirst();
}

export async function invitationChannelIds(db: Executor, invitationId: number): Promise<number[]> {
  const rows = await db.selectFrom('invitation_channels').select('channel_id').where('invitation_id', '=', invitationId).orderBy('channel_id').execute();
  return rows.map((r) => r.channel_id);
}

export async function invitationGroupIds(db: Executor, invitationId: number): Promise<number[]> {
  const rows = await db.selectFrom('invitation_groups').select('group_id').where('invitation_id', '=', invitationId).orderBy('group_id').execute();
  return rows.map((r) => r.group_id);
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Invitation emails the organization sent in the last 24 hours (resends included). */
export async function sentInLastDay(db: Executor, realmId: number): Promise<number> {
  const row = await db
    .selectFrom('invitation_sends')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('realm_id', '=', realmId)
    .where('sent_at', '>', new Date(Date.now() - DAY_MS))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The organization's daily limit: its own where the operator set one, else the server's. */
export async function dailyLimit(db: Executor, realmId: number, config: Pick<Config, 'invitations'>): Promise<number> {
  const row = await db.selectFrom('realm_invite_limits').select('daily_max').where('realm_id', '=', realmId).executeTakeFirst();
  return row?.daily_max ?? config.invitations.dailyLimit;
}

/** Accounts (active or not) whose real address is one of `emails`, compared without case. */
export async function accountsByEmail(db: Executor, realmId: number, emails: string[]): Promise<Pick<User, 'delivery_email' | 'is_active'>[]> {
  if (emails.length === 0) return [];
  return db
    .selectFrom('users')
    .select(['delivery_email', 'is_active'])
    .where('realm_id', '=', realmId)
    .where((eb) =>
      eb(
        eb.fn('lower', ['delivery_email']),
        'in',
        emails.map((e) => e.toLowerCase()),
      ),
    )
    .execute();
}
