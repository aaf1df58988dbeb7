// Data exports through the API (the reference's /export/realm): an
// administrator asks, the export is written in the background to
// `<uploads>/exports/<realm>/<secret>/`, and the administrators hear of every
// change through `realm_export` events carrying the whole list.

import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Executor } from '../db/schema.ts';
import { type ActionContext, transactAs, type Tx } from '../db/transact.ts';
import { badRequest } from '../http/errors.ts';
import { ROLE } from '../users/roles.ts';
import { realmUrl } from '../realm/queries.ts';
import { activeAdministratorIds } from '../users/queries.ts';
import { uploadsRoot } from '../uploads/storage.ts';
import { silentProgress } from '../backup/progress.ts';
import { EMAIL_ADDRESS_VISIBILITY, emailAddressVisibility } from '../users/settings.ts';
import { consentingUserIds, exportRealm } from './export.ts';
import { EXPORT_TYPE, type RealmExport } from './tables.ts';
import { requireAdmin } from '../users/access.ts';

export interface RealmExportEvent {
  type: 'realm_export';
  exports: ReturnType<typeof formatExport>[];
}

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
async function emitExports(ctx: ActionContext<Pick<Services, 'config'>>): Promise<void> {
  const { svc, tx, emit, realm } = ctx;
  emit(realm.id, { type: 'realm_export', exports: await listExports(svc, tx, realm) }, await activeAdministratorIds(tx, realm.id));
}

/** The reference's limit: exports an organization may request in seven days (failed and deleted ones count). */
export const EXPORTS_PER_WEEK = 5;
/** A pending export older than this was lost with its process (exports run in the requesting process). */
const ABANDONED_AFTER_MS = 24 * 3600_000;
const DAY_MS = 24 * 3600_000;

/** The reference's check that an export is usable: an owner whose data it can carry. */
async function checkUsable(tx: Tx, realm: Realm, exportType: number): Promise<void> {
  const owners = await tx
    .selectFrom('users')
    .select(['id', 'settings'])
    .where('realm_id', '=', realm.id)
    .where('is_active', '=', true)
    .where('is_bot', '=', false)
    .where('role', '=', ROLE.OWNER)
    .execute();
  if (exportType === EXPORT_TYPE.STANDARD) {
    const consenting = new Set(await consentingUserIds(tx, realm.id));
    if (!owners.some((o) => consenting.has(o.id))) {
      throw badRequest("Make sure at least one Organization Owner is consenting to the export or contact your server's administrator for help.");
    }
  } else if (owners.every((o) => emailAddressVisibility(o.settings) === EMAIL_ADDRESS_VISIBILITY.NOBODY)) {
    throw badRequest(
      "Make sure at least one Organization Owner allows other Administrators to see their email address or contact your server's administrator for help",
    );
  }
}

/** GET /export/realm/consents: each active person's `allow_private_data_export`. */
export async function exportConsents(svc: Pick<Services, 'db'>, realm: Realm, actor: User): Promise<{ user_id: number; consented: boolean }[]> {
  requireAdmin(actor);
  const consenting = new Set(await consentingUserIds(svc.db, realm.id));
  const people = await svc.db
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', realm.id)
    .where('is_active', '=', true)
    .where('is_bot', '=', false)
    .orderBy('id')
    .execute();
  return people.map((u) => ({ user_id: u.id, consented: consenting.has(u.id) }));
}

/** POST /export/realm: records the request and starts writing the export; returns its id. */
export async function requestExport(svc: Services, realm: Realm, actor: User, exportType: number): Promise<number> {
  requireAdmin(actor);
  if (exportType !== EXPORT_TYPE.PUBLIC && exportType !== EXPORT_TYPE.STANDARD) throw badRequest('Invalid export_type');
  const row = await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    // Requests of one organization take turns, so that two together cannot pass the limits.
    await sql`select id from realms where id = ${realm.id} for update`.execute(tx);
    const now = Date.now();
    await tx
      .updateTable('realm_exports')
      .set({ failed_at: new Date(now) })
      .where('realm_id', '=', realm.id)
      .where('path', 'is', null)
      .where('failed_at', 'is', null)
      .where('deleted_at', 'is', null)
      .where('created_at', '<', new Date(now - ABANDONED_AFTER_MS))
      .execute();
    const recent = await tx
      .selectFrom('realm_exports')
      .select(['id', 'path', 'failed_at', 'deleted_at'])
      .where('realm_id', '=', realm.id)
      .where('created_at', '>=', new Date(now - 7 * DAY_MS))
      .execute();
    if (recent.length >= EXPORTS_PER_WEEK) throw badRequest('Exceeded rate limit.');
    if (recent.some((e) => e.path === null && e.failed_at === null && e.deleted_at === null)) throw badRequest('An export is already in progress.');
    await checkUsable(tx, realm, exportType);
    const inserted = await tx
      .insertInto('realm_exports')
      .values({ realm_id: realm.id, acting_user_id: actor.id, export_type: exportType, path: null, failed_at: null, deleted_at: null })
      .returningAll()
      .executeTakeFirstOrThrow();
    await emitExports(ctx);
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
    await exportRealm(svc, realm, file, silentProgress(), row.export_type === EXPORT_TYPE.PUBLIC ? 'public' : 'consent');
    done = { path, failed_at: null };
  } catch (err) {
    svc.log.error({ err, exportId: row.id }, 'data export failed');
    rmSync(dirname(file), { recursive: true, force: true });
    done = { path: null, failed_at: new Date() };
  }
  await transactAs(svc, realm, null, async (ctx) => {
    const { tx } = ctx;
    // Deleted meanwhile: the file goes too.
    const updated = await tx.updateTable('realm_exports').set(done).where('id', '=', row.id).where('deleted_at', 'is', null).executeTakeFirst();
    if (updated.numUpdatedRows === 0n) rmSync(dirname(file), { recursive: true, force: true });
    else await emitExports(ctx);
  });
}

/** DELETE /export/realm/{export_id}: the file goes; the row stays, marked deleted. */
export async function deleteExport(svc: Services, realm: Realm, actor: User, exportId: number): Promise<void> {
  requireAdmin(actor);
  const path = await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const row = await tx.selectFrom('realm_exports').selectAll().where('realm_id', '=', realm.id).where('id', '=', exportId).forUpdate().executeTakeFirst();
    if (!row) throw badRequest('Invalid data export ID');
    if (row.deleted_at !== null) throw badRequest('Export already deleted');
    if (row.failed_at !== null) throw badRequest('Export failed, nothing to delete');
    if (row.path === null) throw badRequest('Export still in progress');
    await tx.updateTable('realm_exports').set({ deleted_at: new Date() }).where('id', '=', row.id).execute();
    await emitExports(ctx);
    return row.path;
  });
  rmSync(dirname(join(uploadsRoot(svc.config), path)), { recursive: true, force: true });
}
