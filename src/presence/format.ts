// Presence in the API's two formats (digest section 2 "Presence", 3.3): the
// modern `{active_timestamp, idle_timestamp}` keyed by user id, and the legacy
// per-client form keyed by email.

/** Clients ping every minute; a user silent for longer than this is offline. */
export const PRESENCE_PING_INTERVAL_SECS = 60;
export const OFFLINE_THRESHOLD_SECS = 200;
/** Writes closer together than this are skipped (several open windows ping at once). */
export const PRESENCE_UPDATE_MIN_FREQ_SECS = 55;
/** Legacy "active" covers connections up to this long after the last activity. */
const LEGACY_ACTIVITY_OFFSET_SECS = 70;
/** How far back presence data goes unless a client asks otherwise (spec "Limits"). */
export const PRESENCE_HISTORY_DAYS = 14;

export interface PresenceRow {
  user_id: number;
  email: string;
  date_joined: Date;
  last_active_time: Date | null;
  last_connected_time: Date | null;
  last_update_id: number;
}

export const seconds = (d: Date): number => Math.floor(d.getTime() / 1000);

/** A user who never reported a time reads as having done so when they joined. */
function times(row: PresenceRow): { active: Date; connected: Date } {
  return { active: row.last_active_time ?? row.date_joined, connected: row.last_connected_time ?? row.date_joined };
}

export interface ModernPresence {
  active_timestamp: number;
  idle_timestamp: number;
}

export function modernPresence(row: PresenceRow): ModernPresence {
  const { active, connected } = times(row);
  return { active_timestamp: seconds(active), idle_timestamp: seconds(connected) };
}

export interface LegacyClientPresence {
  client: string;
  status: 'active' | 'idle';
  timestamp: number;
  pushable: boolean;
}

export function legacyClientPresence(row: PresenceRow): LegacyClientPresence {
  const { active, connected } = times(row);
  const isActive = active.getTime() + LEGACY_ACTIVITY_OFFSET_SECS * 1000 >= connected.getTime();
  return { client: 'website', status: isActive ? 'active' : 'idle', timestamp: seconds(isActive ? active : connected), pushable: false };
}

/** The legacy entry: the one client ("website") and the same data as `aggregated`. */
export interface LegacyPresence {
  aggregated: Pick<LegacyClientPresence, 'client' | 'status' | 'timestamp'>;
  website: LegacyClientPresence;
}

export function legacyPresence(website: LegacyClientPresence): LegacyPresence {
  return { aggregated: { client: website.client, status: website.status, timestamp: website.timestamp }, website };
}

/** Keyed by user id in the modern format, or by API email in the legacy one. */
export type Presences = Record<string, ModernPresence | LegacyPresence>;

export function presenceDict(rows: PresenceRow[], modern: boolean): Presences {
  const out: Presences = {};
  for (const row of rows) {
    if (modern) out[String(row.user_id)] = modernPresence(row);
    else out[row.email] = legacyPresence(legacyClientPresence(row));
  }
  return out;
}
