/** One of Welcome Bot's first messages in an organization (onboarding/actions.ts). */
export interface OnboardingMessageTable {
  realm_id: number;
  message_id: number;
  /** The first message of its topic: starred for each new member. */
  starred: boolean;
}

export interface OnboardingTables {
  onboarding_messages: OnboardingMessageTable;
}
