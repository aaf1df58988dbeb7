import type { Generated, Selectable } from 'kysely';
import type { Json, Timestamp } from '../realm/tables.ts';

export interface UserTable {
  id: Generated<number>;
  realm_id: number;
  /** The API email: the real one, or a fake one when the user hides their address. */
  email: string;
  delivery_email: string;
  full_name: string;
  role: number;
  is_active: Generated<boolean>;
  is_bot: Generated<boolean>;
  bot_type: number | null;
  bot_owner_id: number | null;
  is_mirror_dummy: Generated<boolean>;
  /** An account the server speaks through (users/system-bots.ts), not one of the organization's users. */
  is_system_bot: Generated<boolean>;
  api_key: string;
  password_hash: string | null;
  date_joined: Timestamp;
  timezone: Generated<string>;
  /** 'G': provider-hosted (Gravatar-style) avatar; 'U': uploaded. */
  avatar_source: Generated<string>;
  avatar_version: Generated<number>;
  can_create_users: Generated<boolean>;
  can_change_user_emails: Generated<boolean>;
  /** Personal settings that differ from the defaults (users/settings.ts). */
  settings: Json<Record<string, unknown>>;
  last_active_at: Timestamp | null;
  /** Away for a long time (soft deactivation): plain channel messages leave them no copy until they return. */
  long_term_idle: Generated<boolean>;
  /** While idle: they hold a copy of every message up to this id that they should hold. */
  last_active_message_id: number | null;
  /** Bots: where their messages go when they name no channel, and what their register covers. */
  default_sending_stream_id: number | null;
  default_events_register_stream_id: number | null;
  default_all_public_streams: Generated<boolean>;
}

export interface UserTables {
  users: UserTable;
}

export type User = Selectable<UserTable>;
