// The addresses of an invitation request, and which addresses an organization
// admits (digest 1.10; the reference's get_realm_email_validator).

import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';
import type { Realm } from '../realm/tables.ts';
import { settingsOf } from '../realm/queries.ts';
import { isValidEmail } from '../users/validation.ts';

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

let disposable: Set<string> | undefined;

function isDisposableDomain(domain: string): boolean {
  disposable ??= disposableEmailBlocklistSet();
  return disposable.has(domain.toLowerCase());
}

const domainOf = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/**
 * Why the organization refuses an address, in the reference's words, or null.
 * Organizations have no list of allowed domains yet (no realm domains), so an
 * organization restricted to its domains admits no address.
 */
export function addressRefusal(realm: Realm, email: string): string | null {
  if (!isValidEmail(email)) return 'Invalid address.';
  const settings = settingsOf(realm);
  if (settings.emails_restricted_to_domains) {
    if (email.slice(0, email.lastIndexOf('@')).includes('+')) return 'Email addresses containing + are not allowed.';
    return 'Outside your domain.';
  }
  if (settings.disallow_disposable_email_addresses && isDisposableDomain(domainOf(email))) return 'Please use your real email address.';
  return null;
}
