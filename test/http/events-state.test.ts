// The property that makes the event system trustworthy: for every action, the
// state a fresh register returns equals the old state with the events in
// between applied (Zulip's test_events idea), also when actions race a register.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE, ROLES } from '../../src/users/roles.ts';
import { registerContext, type RegisterParams } from '../../src/events/register.ts';
import { applyEvents, fetchState } from '../../src/events/state.ts';
import { getUser } from '../../src/users/queries.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

const PARAMS: RegisterParams = {
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

/** Registers through HTTP and keeps what is needed to apply later events the way register does. */
async function registerViewer(c: Client) {
  const res = await c.post('/register', {});
  assert.equal(res.status, 200);
  const { queue_id, last_event_id, ...state } = res.body;
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const user = (await getUser(server.svc.db, realm.id, c.id))!;
  const { ctx, sections } = registerContext(server.svc, realm, user, PARAMS);
  await fetchState(sections, ctx);
  return { client: c, queueId: queue_id as string, lastEventId: last_event_id as number, state, ctx, sections };
}

async function catchUp(viewer: Awaited<ReturnType<typeof registerViewer>>) {
  // The viewer's email may have changed: credentials are read afresh.
  viewer.client = await server.clientFor(viewer.client.id);
  const res = await viewer.client.get('/events', { queue_id: viewer.queueId, last_event_id: viewer.lastEventId, dont_block: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const events = res.body.events;
  applyEvents(viewer.sections, viewer.state, events, viewer.ctx);
  if (events.length > 0) viewer.lastEventId = events[events.length - 1].id;
}

async function freshState(c: Client) {
  const res = await c.post('/register', {});
  const { queue_id: _q, last_event_id: _l, ...state } = res.body;
  await c.delete('/events', { queue_id: _q });
  return state;
}

/** The top-level keys whose values differ, with both values: a readable failure. */
function differences(a: Record<string, unknown>, b: Record<string, unknown>): string {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys]
    .filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]))
    .map((k) => `${k}:\n  applied ${JSON.stringify(a[k])}\n  fresh   ${JSON.stringify(b[k])}`)
    .join('\n');
}

let emails = 0;

type Action = { name: string; run: (actors: Client[]) => Promise<unknown> };

const pick = <T,>(list: T[], i: number) => list[i % list.length];

function actionArb(): fc.Arbitrary<Action> {
  const target = fc.nat();
  return fc.oneof(
    fc.constantFrom(...ROLES).map((role) => ({
      name: `create ${role}`,
      run: async () => server.createUser({ role, email: `prop${++emails}@example.com`, fullName: `Prop User ${emails}` }),
    })),
    target.map((i) => ({
      name: `rename ${i}`,
      run: async (users: Client[]) => server.owner.patch(`/users/${pick(users, i).id}`, { full_name: `Renamed ${++emails}` }),
    })),
    fc.tuple(target, fc.constantFrom(ROLE.ADMINISTRATOR, ROLE.MODERATOR, ROLE.MEMBER, ROLE.GUEST)).map(([i, role]) => ({
      name: `role ${i} ${role}`,
      run: async (users: Client[]) => server.owner.patch(`/users/${pick(users, i).id}`, { role }),
    })),
    target.map((i) => ({
      name: `email ${i}`,
      run: async (users: Client[]) => server.owner.patch(`/users/${pick(users, i).id}`, { new_email: `moved${++emails}@example.com` }),
    })),
    // users[0] is the member viewer: it stays active so that it can keep reading its queue.
    target.map((i) => ({ name: `deactivate ${i}`, run: async (users: Client[]) => server.owner.delete(`/users/${pick(users.slice(1), i).id}`) })),
    target.map((i) => ({
      name: `reactivate ${i}`,
      run: async (users: Client[]) => server.owner.post(`/users/${pick(users.slice(1), i).id}/reactivate`),
    })),
  );
}

test('for every action, fresh state = old state + events (owner and member viewers)', async () => {
  const member = await server.createUser({ role: ROLE.MEMBER, email: 'viewer@example.com', fullName: 'The Viewer' });
  const users = [member, await server.createUser({ email: 'target@example.com', fullName: 'The Target' })];
  await fc.assert(
    fc.asyncProperty(fc.array(actionArb(), { minLength: 1, maxLength: 4 }), async (actions) => {
      const viewers = [await registerViewer(server.owner), await registerViewer(await server.clientFor(member.id))];
      for (const action of actions) {
        const result = await action.run(users);
        if (action.name.startsWith('create')) users.push(result as Client);
        for (const viewer of viewers) {
          await catchUp(viewer);
          const fresh = await freshState(viewer.client);
          assert.deepEqual(viewer.state, fresh, `after ${action.name}:\n${differences(viewer.state, fresh)}`);
          users[0] = await server.clientFor(users[0].id);
        }
      }
      for (const viewer of viewers) await viewer.client.delete('/events', { queue_id: viewer.queueId });
    }),
    { numRuns: 12 },
  );
});

test('actions racing a register: no event lost, none counted twice', async () => {
  for (let round = 0; round < 3; round++) {
    const acting = Array.from({ length: 6 }, (_, i) =>
      server.createUser({ email: `race${round}-${i}@example.com`, fullName: `Race ${round} ${i}` }).then((c) =>
        server.owner.patch(`/users/${c.id}`, { full_name: `Raced ${round} ${i}` }),
      ),
    );
    const viewer = await registerViewer(server.owner);
    await Promise.all(acting);
    await catchUp(viewer);
    const fresh = await freshState(server.owner);
    assert.deepEqual(viewer.state, fresh, `round ${round}:\n${differences(viewer.state, fresh)}`);
  }
});
