// Changing one's own email address (PATCH /settings `email`), as the reference
// does: the request emails a link to the new address, and following the link
// makes the change (the reference's confirm_email_change), so that nobody takes
// an address they cannot read. The old address is told afterwards. Only the
// hash of the link's secret is stored; a link works once, for a day.

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from './tables.ts';
import type { Email } from '../email/mailer.ts';
import type { Tx } from '../db/transact.ts';
import { transactAs } from '../db/transact.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import { realmUrl } from '../realm/queries.ts';
import { queueEmail } from '../email/queue.ts';
import { escapeHtml } from '../markdown/util.ts';
import { randomToken } from '../auth/passwords.ts';
import { hashToken } from '../auth/sessions.ts';
import { rateLimited } from '../auth/rate-limit-http.ts';
import { mayChangeOwn } from './access.ts';
import { isValidEmail } from './validation.ts';
import { emailInUse, getUser } from './queries.ts';
import { changeDeliveryEmail } from './actions.ts';

/** The reference's confirmation links last a day (CONFIRMATION_LINK_DEFAULT_VALIDITY_DAYS). */
const VALIDITY_MS = 24 * 3600_000;
/** Confirmation emails one user may ask for per hour (the reference rate-limits email_change_by_user). */
const REQUESTS_PER_HOUR = 5;

export function emailChangeLink(realm: Pick<Realm, 'string_id'>, config: Services['config'], token: string): string {
  return `${realmUrl(realm, config)}/accounts/confirm_new_email/${token}`;
}

/** The checks a change must pass, when asked and again when confirmed. */
async function checkNewEmail(db: Services['db'] | Tx, realm: Realm, user: User, email: string): Promise<void> {
  if (!mayChangeOwn(realm, user, 'email_changes_disabled')) throw badRequest('Email address changes are disabled in this organization.');
  if (!isValidEmail(email)) throw badRequest('Invalid address.');
  if (await emailInUse(db, realm.id, email, user.id)) throw badRequest('Email is already in use.');
}

/** Checks a requested change; true when there is one to confirm. */
export async function checkEmailChange(svc: Services, realm: Realm, user: User, raw: string): Promise<boolean> {
  const email = raw.trim();
  if (email === user.delivery_email) return false;
  await checkNewEmail(svc.db, realm, user, email);
  const limit = await svc.rateLimiter.hit(`email-change:${user.id}`, REQUESTS_PER_HOUR, 3600);
  if (!limit.allowed) throw rateLimited(limit.retryAfter);
  return true;
}

/** In the settings change's transaction: the link, and its email to the new address. */
export async function startEmailChange(svc: Services, tx: Tx, realm: Realm, user: User, raw: string): Promise<void> {
  const newEmail = raw.trim();
  const token = randomToken(32);
  const now = new Date();
  await tx
    .insertInto('email_change_requests')
    .values({
      token_hash: hashToken(token),
      realm_id: realm.id,
      user_id: user.id,
      old_email: user.delivery_email,
      new_email: newEmail,
      created_at: now,
      expires_at: new Date(now.getTime() + VALIDITY_MS),
      used_at: null,
    })
    .execute();
  await queueEmail(tx, realm.id, confirmationEmail(realm, user, newEmail, emailChangeLink(realm, svc.config, token)));
}

/** GET /accounts/confirm_new_email/<token>: the link's one use; the new address. */
export async function confirmEmailChange(svc: Services, realm: Realm | undefined, token: string): Promise<{ realm: Realm; email: string }> {
  if (!realm) throw new ApiError('NONEXISTENT_SUBDOMAIN', 'Invalid subdomain');
  if (realm.deactivated) throw new ApiError('REALM_DEACTIVATED', 'This organization has been deactivated');
  return transactAs(svc, realm, null, async (ctx) => {
    const { tx } = ctx;
    const row = await tx
      .selectFrom('email_change_requests')
      .selectAll()
      .where('token_hash', '=', hashToken(token))
      .where('realm_id', '=', realm.id)
      .forUpdate()
      .executeTakeFirst();
    if (!row || row.used_at !== null) throw badRequest('This confirmation link is invalid or has already been used.');
    if (row.expires_at.getTime() <= Date.now()) throw badRequest('This confirmation link has expired. Change your email address again to get a new one.');
    const user = await getUser(tx, realm.id, row.user_id);
    if (!user?.is_active) throw new ApiError('USER_DEACTIVATED', 'Account is deactivated');
    // The organization's rules and the address's availability may have changed since.
    await checkNewEmail(tx, realm, user, row.new_email);
    await tx.updateTable('email_change_requests').set({ used_at: new Date() }).where('user_id', '=', user.id).where('used_at', 'is', null).execute();
    await changeDeliveryEmail(ctx, user, row.new_email);
    await queueEmail(tx, realm.id, changedNotice(realm, user, row.new_email));
    return { realm, email: row.new_email };
  });
}

function confirmationEmail(realm: Realm, user: User, newEmail: string, link: string): Email {
  const text = [
    `${user.full_name} asked to change the email address of their account in ${realm.name} from ${user.delivery_email} to this one (${newEmail}).`,
    '',
    `Confirm the change here (the link works once, for a day): ${link}`,
    '',
    'If it was not you, ignore this email: nothing changes.',
    '',
  ].join('\n');
  const html = [
    `<p>${escapeHtml(user.full_name)} asked to change the email address of their account in <b>${escapeHtml(realm.name)}</b> from ${escapeHtml(user.delivery_email)} to this one (${escapeHtml(newEmail)}).</p>`,
    `<p><a href="${escapeHtml(link)}">Confirm the change</a> (the link works once, for a day).</p>`,
    '<p>If it was not you, ignore this email: nothing changes.</p>',
  ].join('\n');
  return { to: newEmail, subject: `Verify your new email address for ${realm.name}`, text, html };
}

/** To the old address, after the change (the reference's notify_change_in_email). */
function changedNotice(realm: Realm, user: User, newEmail: string): Email {
  const text = `The email address of your account in ${realm.name} is now ${newEmail} (it was ${user.delivery_email}).\n\nIf you did not make this change, contact your organization's administrators at once.\n`;
  const html = `<p>The email address of your account in <b>${escapeHtml(realm.name)}</b> is now ${escapeHtml(newEmail)} (it was ${escapeHtml(user.delivery_email)}).</p>\n<p>If you did not make this change, contact your organization's administrators at once.</p>`;
  return { to: user.delivery_email, subject: `Email address changed for ${realm.name}`, text, html };
}
