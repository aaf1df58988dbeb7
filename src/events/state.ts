// The initial state register returns, assembled from sections that each domain
// supplies (see sections.ts). A section fetches its part of the state, and
// applies the events that reached the new queue while the state was being read,
// so that nothing is lost and nothing counted twice (digest 3.1).

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Capabilities } from './queue.ts';
import type { ServerEvent } from './types.ts';

/** The whole state: every selected section's part, side by side (their keys do not overlap). */
export type State = Record<string, unknown>;

export interface RegisterContext {
  svc: Services;
  realm: Realm;
  /** Null for an anonymous spectator. */
  user: User | null;
  applyMarkdown: boolean;
  clientSvcavatar: boolean;
  capabilities: Capabilities;
  includeSubscribers: boolean | 'partial';
  slimPresence: boolean;
  presenceHistoryLimitDays: number | null;
  narrow: [string, string][];
  /** Scratch space a section fills in fetch and reads again in apply. */
  cache: Map<string, unknown>;
}

/**
 * One domain's part of the state, of shape S. The list of every section
 * (sections.ts) holds them as `StateSection` (S = object): `apply` is a method,
 * so a section of any S is one. That holds because register hands each section
 * the whole state, in which the part its own fetch returned sits unchanged.
 */
export interface StateSection<S extends object = object> {
  /** fetch_event_types that select the section (any of them). */
  types: readonly string[];
  /** Every one of `types` is needed (unread_msgs wants message and update_message_flags). */
  requireAll?: boolean;
  fetch(ctx: RegisterContext): Promise<S>;
  /** Brings a fetched part up to date with one event; must tolerate events already reflected. */
  apply?(state: S, event: ServerEvent, ctx: RegisterContext): void;
}

/**
 * What `make` reads, read once per register call: sections fetch in parallel
 * and several need the same rows (the channel list, the caller's groups).
 */
export function once<T>(ctx: RegisterContext, key: string, make: () => Promise<T>): Promise<T> {
  let value = ctx.cache.get(key) as Promise<T> | undefined;
  if (!value) ctx.cache.set(key, (value = make()));
  return value;
}

export function selected(section: StateSection, fetchTypes: Set<string> | null): boolean {
  if (fetchTypes === null) return true;
  return section.requireAll ? section.types.every((t) => fetchTypes.has(t)) : section.types.some((t) => fetchTypes.has(t));
}

export async function fetchState(sections: readonly StateSection[], ctx: RegisterContext): Promise<State> {
  const parts = await Promise.all(sections.map((s) => s.fetch(ctx)));
  return Object.assign({}, ...parts);
}

/** Applies events to a state fetched from `sections` (only those: others' keys are absent). */
export function applyEvents(sections: readonly StateSection[], state: State, events: readonly ServerEvent[], ctx: RegisterContext): void {
  for (const event of events) for (const section of sections) section.apply?.(state, event, ctx);
}
