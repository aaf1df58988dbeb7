// Files uploaded but never linked to a message (the reference's
// delete_old_unclaimed_attachments): after `days` they go, row and bytes, unless
// a scheduled message that has not been sent yet links them (it claims its
// files only when it is sent). Run by the daily retention pass, which holds the
// cluster-wide pass lock.

import { sql } from 'kysely';
import type { Services } from '../services.ts';
import { transact } from '../db/transact.ts';
import { intArray } from '../db/ids.ts';
import { notifyAttachment } from './events.ts';
import { attachmentKeys } from './actions.ts';
import { UNLINKED } from './queries.ts';

const DAY_MS = 86_400_000;

/** Deletes unclaimed files uploaded before `now - days`, `batchSize` per transaction; returns how many went. */
export async function deleteUnclaimedUploads(svc: Services, now: Date, days: number, batchSize: number): Promise<number> {
  if (!(days > 0)) return 0;
  const before = new Date(now.getTime() - days * DAY_MS);
  let total = 0;
  for (;;) {
    const gone = await transact(svc, async (tx, emit) => {
      const rows = await tx
        .selectFrom('attachments as a')
        .selectAll('a')
        .where('a.create_time', '<', before)
        .where(UNLINKED)
        .where(sql<boolean>`not exists (select 1 from scheduled_messages s
          where s.realm_id = a.realm_id and not s.delivered and strpos(s.content, a.path_id) > 0)`)
        .orderBy('a.id')
        .limit(batchSize)
        .forUpdate()
        .execute();
      if (rows.length === 0) return rows;
      await tx
        .deleteFrom('attachments')
        .where('id', '=', sql<number>`any(${intArray(rows.map((r) => r.id))})`)
        .execute();
      // The owner's uploads list and quota change, as when they delete a file.
      for (const a of rows) await notifyAttachment({ tx, emit, realm: { id: a.realm_id } }, a.owner_id, 'remove', { id: a.id });
      return rows;
    });
    // After the commit: a failed removal leaves bytes no row points at, never a row without bytes.
    for (const row of gone) for (const key of attachmentKeys(row)) await svc.storage.delete(key);
    total += gone.length;
    if (gone.length < batchSize) return total;
  }
}
