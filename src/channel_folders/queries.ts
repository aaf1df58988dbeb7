import type { Executor } from '../db/schema.ts';
import type { ChannelFolder } from '../channels/tables.ts';

export async function listFolders(db: Executor, realmId: number, includeArchived: boolean): Promise<ChannelFolder[]> {
  let q = db.selectFrom('channel_folders').selectAll().where('realm_id', '=', realmId);
  if (!includeArchived) q = q.where('is_archived', '=', false);
  return q.orderBy('order').orderBy('id').execute();
}
