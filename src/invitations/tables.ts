import type { Generated, Selectable } from 'kysely';
import type { Timestamp } from '../realm/tables.ts';

export type InvitationStatus = 'pending' | 'used' | 'revoked';

/** An email invitation (`email` set) or a reusable link (`is_multiuse`, no email). */
export interface InvitationTable {
  id: Generated<number>;
  realm_id: number;
  is_multiuse: boolean;
  email: string | null;
  referred_by_id: number;
  invited_as: number;
  /** The secret in the link `<organization URL>/join/<token>/`. */
  token: string;
  invited_at: Timestamp;
  /** Null: never expires. */
  expires_at: Timestamp | null;
  status: Generated<InvitationStatus>;
  include_realm_default_subscriptions: boolean;
  notify_referrer_on_join: boolean;
  welcome_message_custom_text: string | null;
  /** The account an email invitation created. */
  created_user_id: number | null;
}

export interface InvitationChannelTable {
  realm_id: number;
  invitation_id: number;
  channel_id: number;
}

export interface InvitationGroupTable {
  realm_id: number;
  invitation_id: number;
  group_id: number;
}

/** One row per invitation email "sent" (first send or resend): the daily limit counts them. */
export interface InvitationSendTable {
  id: Generated<number>;
  realm_id: number;
  sent_at: Timestamp;
}

/** An organization's daily limit, where the operator set one (else the server's). */
export interface RealmInviteLimitTable {
  realm_id: number;
  daily_max: number;
}

export interface InvitationTables {
  invitations: InvitationTable;
  invitation_channels: InvitationChannelTable;
  invitation_groups: InvitationGroupTable;
  invitation_sends: InvitationSendTable;
  realm_invite_limits: RealmInviteLimitTable;
}

export type Invitation = Selectable<InvitationTable>;
