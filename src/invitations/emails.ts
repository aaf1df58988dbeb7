// The addresses of an invitation request, and which addresses an organization
// admits (digest 1.10; the reference's get_realm_email_validator).

import type { Realm } from '../realm/tables.ts';
import { settingsOf } from '../realm/queries.ts';
import { emailRefusal, isValidEmail } from '../users/validation.ts';

/**
 * `invitee_emails`: addresses separated by commas or newlines, each possibly in
 * the `Name <address>` form; blanks dropped, repeats (ignoring case) once.
 */
export function parseInviteeEmails(raw: string): string[] {
  const seen = new Set<string>();
  const emails: string[] = [];
  for (const part of raw.split(/[,\n]/)) {
    const bracketed = /<([^<>]*)>\s*$/.exec(part);
    const email = (bracketed ? bracketed[1] : part).trim();
    if (email === '' || seen.has(email.toLowerCase())) continue;
    seen.add(email.toLowerCase());
    emails.push(email);
  }
  return emails;
}

/** Why the organization refuses an address, in the reference's words (invitations), or null. */
export function addressRefusal(realm: Realm, email: string): string | null {
  if (!isValidEmail(email)) return 'Invalid address.';
  const refusal = emailRefusal(settingsOf(realm), email);
  if (refusal === 'plus') return 'Email addresses containing + are not allowed.';
  if (refusal === 'domain') return 'Outside your domain.';
  if (refusal === 'disposable') return 'Please use your real email address.';
  return null;
}
