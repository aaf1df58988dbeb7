import type { Generated, Selectable } from 'kysely';
import type { Timestamp } from '../realm/tables.ts';

/** An email change waiting for the new address to confirm it (users/email-change.ts). */
export interface EmailChangeRequestTable {
  id: Generated<number>;
  token_hash: string;
  realm_id: number;
  user_id: number;
  old_email: string;
  new_email: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

/** A message a user missed, waiting for their batch (email/missed-messages.ts). */
export interface MissedMessageEmailTable {
  id: Generated<string>;
  realm_id: number;
  user_id: number;
  message_id: number;
  trigger: string;
  scheduled_at: Timestamp;
}

/** A user's pending batch: one row while messages wait, removed when its job takes them. */
export interface MissedMessageBatchTable {
  user_id: number;
  realm_id: number;
  scheduled_at: Timestamp;
}

export interface EmailTables {
  email_change_requests: EmailChangeRequestTable;
  missed_message_emails: MissedMessageEmailTable;
  missed_message_batches: MissedMessageBatchTable;
}

export type EmailChangeRequest = Selectable<EmailChangeRequestTable>;
