import type { Executor } from '../db/schema.ts';
import type { Hooked } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { settingsOf } from '../realm/queries.ts';
import { accessibleUsers, canAccess, type AccessibleUsers } from '../users/queries.ts';
import { badRequest } from '../http/errors.ts';
import { OFFLINE_THRESHOLD_SECS, PRESENCE_HISTORY_DAYS, legacyClientPresence, modernPresence, presenceDict, type PresenceRow } from './format.ts';

const DAY_MS = 24 * 3600 * 1000;

/** Presence rows of active human users, optionally only newer than an update id or a time. */
export async function presenceRows(
  db: Executor,
  realmId: number,
  opts: { afterUpdateId?: number; connectedSince?: Date; userId?: number } = {},
): Promise<PresenceRow[]> {
  let q = db
    .selectFrom('user_presence as p')
    .innerJoin('users as u', (j) => j.onRef('u.id', '=', 'p.user_id').onRef('u.realm_id', '=', 'p.realm_id'))
    .select(['p.user_id', 'u.email', 'u.date_joined', 'p.last_active_time', 'p.last_connected_time', 'p.last_update_id'])
    .where('p.realm_id', '=', realmId)
    .where('u.is_active', '=', true)
    .where('u.is_bot', '=', false);
  if (opts.afterUpdateId !== undefined) q = q.where('p.last_update_id', '>', opts.afterUpdateId);
  if (opts.connectedSince !== undefined) q = q.where('p.last_connected_time', '>=', opts.connectedSince);
  if (opts.userId !== undefined) q = q.where('p.user_id', '=', opts.userId);
  return q.orderBy('p.user_id').execute();
}

export type PresenceResponse = {
  presences: Record<string, unknown>;
  server_timestamp: number;
  presence_last_update_id: number;
};

export interface PresenceOptions {
  modern: boolean;
  lastUpdateId?: number;
  historyDays?: number | null;
  /** Whom the viewer may see, when the caller has it already. */
  access?: AccessibleUsers;
}

/**
 * The organization's presence rows as `viewer` may see them (only users it can
 * access). `lastUpdateId` > 0 asks for what changed since; otherwise
 * `historyDays` (14 by default, 0 for nothing) bounds how old the data may be.
 */
export async function visiblePresenceRows(svc: Hooked, db: Executor, realm: Realm, viewer: User, opts: PresenceOptions) {
  const serverTimestamp = Date.now() / 1000;
  if (settingsOf(realm).presence_disabled) return { rows: [], serverTimestamp, lastUpdateId: -1 };
  // A client that already has data is limited by its update id, not by age.
  const incremental = opts.lastUpdateId !== undefined && opts.lastUpdateId > 0;
  const days = opts.historyDays ?? PRESENCE_HISTORY_DAYS;
  if (!incremental && days === 0) return { rows: [], serverTimestamp, lastUpdateId: opts.lastUpdateId ?? -1 };
  const all = await presenceRows(db, realm.id, {
    afterUpdateId: opts.lastUpdateId,
    connectedSince: incremental ? undefined : new Date(serverTimestamp * 1000 - days * DAY_MS),
  });
  const access = opts.access ?? (await accessibleUsers(svc, db, realm, viewer));
  const rows = all.filter((r) => canAccess(access, r.user_id));
  // A loop, not Math.max(...rows): one argument per user overflows the stack in a large organization.
  const lastUpdateId = rows.length > 0 ? rows.reduce((max, r) => Math.max(max, r.last_update_id), -Infinity) : (opts.lastUpdateId ?? -1);
  return { rows, serverTimestamp, lastUpdateId };
}

export async function presenceFor(svc: Hooked, db: Executor, realm: Realm, viewer: User, opts: PresenceOptions): Promise<PresenceResponse> {
  const { rows, serverTimestamp, lastUpdateId } = await visiblePresenceRows(svc, db, realm, viewer, opts);
  return { presences: presenceDict(rows, opts.modern), server_timestamp: serverTimestamp, presence_last_update_id: lastUpdateId };
}

/** GET /users/{user}/presence: one user's presence (the caller already resolved and may see `target`). */
export async function presenceOfUser(db: Executor, realm: Realm, target: User, modern: boolean, asked: string): Promise<object> {
  if (target.is_bot) throw badRequest('Presence is not supported for bot users.');
  const [row] = settingsOf(realm).presence_disabled ? [] : await presenceRows(db, realm.id, { userId: target.id });
  if (!row) throw badRequest(`No presence data for ${asked}`);
  if (modern) return modernPresence(row);
  // The legacy single-user form: no client names, and "offline" once the last report is too old.
  const { client: _client, pushable: _pushable, ...website } = legacyClientPresence(row);
  const offline = Date.now() / 1000 - website.timestamp > OFFLINE_THRESHOLD_SECS;
  return { aggregated: { ...website, status: offline ? 'offline' : website.status }, website };
}
