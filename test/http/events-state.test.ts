// The property that makes the event system trustworthy: for every action, the
// state a fresh register returns equals the old state with the events in
// between applied (Zulip's test_events idea), also when actions race a register.
import { test, before, after } from 'node:test';
import fc from 'fast-check';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE, ROLES } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { systemGroupIds } from '../../src/user_groups/group-setting.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

let emails = 0;

type Action = { name: string; run: (actors: Client[]) => Promise<unknown> };

const pick = <T>(list: T[], i: number) => list[i % list.length];

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
      server
        .createUser({ email: `race${round}-${i}@example.com`, fullName: `Race ${round} ${i}` })
        .then((c) => server.owner.patch(`/users/${c.id}`, { full_name: `Raced ${round} ${i}` })),
    );
    const viewer = await registerViewer(server, server.owner);
    await Promise.all(acting);
    await expectStateInSync(server, viewer, `round ${round}`);
  }
});

test('the same for guests limited to the users they share something with, with and without user_list_incomplete', async () => {
  const groups = await systemGroupIds(server.svc.db, 1);
  const setAccess = (group: number) => server.owner.patch('/realm', { can_access_all_users_group: JSON.stringify({ new: group }) });
  const guest = await server.createUser({ role: ROLE.GUEST, email: 'limited@example.com', fullName: 'Limited Guest' });
  const companion = await server.createUser({ role: ROLE.MEMBER, email: 'companion@example.com', fullName: 'The Companion' });
  await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'guest room' }], principals: [guest.id, companion.id] });
  // users[0] (the companion, whom the guest sees) stays active; the others are strangers to the guest.
  const users = [companion, await server.createUser({ email: 'stranger@example.com', fullName: 'The Stranger' })];
  await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'hall' }], principals: [users[1].id] });
  // What starts or ends a shared channel or conversation with the guest, or the guest's own channels.
  const target = fc.nat();
  const sharing: fc.Arbitrary<Action> = fc.oneof(
    target.map((i) => ({
      name: `join guest room ${i}`,
      run: async (all: Client[]) =>
        server.owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'guest room' }], principals: [pick(all.slice(1), i).id] }),
    })),
    target.map((i) => ({
      name: `leave guest room ${i}`,
      run: async (all: Client[]) => server.owner.delete('/users/me/subscriptions', { subscriptions: ['guest room'], principals: [pick(all.slice(1), i).id] }),
    })),
    target.map((i) => ({
      name: `direct message from ${i}`,
      run: async (all: Client[]) =>
        (await server.clientFor(pick(all.slice(1), i).id)).post('/messages', { type: 'direct', to: JSON.stringify([guest.id]), content: 'hello' }),
    })),
    fc.constant({
      name: 'guest joins hall',
      run: async () => server.owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'hall' }], principals: [guest.id] }),
    }),
    fc.constant({
      name: 'guest leaves hall',
      run: async () => server.owner.delete('/users/me/subscriptions', { subscriptions: ['hall'], principals: [guest.id] }),
    }),
  );
  await setAccess(groups['role:members']);
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(actionArb(), sharing), { minLength: 1, maxLength: 5 }), async (actions) => {
        const viewers = [
          await registerViewer(server, guest),
          await registerViewer(server, guest, { client_capabilities: { notification_settings_null: true, user_list_incomplete: true } }),
        ];
        for (const action of actions) {
          const result = await action.run(users);
          if (action.name.startsWith('create')) users.push(result as Client);
          for (const viewer of viewers) await expectStateInSync(server, viewer, `after ${action.name} (${JSON.stringify(viewer.params)})`);
          users[0] = await server.clientFor(users[0].id);
        }
        for (const viewer of viewers) await viewer.client.delete('/events', { queue_id: viewer.queueId });
      }),
      { numRuns: 12 },
    );
  } finally {
    await setAccess(groups['role:everyone']);
  }
});
