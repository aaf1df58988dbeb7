import type { Executor } from '../db/schema.ts';
import type { User } from './tables.ts';

export type ProfileData = Record<string, { value: string; rendered_value?: string }>;

/** Custom profile field values of each user, keyed by field id. */
export async function profileDataFor(_db: Executor, _realmId: number, _users: User[]): Promise<Map<number, ProfileData>> {
  return new Map();
}
