import type { Executor } from '../db/schema.ts';

/** A user's registrations as register reports them: `{"<push_account_id>": {status, error_code}}`. */
export async function pushDevicesOf(db: Executor, userId: number): Promise<Record<string, { status: string; error_code: string | null }>> {
  const rows = await db
    .selectFrom('push_devices')
    .select(['push_account_id', 'status', 'error_code'])
    .where('user_id', '=', userId)
    .orderBy('push_account_id')
    .execute();
  return Object.fromEntries(rows.map((r) => [String(r.push_account_id), { status: r.status, error_code: r.error_code }]));
}
