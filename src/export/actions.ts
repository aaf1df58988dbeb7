// Data exports through the API (the reference's /export/realm): an
// administrator asks, the export is written in the background to
// `<uploads>/exports/<realm>/<secret>/`, and the administrators hear of every
// change through `realm_export` events carrying the whole list.

import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Executor } from '../db/schema.ts';
import { transact, type Emit, type Tx } from '../db/transact.ts';
import { badRequest, mustBeAdmin } from '../http/errors.ts';
import { ROLE, isAdmin } from '../users/roles.ts';
import { realmUrl } from '../realm/queries.ts';
import { uploadsRoot } from '../uploads/storage.ts';
import { silentProgress } from '../backup/progress.ts';
import { exportRealm } from './export.ts';
import { EXPORT_TYPE, type RealmExport } from './tables.ts';

const epoch = (d: Date | null) => (d === null ? null : d.getTime() / 1000);

/** The reference's RealmExport object. */
export function formatExport(svc: Pick<Services, 'config'>, realm: Realm, e: RealmExport) {
  return {
    id: e.id,
    acting_user_id: e.acting_user_id,
    export_time: epoch(e.created_at),
    export_url: e.path !== null && e.deleted_at === null ? `${realmUrl(realm, svc.config)}/user_avatars/${e.path}` : null,
    deleted_timestamp: epoch(e.deleted_at),
    failed_timestamp: epoch(e.failed_at),
    pending: e.path === null && e.failed_at === null && e.deleted_at === null,
    export_type: e.export_type,
  };
}

export async function listExports(svc: Pick<Services, 'config'>, db: Executor, realm: Realm) {
  const rows = await db.selectFrom('realm_exports').selectAll().where('realm_id', '=', realm.id).orderBy('id').execute();
  return rows.map((e) => formatExport(svc, realm, e));
}

/** Tells the organization's administrators the whole list, as the reference does. */
async function emitExports(svc: Services, tx: Tx, emit: Emit, realm: Realm): Promise<void> {
  const admins = await tx.selectFrom('users').select('id').where('realm_id', '=', realm.id).where('is_active', '=', true).where('role', '<=', ROLE.ADMINISTRATOR).execute();
  emit(realm.id, { type: 'realm_export', exports: await listExports(svc, tx, realm) }, admins.map((a) => a.id));
}

/** POST /export/realm: records the request and starts writing the export; returns its id. */
export async function requestExport(svc: Services, realm: Realm, actor: User, exportType: number): Promise<number> {
  if (!isAdmin(actor)) throw mustBeAdmin();
  if (exportType !== EXPORT_TYPE.PUBLIC && exportType !== EXPORT_TYPE.STANDARD) throw badRequest('Invalid export_type');
  const row = await transact(svc, async (tx, emit) => {
    const inserted = await tx.insertInto('realm_exports').values({ realm_id: realm.id, acting_user_id: actor.id, export_type: exportType, path: null, failed_at: null, deleted_at: null }).returningAll().executeTakeFirstOrThrow();
    await emitExports(svc, tx, emit, realm);
    return inserted;
  });
  // Written after the answer: a large organization takes minutes.
  setImmediate(() => void writeExport(svc, realm, row));
  return row.id;
}

/** Writes the file, then records where (or that it failed). */
export async function writeExport(svc: Services, realm: Realm, row: RealmExport): Promise<void> {
  const path = `exports/${realm.id}/${randomBytes(16).toString('hex')}/confab-export-${realm.string_id || 'root'}-${row.id}.tar.gz`;
  const file = join(uploadsRoot(svc.config), path);
  let done: { path: string | null; failed_at: Date | null };
  try {
    mkdirSync(dirname(file), { recursive: true });
    await exportRealm(svc, realm, file, silentProgress(), row.export_type === EXPORT_TYPE.PUBLIC);
    done = { path, failed_at: null };
  } catch (err) {
    svc.log.error({ err, exportId: row.id }, 'data export failed');
    rmSync(dirname(file), { recursive: true, force: true });
    done = { path: null, failed_at: new Date() };
  }
  await transact(svc, async (tx, emit) => {
    // Deleted meanwhile: the file goes too.
    const updated = await tx.updateTable('realm_exports').set(done).where('id', '=', row.id).where('deleted_at', 'is', null).executeTakeFirst();
    if (updated.numUpdatedRows === 0n) rmSync(dirname(file), { recursive: true, force: true });
    else await emitExports(svc, tx, emit, realm);
  });
}

/** DELETE /export/realm/{export_id}: the file goes; the row stays, marked deleted. */
export async function deleteExport(svc: Services, realm: Realm, actor: User, exportId: number): Promise<void> {
  if (!isAdmin(actor)) throw mustBeAdmin();
  const path = await transact(svc, async (tx, emit) => {
    const row = await tx.selectFrom('realm_exports').selectAll().where('realm_id', '=', realm.id).where('id', '=', exportId).forUpdate().executeTakeFirst();
    if (!row) throw badRequest('Invalid data export ID');
    if (row.deleted_at !== null) throw badRequest('Export already deleted');
    if (row.failed_at !== null) throw badRequest('Export failed, nothing to delete');
    if (row.path === null) throw badRequest('Export still in progress');
    await tx.updateTable('realm_exports').set({ deleted_at: new Date() }).where('id', '=', row.id).execute();
    await emitExports(svc, tx, emit, realm);
    return row.path;
  });
  rmSync(dirname(join(uploadsRoot(svc.config), path)), { recursive: true, force: true });
}
