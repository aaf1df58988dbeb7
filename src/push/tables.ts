import type { Generated, Selectable } from 'kysely';
import type { Timestamp } from '../realm/tables.ts';

/** An E2EE push registration of one app install (one per user and push_account_id). */
export interface PushDeviceTable {
  id: Generated<number>;
  realm_id: number;
  user_id: number;
  /** Client-generated; echoed in pushes. */
  push_account_id: number;
  token_kind: string;
  push_public_key: string;
  bouncer_public_key: string;
  encrypted_push_registration: string;
  /** 'pending' until the push service accepts it ('active') or refuses it ('failed'). */
  status: string;
  error_code: string | null;
  date_created: Timestamp;
}

/** A legacy push token (APNs or FCM), one per user, kind and token. */
export interface PushDeviceTokenTable {
  id: Generated<number>;
  realm_id: number;
  user_id: number;
  kind: string;
  token: string;
  ios_app_id: string | null;
  last_updated: Timestamp;
  /** md5(token), generated: the unique key, as a token may outgrow an index row. */
  token_digest: Generated<string>;
}

export interface PushTables {
  push_devices: PushDeviceTable;
  push_device_tokens: PushDeviceTokenTable;
}

export type PushDevice = Selectable<PushDeviceTable>;
