// The check that keeps register and the events honest: a client that applies
// the events it receives to the state it registered with has the state a fresh
// register would give it. Use it for every action that changes register data:
//
//   const viewer = await registerViewer(server, client);
//   ...the action...
//   await expectStateInSync(server, viewer, 'after renaming');

import assert from 'node:assert/strict';
import type { Client, TestServer } from './server.ts';
import { registerContext, type RegisterParams } from '../../src/events/register.ts';
import { applyEvents, fetchState, type RegisterContext, type StateSection } from '../../src/events/state.ts';
import { getUser } from '../../src/users/queries.ts';

const DEFAULT_PARAMS: RegisterParams = {
  apply_markdown: false,
  client_svcavatar: undefined,
  slim_presence: false,
  presence_history_limit_days: undefined,
  all_public_streams: undefined,
  include_subscribers: false,
  client_capabilities: undefined,
  event_types: undefined,
  fetch_event_types: undefined,
  narrow: [],
  queue_lifespan_secs: 0,
};

export interface Viewer {
  client: Client;
  queueId: string;
  lastEventId: number;
  state: Record<string, any>;
  ctx: RegisterContext;
  sections: readonly StateSection[];
  /** The register parameters, as sent over HTTP. */
  params: Record<string, unknown>;
}

/** Registers over HTTP; `params` are register's parameters in their HTTP form. */
export async function registerViewer(server: TestServer, client: Client, params: Record<string, unknown> = {}): Promise<Viewer> {
  const res = await client.post('/register', params);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const { queue_id, last_event_id, ...state } = res.body;
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const user = (await getUser(server.svc.db, realm.id, client.id))!;
  const typed: RegisterParams = { ...DEFAULT_PARAMS };
  for (const [k, v] of Object.entries(params)) (typed as any)[k] = v;
  const { ctx, sections } = registerContext(server.svc, realm, user, typed);
  await fetchState(sections, ctx);
  return { client, queueId: queue_id, lastEventId: last_event_id, state, ctx, sections, params };
}

/** Applies the events waiting in the viewer's queue to its state. */
export async function catchUp(server: TestServer, viewer: Viewer): Promise<void> {
  // The viewer's email may have changed: credentials are read afresh.
  viewer.client = await server.clientFor(viewer.client.id);
  const res = await viewer.client.get('/events', { queue_id: viewer.queueId, last_event_id: viewer.lastEventId, dont_block: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const events = res.body.events;
  applyEvents(viewer.sections, viewer.state, events, viewer.ctx);
  if (events.length > 0) viewer.lastEventId = events[events.length - 1].id;
}

/** What a fresh register with the viewer's parameters returns now. */
export async function freshState(viewer: Viewer): Promise<Record<string, any>> {
  const res = await viewer.client.post('/register', viewer.params);
  const { queue_id, last_event_id: _l, ...state } = res.body;
  await viewer.client.delete('/events', { queue_id });
  return state;
}

/** Where two states differ, as paths with both values (list entries matched by their id): a readable failure. */
export function differences(a: unknown, b: unknown, path = ''): string {
  if (JSON.stringify(a) === JSON.stringify(b)) return '';
  const idOf = (x: any) => x?.stream_id ?? x?.user_id ?? x?.id;
  if (Array.isArray(a) && Array.isArray(b) && [...a, ...b].every((x) => idOf(x) !== undefined)) {
    const ids = [...new Set([...a, ...b].map(idOf))];
    const order =
      JSON.stringify(a.map(idOf)) === JSON.stringify(b.map(idOf))
        ? ''
        : `${path}: order applied ${JSON.stringify(a.map(idOf))} fresh ${JSON.stringify(b.map(idOf))}\n`;
    return (
      order +
      ids
        .map((id) =>
          differences(
            a.find((x) => idOf(x) === id),
            b.find((x) => idOf(x) === id),
            `${path}[id ${id}]`,
          ),
        )
        .join('')
    );
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].map((k) => differences((a as any)[k], (b as any)[k], path ? `${path}.${k}` : k)).join('');
  }
  return `${path}:\n  applied ${JSON.stringify(a)}\n  fresh   ${JSON.stringify(b)}\n`;
}

/** Catches up with the events, then requires the state to equal a fresh register's. */
export async function expectStateInSync(server: TestServer, viewer: Viewer, label: string): Promise<void> {
  await catchUp(server, viewer);
  const fresh = await freshState(viewer);
  // Presence comes with the time it was read and a polling cursor, which events do not carry (as in Zulip's test_events).
  for (const k of ['server_timestamp', 'presence_last_update_id']) if (k in fresh && k in viewer.state) viewer.state[k] = fresh[k];
  assert.deepEqual(viewer.state, fresh, `${label}:\n${differences(viewer.state, fresh)}`);
}
