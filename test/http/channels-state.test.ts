// Channel events and register state: for any sequence of channel actions, a
// client that applies the events has the state a fresh register gives, for
// every way of registering (subscriber lists, capabilities).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer, type Viewer } from '../support/state.ts';
import { systemGroupIds } from '../../src/user_groups/group-setting.ts';

let server: TestServer;
let viewer: Client;
let guestViewer: Client;
let peer: Client;
let admin: Client;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com' });
  viewer = await server.createUser({ role: ROLE.MEMBER, email: 'viewer@example.com' });
  guestViewer = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com' });
  peer = await server.createUser({ role: ROLE.MEMBER, email: 'peer@example.com' });
});
after(() => server.close());

const REGISTRATIONS: Record<string, unknown>[] = [
  { fetch_event_types: ['subscription', 'stream', 'default_streams', 'channel_folders'] },
  {
    fetch_event_types: ['subscription', 'stream', 'default_streams'],
    include_subscribers: true,
    client_capabilities: { notification_settings_null: true, archived_channels: true },
  },
  {
    fetch_event_types: ['subscription', 'stream'],
    include_subscribers: 'partial',
    client_capabilities: { notification_settings_null: false, empty_topic_name: true },
  },
];

let n = 0;
const channels: string[] = [];
const pickChannel = (i: number) => channels[i % channels.length];
const idOf = async (name: string) => (await admin.get('/get_stream_id', { stream: name })).body.stream_id as number;

type Action = { name: string; run: () => Promise<unknown> };

function actions(): fc.Arbitrary<Action> {
  const i = fc.nat();
  const who = fc.constantFrom('viewer', 'guest', 'peer', 'admin');
  const client = (w: string) => ({ viewer, guest: guestViewer, peer, admin })[w as 'viewer']!;
  return fc.oneof(
    fc.record({ priv: fc.boolean(), by: fc.constantFrom('admin', 'viewer', 'peer'), withPeer: fc.boolean() }).map(({ priv, by, withPeer }) => ({
      name: `create ${priv ? 'private' : 'public'} by ${by}`,
      run: async () => {
        const name = `chan-${++n}`;
        channels.push(name);
        return client(by).post('/users/me/subscriptions', {
          subscriptions: [{ name }],
          invite_only: priv,
          ...(withPeer ? { principals: [client(by).id, peer.id] } : {}),
        });
      },
    })),
    fc.tuple(i, who).map(([k, w]) => ({
      name: `admin subscribes ${w} to ${k}`,
      run: async () => channels.length && admin.post('/users/me/subscriptions', { subscriptions: [{ name: pickChannel(k) }], principals: [client(w).id] }),
    })),
    fc.tuple(i, who).map(([k, w]) => ({
      name: `admin unsubscribes ${w} from ${k}`,
      run: async () => channels.length && admin.delete('/users/me/subscriptions', { subscriptions: [pickChannel(k)], principals: [client(w).id] }),
    })),
    i.map((k) => ({
      name: `viewer leaves ${k}`,
      run: async () => channels.length && viewer.delete('/users/me/subscriptions', { subscriptions: [pickChannel(k)] }),
    })),
    i.map((k) => ({
      name: `rename ${k}`,
      run: async () => {
        if (!channels.length) return;
        const old = pickChannel(k);
        const name = `renamed-${++n}`;
        const res = await admin.patch(`/streams/${await idOf(old)}`, { new_name: name, description: `about ${name}` });
        if (res.status === 200) channels[channels.indexOf(old)] = name;
      },
    })),
    fc.tuple(i, fc.boolean()).map(([k, priv]) => ({
      name: `privacy ${k} ${priv}`,
      run: async () => channels.length && admin.patch(`/streams/${await idOf(pickChannel(k))}`, { is_private: priv, history_public_to_subscribers: true }),
    })),
    fc.tuple(i, fc.constantFrom('can_subscribe_group', 'can_administer_channel_group', 'can_send_message_group')).map(([k, setting]) => ({
      name: `${setting} of ${k} to viewer`,
      run: async () =>
        channels.length && admin.patch(`/streams/${await idOf(pickChannel(k))}`, { [setting]: { new: { direct_members: [viewer.id], direct_subgroups: [] } } }),
    })),
    fc.tuple(i, fc.boolean()).map(([k, archived]) => ({
      name: `${archived ? 'archive' : 'unarchive'} ${k}`,
      run: async () => channels.length && admin.patch(`/streams/${await idOf(pickChannel(k))}`, { is_archived: archived }),
    })),
    fc.tuple(i, fc.boolean()).map(([k, on]) => ({
      name: `default ${k} ${on}`,
      run: async () => channels.length && admin.patch(`/streams/${await idOf(pickChannel(k))}`, { is_default_stream: on }),
    })),
    fc.tuple(i, fc.constantFrom('pin_to_top', 'is_muted', 'in_home_view', 'desktop_notifications')).map(([k, property]) => ({
      name: `viewer sets ${property} on ${k}`,
      run: async () => channels.length && viewer.patch(`/users/me/subscriptions/${await idOf(pickChannel(k))}`, { property, value: true }),
    })),
    fc.boolean().map((active) => ({
      name: `peer ${active ? 'reactivated' : 'deactivated'}`,
      run: async () => (active ? admin.post(`/users/${peer.id}/reactivate`) : admin.delete(`/users/${peer.id}`)),
    })),
    fc.constantFrom(ROLE.GUEST, ROLE.MEMBER).map((role) => ({
      name: `viewer becomes ${role}`,
      run: async () => admin.patch(`/users/${viewer.id}`, { role }),
    })),
    fc.constant({ name: 'new user', run: async () => server.createUser({ email: `new${++n}@example.com` }) }),
  );
}

test('channel actions keep every kind of register in sync', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(actions(), { minLength: 1, maxLength: 6 }), async (sequence) => {
      // Every run starts from the same people: an active peer, a member viewer.
      await admin.post(`/users/${peer.id}/reactivate`);
      await admin.patch(`/users/${viewer.id}`, { role: ROLE.MEMBER });
      const viewers = [
        ...(await Promise.all(REGISTRATIONS.map((params) => registerViewer(server, viewer, params)))),
        await registerViewer(server, guestViewer, REGISTRATIONS[1]),
      ];
      // Deactivation drops the peer's queues: once back, the peer registers afresh.
      let peerViewer: Viewer | undefined = await registerViewer(server, peer, REGISTRATIONS[0]);
      const done: string[] = [];
      for (const action of sequence) {
        await action.run();
        done.push(action.name);
        const peerActive = (await server.svc.db.selectFrom('users').select('is_active').where('id', '=', peer.id).executeTakeFirstOrThrow()).is_active;
        if (!peerActive) peerViewer = undefined;
        else peerViewer ??= await registerViewer(server, peer, REGISTRATIONS[0]);
        for (const v of [...viewers, ...(peerViewer ? [peerViewer] : [])]) await expectStateInSync(server, v, done.join(' → '));
      }
      if (peerViewer) viewers.push(peerViewer);
      await admin.post(`/users/${peer.id}/reactivate`);
      for (const v of viewers) await v.client.delete('/events', { queue_id: v.queueId });
    }),
    { numRuns: 25 },
  );
});

test('subscription events go to the right people', async () => {
  const groups = await systemGroupIds(server.svc.db, 1);
  assert.ok(groups['role:members']);
  const outsider = await server.createUser({ role: ROLE.MEMBER, email: 'outsider@example.com' });
  const watch = async (c: Client) => (await c.post('/register', { event_types: ['subscription', 'stream'] })).body.queue_id as string;
  const queues = { viewer: await watch(viewer), outsider: await watch(outsider), guest: await watch(guestViewer) };
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret-events' }], invite_only: true, principals: [admin.id, viewer.id] });
  // A stream/update names its property: here, the first_message_id set by the channel's creation message.
  const events = async (c: Client, q: string) =>
    (await c.get('/events', { queue_id: q, last_event_id: -1, dont_block: true })).body.events.map(
      (e: any) => `${e.type}/${e.op}${e.property ? `:${e.property}` : ''}`,
    );
  assert.deepEqual(await events(viewer, queues.viewer), ['stream/create', 'subscription/add', 'stream/update:first_message_id']);
  assert.deepEqual(await events(outsider, queues.outsider), [], 'a private channel is not announced to others');
  assert.deepEqual(await events(guestViewer, queues.guest), []);
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'open-events' }] });
  assert.deepEqual(await events(outsider, queues.outsider), ['stream/create', 'subscription/peer_add', 'stream/update:first_message_id']);
  assert.deepEqual(await events(guestViewer, queues.guest), [], 'guests do not see public channels they are not in');
});

test('default channels: guests hear of none; a role change tells the list as it now is', async () => {
  const person = await server.createUser({ role: ROLE.MEMBER });
  const params = { fetch_event_types: ['default_streams'] };
  const memberView = await registerViewer(server, person, params);
  const guestView = await registerViewer(server, guestViewer, params);
  await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'default-sync' }] });
  const id = await idOf('default-sync');
  assert.equal((await admin.post('/default_streams', { stream_id: id })).status, 200);
  await expectStateInSync(server, memberView, 'default added (member)');
  await expectStateInSync(server, guestView, 'default added (guest)');
  assert.ok(memberView.state.realm_default_streams.includes(id));
  assert.deepEqual(guestView.state.realm_default_streams, []);
  await admin.patch(`/users/${person.id}`, { role: ROLE.GUEST });
  await expectStateInSync(server, memberView, 'became a guest');
  assert.deepEqual(memberView.state.realm_default_streams, []);
  await admin.patch(`/users/${person.id}`, { role: ROLE.MEMBER });
  await expectStateInSync(server, memberView, 'a member again');
  assert.ok((memberView.state.realm_default_streams as number[]).includes(id));
});
