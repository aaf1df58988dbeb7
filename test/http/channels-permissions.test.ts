// The permission matrix: every role against every channel operation, on public,
// private and web-public channels, with the organization's default settings.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';

type Role = 'guest' | 'member' | 'moderator' | 'administrator' | 'owner';
type Kind = 'public' | 'private' | 'web-public';

let server: TestServer;
const clients = {} as Record<Role, Client>;
let target: Client;
before(async () => {
  server = await startTestServer();
  await server.svc.db
    .updateTable('realms')
    .set({ settings: JSON.stringify({ enable_spectator_access: true }) })
    .execute();
  clients.guest = await server.createUser({ role: ROLE.GUEST });
  clients.member = await server.createUser({ role: ROLE.MEMBER });
  clients.moderator = await server.createUser({ role: ROLE.MODERATOR });
  clients.administrator = await server.createUser({ role: ROLE.ADMINISTRATOR });
  clients.owner = server.owner;
  target = await server.createUser({ role: ROLE.MEMBER });
});
after(() => server.close());

let n = 0;
/** A channel created by the owner (who is then its only subscriber and its administrator). */
async function channel(kind: Kind): Promise<{ id: number; name: string }> {
  const name = `${kind}-${++n}`;
  const res = await server.owner.post('/users/me/subscriptions', {
    subscriptions: [{ name }],
    invite_only: kind === 'private',
    is_web_public: kind === 'web-public',
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { id: (await server.owner.get('/get_stream_id', { stream: name })).body.stream_id, name };
}

const ok = (res: { status: number }) => res.status === 200;

const OPERATIONS: Record<string, (c: Client, ch: { id: number; name: string }) => Promise<boolean>> = {
  view: async (c, ch) => ok(await c.get(`/streams/${ch.id}`)),
  members: async (c, ch) => ok(await c.get(`/streams/${ch.id}/members`)),
  subscribe_self: async (c, ch) => ok(await c.post('/users/me/subscriptions', { subscriptions: [{ name: ch.name }] })),
  subscribe_other: async (c, ch) => {
    const res = await c.post('/users/me/subscriptions', { subscriptions: [{ name: ch.name }], principals: [target.id] });
    return ok(res) && Object.keys(res.body.subscribed).length > 0;
  },
  unsubscribe_other: async (c, ch) => {
    await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name: ch.name }], principals: [target.id] });
    const res = await c.delete('/users/me/subscriptions', { subscriptions: [ch.name], principals: [target.id] });
    return ok(res) && res.body.removed.length === 1;
  },
  administer: async (c, ch) => ok(await c.patch(`/streams/${ch.id}`, { description: 'changed' })),
  unsubscribe_self: async (c, ch) => {
    await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name: ch.name }], principals: [c.id] });
    const res = await c.delete('/users/me/subscriptions', { subscriptions: [ch.name] });
    return ok(res) && res.body.removed.length === 1;
  },
  set_permission: async (c, ch) =>
    ok(await c.patch(`/streams/${ch.id}`, { can_remove_subscribers_group: { new: { direct_members: [target.id], direct_subgroups: [] } } })),
  archive: async (c, ch) => ok(await c.delete(`/streams/${ch.id}`)),
  unarchive: async (c, ch) => {
    assert.equal((await server.owner.delete(`/streams/${ch.id}`)).status, 200);
    return ok(await c.patch(`/streams/${ch.id}`, { is_archived: false }));
  },
  make_default: async (c, ch) => ok(await c.post('/default_streams', { stream_id: ch.id })),
};

const ROLES: Role[] = ['guest', 'member', 'moderator', 'administrator', 'owner'];
const admins = (r: Role) => r === 'administrator' || r === 'owner';
const nonGuests = (r: Role) => r !== 'guest';
const everyone = () => true;

/** Who may do what, by the defaults of the reference server. */
const EXPECTED: Record<Kind, Record<keyof typeof OPERATIONS, (r: Role) => boolean>> = {
  public: {
    view: nonGuests,
    members: nonGuests,
    subscribe_self: nonGuests,
    subscribe_other: nonGuests,
    unsubscribe_other: admins,
    unsubscribe_self: everyone,
    administer: admins,
    set_permission: admins,
    archive: admins,
    unarchive: admins,
    make_default: admins,
  },
  private: {
    view: admins,
    members: admins,
    subscribe_self: admins,
    subscribe_other: admins,
    unsubscribe_other: admins,
    unsubscribe_self: everyone,
    administer: admins,
    set_permission: admins,
    archive: admins,
    unarchive: admins,
    make_default: () => false,
  },
  'web-public': {
    view: everyone,
    members: everyone,
    subscribe_self: everyone,
    subscribe_other: nonGuests,
    unsubscribe_other: admins,
    unsubscribe_self: everyone,
    administer: admins,
    set_permission: admins,
    archive: admins,
    unarchive: admins,
    make_default: admins,
  },
};

for (const kind of ['public', 'private', 'web-public'] as Kind[]) {
  test(`permission matrix: ${kind} channels`, async () => {
    const failures: string[] = [];
    for (const [op, run] of Object.entries(OPERATIONS)) {
      for (const role of ROLES) {
        const allowed = await run(clients[role], await channel(kind));
        const expected = EXPECTED[kind][op](role);
        if (allowed !== expected) failures.push(`${role} ${op}: ${allowed ? 'allowed' : 'refused'}, expected ${expected ? 'allowed' : 'refused'}`);
      }
    }
    assert.deepEqual(failures, []);
  });
}

/** Who may create which kind of channel, by the organization's default settings (web-public: owners). */
const MAY_CREATE: Record<Kind, (r: Role) => boolean> = { public: nonGuests, private: nonGuests, 'web-public': (r) => r === 'owner' };

test('permission matrix: creating channels', async () => {
  const failures: string[] = [];
  for (const kind of ['public', 'private', 'web-public'] as Kind[]) {
    for (const role of ROLES) {
      const name = `new-${kind}-${++n}`;
      const res = await clients[role].post('/users/me/subscriptions', {
        subscriptions: [{ name }],
        invite_only: kind === 'private',
        is_web_public: kind === 'web-public',
      });
      const created = (await server.owner.get('/get_stream_id', { stream: name })).status === 200;
      if (created !== (res.status === 200)) failures.push(`${role} ${kind}: answered ${res.status} but created=${created}`);
      if (created !== MAY_CREATE[kind](role)) failures.push(`${role} ${kind}: ${created ? 'created' : 'refused'}`);
      if (!created) assert.equal(res.body.msg, 'Insufficient permission', `${role} ${kind}`);
    }
  }
  assert.deepEqual(failures, []);
});

test('subscribers of a private channel may add others; guests among them may not', async () => {
  const ch = await channel('private');
  await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name: ch.name }], principals: [clients.member.id, clients.guest.id] });
  const third = await server.createUser({ role: ROLE.MEMBER });
  const byGuest = await clients.guest.post('/users/me/subscriptions', { subscriptions: [{ name: ch.name }], principals: [third.id] });
  assert.equal(byGuest.body.msg, 'Insufficient permission');
  assert.deepEqual((await server.owner.get(`/streams/${ch.id}/members`)).body.subscribers.includes(third.id), false);
  const byMember = await clients.member.post('/users/me/subscriptions', { subscriptions: [{ name: ch.name }], principals: [third.id] });
  assert.deepEqual(byMember.body.subscribed, { [String(third.id)]: [ch.name] });
});

test('making a channel web-public: can_create_web_public_channel_group (owners), and back', async () => {
  const ch = await channel('public');
  // The administrator administers the channel but may not open it to the internet.
  const refused = await clients.administrator.patch(`/streams/${ch.id}`, { is_web_public: true });
  assert.deepEqual(refused.body, { result: 'error', msg: 'Insufficient permission', code: 'BAD_REQUEST' });
  assert.equal((await server.owner.get(`/streams/${ch.id}`)).body.stream.is_web_public, false);
  assert.equal((await clients.guest.get(`/streams/${ch.id}`)).status, 400);
  assert.equal((await server.owner.patch(`/streams/${ch.id}`, { is_web_public: true })).status, 200);
  const stream = (await clients.guest.get(`/streams/${ch.id}`)).body.stream;
  assert.equal(stream.is_web_public, true);
  assert.equal(stream.history_public_to_subscribers, true);
  // Back to public: guests lose sight of it again.
  assert.equal((await clients.administrator.patch(`/streams/${ch.id}`, { is_web_public: false })).status, 200);
  assert.equal((await clients.guest.get(`/streams/${ch.id}`)).body.msg, 'Invalid channel ID');
});

test('a private channel stays invisible: no hint in lists, lookups or errors', async () => {
  const secret = await channel('private');
  for (const role of ['guest', 'member', 'moderator'] as Role[]) {
    const c = clients[role];
    assert.ok(!(await c.get('/streams', { include_all: true })).body.streams.some((s: any) => s.stream_id === secret.id));
    assert.equal((await c.get('/get_stream_id', { stream: secret.name })).body.msg, `Invalid channel name '${secret.name}'`);
    const state = (await c.post('/register', { fetch_event_types: ['subscription', 'stream'] })).body;
    for (const key of ['subscriptions', 'unsubscribed', 'never_subscribed', 'streams']) {
      assert.ok(!state[key].some((s: any) => s.stream_id === secret.id), `${role} ${key}`);
    }
  }
});

test('channel groups reach into private channels', async () => {
  const ch = await channel('private');
  // A member of can_subscribe_group may join without an invitation.
  await server.owner.patch(`/streams/${ch.id}`, { can_subscribe_group: { new: { direct_members: [clients.member.id], direct_subgroups: [] } } });
  assert.equal(await OPERATIONS.view(clients.member, ch), true);
  assert.equal(await OPERATIONS.subscribe_self(clients.member, ch), true);
  // A member of can_add_subscribers_group may add others without being subscribed.
  const other = await channel('private');
  await server.owner.patch(`/streams/${other.id}`, { can_add_subscribers_group: { new: { direct_members: [clients.moderator.id], direct_subgroups: [] } } });
  assert.equal(await OPERATIONS.subscribe_other(clients.moderator, other), true);
  // Channel administrators administer, and see the channel, without content access.
  const third = await channel('private');
  await server.owner.patch(`/streams/${third.id}`, { can_administer_channel_group: { new: { direct_members: [clients.member.id], direct_subgroups: [] } } });
  assert.equal(await OPERATIONS.view(clients.member, third), true);
  assert.equal(await OPERATIONS.administer(clients.member, third), true);
  assert.equal(await OPERATIONS.subscribe_self(clients.member, third), false);
  // Guests never hold these, whatever the value says.
  const fourth = await channel('private');
  await server.owner.patch(`/streams/${fourth.id}`, { can_subscribe_group: { new: { direct_members: [clients.guest.id], direct_subgroups: [] } } });
  assert.equal(await OPERATIONS.subscribe_self(clients.guest, fourth), false);
});
