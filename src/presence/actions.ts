// Presence writes (digest section 2 "Presence", 3.3). Clients ping every
// minute and poll everyone's presence; an event goes out only when a user comes
// online after being away, so that others do not show them offline until their
// next poll.

import type { Hooked, Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { type ActionContext, transactAs, type Tx } from '../db/transact.ts';
import { badRequest } from '../http/errors.ts';
import { settingsOf } from '../realm/queries.ts';
import { activeUsersWhoCanSee, getUser } from '../users/queries.ts';
import { userSettings } from '../users/settings.ts';
import {
  OFFLINE_THRESHOLD_SECS,
  PRESENCE_PING_INTERVAL_SECS,
  PRESENCE_UPDATE_MIN_FREQ_SECS,
  legacyClientPresence,
  modernPresence,
  type PresenceRow,
  type LegacyClientPresence,
  type ModernPresence,
} from './format.ts';
import { presenceFor, presenceRows, type PresenceResponse } from './queries.ts';

/** As emitted: the legacy form; events/shape.ts gives simplified_presence_events clients the `presences` one. */
export type PresenceEvent =
  | { type: 'presence'; user_id: number; email: string; server_timestamp: number; presence: { website: LegacyClientPresence } }
  | { type: 'presence'; presences: Record<string, ModernPresence> };

export type PresenceStatus = 'active' | 'idle';

/** Silent longer than this before an "active" report: the user is newly online (an event goes out). */
const NEWLY_ONLINE_SECS = OFFLINE_THRESHOLD_SECS - PRESENCE_PING_INTERVAL_SECS - 10;
const NEVER_MS = 24 * 3600 * 1000;

async function nextUpdateId(tx: Tx, realmId: number): Promise<number> {
  // The row lock serializes an organization's presence writes, so update ids commit in order.
  const row = await tx
    .insertInto('presence_sequences')
    .values({ realm_id: realmId, last_update_id: 1 })
    .onConflict((oc) => oc.column('realm_id').doUpdateSet((eb) => ({ last_update_id: eb('presence_sequences.last_update_id', '+', 1) })))
    .returning('last_update_id')
    .executeTakeFirstOrThrow();
  return Number(row.last_update_id);
}

/** A report of a user's presence at `time`. */
export interface PresenceReport {
  time: Date;
  status: PresenceStatus;
  /** Announce it even if the user was already online (turning presence sharing on or off). */
  force?: boolean;
  /** Start over from this report (turning presence sharing off). */
  replace?: boolean;
}

/** Records a report of `user`. */
export async function recordPresence(ctx: ActionContext<Hooked>, user: User, report: PresenceReport): Promise<void> {
  const { svc, tx, realm } = ctx;
  const { time, status, ...opts } = report;
  if (opts.replace) await tx.deleteFrom('user_presence').where('user_id', '=', user.id).execute();
  const existing = await tx.selectFrom('user_presence').selectAll().where('user_id', '=', user.id).forUpdate().executeTakeFirst();
  const now = time.getTime();
  let announce = opts.force ?? false;
  if (!existing) {
    await tx
      .insertInto('user_presence')
      .values({
        realm_id: realm.id,
        user_id: user.id,
        last_active_time: status === 'active' ? time : null,
        last_connected_time: time,
        last_update_id: await nextUpdateId(tx, realm.id),
      })
      .execute();
    announce = true;
  } else {
    const sinceActive = existing.last_active_time ? now - existing.last_active_time.getTime() : NEVER_MS;
    const sinceConnected = existing.last_connected_time ? now - existing.last_connected_time.getTime() : NEVER_MS;
    const changes: { last_active_time?: Date; last_connected_time?: Date } = {};
    if (sinceConnected > PRESENCE_UPDATE_MIN_FREQ_SECS * 1000) changes.last_connected_time = time;
    if (status === 'active' && sinceActive > PRESENCE_UPDATE_MIN_FREQ_SECS * 1000) {
      changes.last_active_time = time;
      // Connected is never older than active.
      if (!existing.last_connected_time || now > existing.last_connected_time.getTime()) changes.last_connected_time = time;
    }
    if (status === 'active' && sinceActive > NEWLY_ONLINE_SECS * 1000) announce = true;
    if (Object.keys(changes).length > 0) {
      await tx
        .updateTable('user_presence')
        .set({ ...changes, last_update_id: await nextUpdateId(tx, realm.id) })
        .where('user_id', '=', user.id)
        .execute();
    }
  }
  if (!announce || settingsOf(realm).presence_disabled) return;
  const [row] = await presenceRows(tx, realm.id, { userId: user.id });
  if (!row) return;
  emitPresence(ctx, row, await activeUsersWhoCanSee(svc, tx, realm, user));
}

function emitPresence(ctx: ActionContext<unknown>, row: PresenceRow, audience: number[]): void {
  const { emit, realm } = ctx;
  // One event; events/shape.ts gives each queue the legacy, slim or simplified form.
  emit(
    realm.id,
    {
      type: 'presence',
      user_id: row.user_id,
      email: row.email,
      server_timestamp: Date.now() / 1000,
      presence: { website: legacyClientPresence(row) },
    },
    audience,
    { hidden: { presences: { [String(row.user_id)]: modernPresence(row) } } },
  );
}

export interface PresenceUpdate {
  status: PresenceStatus;
  ping_only: boolean;
  new_user_input: boolean;
  slim_presence: boolean;
  last_update_id?: number;
  history_limit_days?: number | null;
}

/** POST /users/me/presence: the caller's report, then (unless ping_only) everyone's presence. */
export async function updateOwnPresence(svc: Services, realm: Realm, actor: User, q: PresenceUpdate): Promise<PresenceResponse | Record<string, never>> {
  if (actor.is_bot) throw badRequest('This endpoint does not accept bot requests.');
  const time = new Date();
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    // Read afresh: the settings of an authenticated user may be a few seconds old.
    const user = (await getUser(tx, realm.id, actor.id))!;
    // Someone who stopped sharing presence stays as they were when they stopped.
    if (userSettings(user).presence_enabled) await recordPresence(ctx, user, { time, status: q.status });
    if (q.status === 'active' || q.new_user_input) await markActive(tx, user, time);
  });
  if (q.ping_only) return {};
  return presenceFor(svc, svc.db, realm, actor, {
    // Asking by update id is the modern protocol: modern format.
    modern: q.slim_presence || q.last_update_id !== undefined,
    lastUpdateId: q.last_update_id,
    historyDays: q.history_limit_days,
  });
}

/** users.last_active_at: recent activity (the partial subscriber lists use it). */
async function markActive(tx: Tx, user: User, time: Date): Promise<void> {
  if (user.last_active_at && time.getTime() - user.last_active_at.getTime() < PRESENCE_UPDATE_MIN_FREQ_SECS * 1000) return;
  await tx.updateTable('users').set({ last_active_at: time }).where('id', '=', user.id).execute();
}
