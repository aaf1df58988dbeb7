import type { Generated, Selectable } from 'kysely';
import type { Timestamp } from '../realm/tables.ts';

/** A signed-in browser (auth/sessions.ts). */
export interface SessionTable {
  id: Generated<number>;
  token_hash: string;
  realm_id: number;
  user_id: number;
  csrf_token: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** A password-reset link, single use (auth/password-reset.ts). */
export interface PasswordResetTokenTable {
  id: Generated<number>;
  token_hash: string;
  realm_id: number;
  user_id: number;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface AuthTables {
  sessions: SessionTable;
  password_reset_tokens: PasswordResetTokenTable;
}

export type Session = Selectable<SessionTable>;
