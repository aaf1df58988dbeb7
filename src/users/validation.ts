// The rules for names, emails and passwords of accounts.
import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';
import { badRequest } from '../http/errors.ts';
import type { RealmSettings } from '../realm/settings.ts';

export const MAX_FULL_NAME_LENGTH = 100;
const MIN_FULL_NAME_LENGTH = 2;
// Characters that would make a name ambiguous inside mention syntax.
const NAME_INVALID_CHARS = ['*', '`', '\\', '>', '"', '@'];

/** Zulip's check_full_name: the stripped name, or an error. */
export function checkFullName(raw: string): string {
  const name = raw.trim();
  if (name.length > MAX_FULL_NAME_LENGTH) throw badRequest('Name too long!');
  if (name.length < MIN_FULL_NAME_LENGTH) throw badRequest('Name too short!');
  for (const ch of name) {
    if (/\p{C}/u.test(ch) || NAME_INVALID_CHARS.includes(ch)) throw badRequest('Invalid characters in name!');
  }
  // "Name|15" would read as a mention of user 15.
  if (/\|\d+$/.test(raw)) throw badRequest('Invalid format!');
  return name;
}

const EMAIL =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(localhost|([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63})$/;

export function isValidEmail(email: string): boolean {
  return email.length <= 254 && EMAIL.test(email);
}

let disposable: Set<string> | undefined;

/** Whether the address is at a throwaway-mail provider. */
export function isDisposableEmail(email: string): boolean {
  disposable ??= disposableEmailBlocklistSet();
  return disposable.has(email.slice(email.lastIndexOf('@') + 1).toLowerCase());
}

/**
 * Why the organization does not admit an address for an account, or null (the
 * reference's email_allowed_for_realm). Organizations have no list of allowed
 * domains yet (no realm domains), so one restricted to its domains admits none.
 */
export function emailRefusal(
  settings: Pick<RealmSettings, 'emails_restricted_to_domains' | 'disallow_disposable_email_addresses'>,
  email: string,
): 'plus' | 'domain' | 'disposable' | null {
  if (settings.emails_restricted_to_domains) {
    return email.slice(0, email.lastIndexOf('@')).includes('+') ? 'plus' : 'domain';
  }
  if (settings.disallow_disposable_email_addresses && isDisposableEmail(email)) return 'disposable';
  return null;
}

export const PASSWORD_MIN_LENGTH = 6;
export const PASSWORD_MAX_LENGTH = 100;

export function checkPasswordStrength(password: string): void {
  if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
    throw badRequest('The password is too weak.');
  }
}
