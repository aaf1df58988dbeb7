// The invitation email: who invites, to which organization, the link that
// opens the sign-up page, and the inviter's own words when they wrote some.

import type { Email } from '../email/mailer.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Invitation } from './tables.ts';

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function invitationEmail(realm: Realm, inviter: User, inv: Invitation, link: string): Email {
  const note = inv.welcome_message_custom_text?.trim() || null;
  const expiry = inv.expires_at === null ? 'It does not expire.' : `It works until ${inv.expires_at.toUTCString()}.`;
  const text = [
    `${inviter.full_name} invited you to join ${realm.name} on Confab.`,
    ...(note ? ['', `${inviter.full_name} wrote:`, ...note.split('\n').map((l) => `> ${l}`)] : []),
    '',
    `Create your account here: ${link}`,
    expiry,
    '',
  ].join('\n');
  const html = [
    `<p>${escapeHtml(inviter.full_name)} invited you to join <b>${escapeHtml(realm.name)}</b> on Confab.</p>`,
    ...(note ? [`<blockquote>${escapeHtml(note).replace(/\n/g, '<br>')}</blockquote>`] : []),
    `<p><a href="${escapeHtml(link)}">Create your account</a></p>`,
    `<p>${escapeHtml(expiry)}</p>`,
  ].join('\n');
  return { to: inv.email ?? '', subject: `${inviter.full_name} invited you to join ${realm.name}`, text, html };
}
