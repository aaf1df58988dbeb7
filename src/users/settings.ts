// Personal settings stored on the user row (users.settings holds what differs).
export const EMAIL_ADDRESS_VISIBILITY = {
  EVERYONE: 1,
  MEMBERS: 2,
  ADMINS: 3,
  NOBODY: 4,
  MODERATORS: 5,
} as const;

export function emailAddressVisibility(settings: Record<string, unknown>): number {
  const v = settings.email_address_visibility;
  return typeof v === 'number' ? v : EMAIL_ADDRESS_VISIBILITY.EVERYONE;
}
