// Forgotten passwords: an emailed link with a single-use, expiring secret
// (only its hash is stored). Asking never says whether the address has an
// account; using the link sets the password and ends every browser session.
// The token and its email are written in one transaction (email/queue.ts).

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { Email } from '../email/mailer.ts';
import { escapeHtml } from '../markdown/util.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import { transact } from '../db/transact.ts';
import { queueEmail } from '../email/queue.ts';
import { realmUrl, settingsOf } from '../realm/queries.ts';
import { getUserByEmail } from '../users/queries.ts';
import { checkPasswordStrength } from '../users/validation.ts';
import { randomToken } from './passwords.ts';
import { endUserSessions, hashToken } from './sessions.ts';

/** Reset emails one address may receive per hour; past it, asking still says "success". */
const RESETS_PER_HOUR = 5;

export function passwordResetLink(realm: Pick<Realm, 'string_id'>, config: Services['config'], token: string): string {
  return `${realmUrl(realm, config)}/accounts/password/reset/${token}`;
}

function usable(realm: Realm | undefined): Realm {
  if (!realm) throw new ApiError('NONEXISTENT_SUBDOMAIN', 'Invalid subdomain');
  if (realm.deactivated) throw new ApiError('REALM_DEACTIVATED', 'This organization has been deactivated');
  return realm;
}

/** POST /accounts/password/reset: emails a link if the address has an active account here. */
export async function requestPasswordReset(svc: Services, realmOrNone: Realm | undefined, email: string): Promise<void> {
  const realm = usable(realmOrNone);
  const address = email.trim();
  const user = await getUserByEmail(svc.db, realm.id, address);
  if (!user || !user.is_active || user.is_bot || !settingsOf(realm).password_auth_enabled) return;
  if (!(await svc.rateLimiter.hit(`password-reset:${user.id}`, RESETS_PER_HOUR, 3600)).allowed) return;
  const token = randomToken(40);
  const now = new Date();
  const link = passwordResetLink(realm, svc.config, token);
  const hours = Math.round(svc.config.passwordResetValidityMinutes / 60);
  await transact(svc, async (tx) => {
    await tx
      .insertInto('password_reset_tokens')
      .values({
        token_hash: hashToken(token),
        realm_id: realm.id,
        user_id: user.id,
        created_at: now,
        expires_at: new Date(now.getTime() + svc.config.passwordResetValidityMinutes * 60_000),
      })
      .execute();
    await queueEmail(tx, realm.id, passwordResetEmail(realm, user.delivery_email, link, hours));
  });
}

function passwordResetEmail(realm: Realm, address: string, link: string, hours: number): Email {
  const text = `Someone (hopefully you) asked to reset the password of ${address} in ${realm.name}.\n\nSet a new password here (the link works once, for ${hours} hours):\n${link}\n\nIf it was not you, ignore this email: nothing changes.\n`;
  const html = [
    `<p>Someone (hopefully you) asked to reset the password of ${escapeHtml(address)} in <b>${escapeHtml(realm.name)}</b>.</p>`,
    `<p><a href="${escapeHtml(link)}">Set a new password</a> (the link works once, for ${hours} hours).</p>`,
    '<p>If it was not you, ignore this email: nothing changes.</p>',
  ].join('\n');
  return { to: address, subject: `Reset your password for ${realm.name}`, text, html };
}

/** POST /accounts/password/reset/<token>: the link's one use. */
export async function resetPassword(svc: Services, realmOrNone: Realm | undefined, token: string, newPassword: string): Promise<void> {
  const realm = usable(realmOrNone);
  checkPasswordStrength(newPassword);
  const passwordHash = await svc.passwords.hash(newPassword);
  await transact(svc, async (tx) => {
    const row = await tx
      .selectFrom('password_reset_tokens')
      .selectAll()
      .where('token_hash', '=', hashToken(token))
      .where('realm_id', '=', realm.id)
      .forUpdate()
      .executeTakeFirst();
    if (!row || row.used_at !== null) throw badRequest('This password reset link is invalid or has already been used.');
    if (row.expires_at.getTime() <= Date.now()) throw badRequest('This password reset link has expired. Ask for a new one.');
    const user = await tx.selectFrom('users').select('is_active').where('id', '=', row.user_id).executeTakeFirstOrThrow();
    if (!user.is_active) throw new ApiError('USER_DEACTIVATED', 'Account is deactivated');
    await tx.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', row.user_id).execute();
    // Every link of this user is spent: an older email cannot undo the new password.
    await tx.updateTable('password_reset_tokens').set({ used_at: new Date() }).where('user_id', '=', row.user_id).where('used_at', 'is', null).execute();
    await endUserSessions(tx, realm.id, row.user_id);
  });
}
