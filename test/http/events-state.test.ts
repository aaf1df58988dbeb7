// The property that makes the event system trustworthy: for every action, the
// state a fresh register returns equals the old state with the events in
// between applied (Zulip's test_events idea), also when actions race a register.
import { test, before, after } from 'node:test';
import fc from 'fast-check';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE, ROLES } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

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
      const viewers = [await registerViewer(server, server.owner), await registerViewer(server, await server.clientFor(member.id))];
      for (const action of actions) {
        const result = await action.run(users);
        if (action.name.startsWith('create')) users.push(result as Client);
        for (const viewer of viewers) await expectStateInSync(server, viewer, `after ${action.name}`);
        users[0] = await server.clientFor(users[0].id);
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
    const viewer = await registerViewer(server, server.owner);
    await Promise.all(acting);
    await expectStateInSync(server, viewer, `round ${round}`);
  }
});
