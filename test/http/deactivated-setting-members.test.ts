// Deactivated users in channel and organization group settings (spec "Group-setting value":
// since feature level 303 `direct_members` never lists deactivated users): GET /streams,
// register and the events leave them out, deactivation and reactivation are announced to
// everyone who knows the setting, and `old` compares with the value as clients see it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer, ok } from '../support/server.ts';
import { expectStateInSync, registerViewer, type Viewer } from '../support/state.ts';
import { ROLE } from '../../src/users/roles.ts';
import { systemGroupIds } from '../../src/user_groups/group-setting.ts';
import type { SystemGroupName } from '../../src/user_groups/system-groups.ts';

let server: TestServer;
let owner: Client;
let admin: Client;
let member: Client;
let x: Client;
let y: Client;
let sys: Record<SystemGroupName, number>;
before(async () => {
  server = await startTestServer();
  owner = server.owner;
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR });
  member = await server.createUser({ role: ROLE.MEMBER });
  x = await server.createUser({ role: ROLE.MEMBER, fullName: 'Ex Member' });
  y = await server.createUser({ role: ROLE.MEMBER, fullName: 'Why Member' });
  sys = await systemGroupIds(server.svc.db, 1);
});
after(() => server.close());

const value = (members: number[], subgroups: number[] = []) => ({ direct_members: members, direct_subgroups: subgroups });

let n = 0;
/** Creates a channel (the admin subscribed) and returns its id and name. */
async function channel(params: Record<string, unknown> = {}): Promise<{ id: number; name: string }> {
  const name = `settings ${++n}`;
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name }], ...params }));
  return { id: ok(await admin.get('/get_stream_id', { stream: name })).stream_id, name };
}

/** The events waiting in a viewer's queue, without acknowledging them. */
async function peek(viewer: Viewer): Promise<any[]> {
  return ok(await viewer.client.get('/events', { queue_id: viewer.queueId, last_event_id: viewer.lastEventId, dont_block: true })).events;
}

const settingEvents = (events: any[]) =>
  events.filter((e) => (e.type === 'stream' && e.op === 'update') || (e.type === 'realm' && e.op === 'update_dict')).map(({ id: _id, ...e }) => e);

test('a deactivated user leaves channel and organization settings, and comes back when reactivated', async () => {
  const { id: open, name: openName } = await channel({
    can_remove_subscribers_group: value([x.id, y.id]),
    can_administer_channel_group: value([x.id], [sys['role:moderators']]),
  });
  // A private channel the member does not know of: they hear nothing about it.
  const { id: hidden } = await channel({ invite_only: true, can_add_subscribers_group: value([x.id, y.id]) });
  ok(await admin.patch('/realm', { can_add_custom_emoji_group: { new: value([x.id, y.id]) } }));
  const viewers = [
    await registerViewer(server, owner),
    await registerViewer(server, owner, { client_capabilities: { notification_settings_null: true, archived_channels: true }, include_subscribers: true }),
    await registerViewer(server, member),
  ];
  const sync = async (label: string) => {
    for (const v of viewers) await expectStateInSync(server, v, `${label} (viewer ${v.client.id})`);
  };
  const expectValues = async (withX: boolean) => {
    const members = withX ? [x.id, y.id] : [y.id];
    const stream = ok(await member.get(`/streams/${open}`)).stream;
    assert.deepEqual(stream.can_remove_subscribers_group, value(members));
    assert.deepEqual(stream.can_administer_channel_group, value(withX ? [x.id] : [], [sys['role:moderators']]));
    assert.deepEqual(ok(await admin.get(`/streams/${hidden}`)).stream.can_add_subscribers_group, value(members));
    const listed = ok(await member.get('/streams')).streams.find((s: any) => s.stream_id === open);
    assert.deepEqual(listed.can_remove_subscribers_group, value(members));
    const state = ok(await member.post('/register', { fetch_event_types: ['realm', 'subscription', 'stream'] }));
    assert.deepEqual(state.realm_can_add_custom_emoji_group, value(members));
    assert.deepEqual(state.never_subscribed.find((s: any) => s.stream_id === open).can_remove_subscribers_group, value(members));
    assert.deepEqual(state.streams.find((s: any) => s.stream_id === open).can_remove_subscribers_group, value(members));
    await member.delete('/events', { queue_id: state.queue_id });
    const mine = ok(await admin.get('/users/me/subscriptions')).subscriptions.find((s: any) => s.stream_id === hidden);
    assert.deepEqual(mine.can_add_subscribers_group, value(members));
  };
  const expectEvents = async (withX: boolean) => {
    const members = withX ? [x.id, y.id] : [y.id];
    const told = settingEvents(await peek(viewers[2]));
    assert.deepEqual(told, [
      {
        type: 'stream',
        op: 'update',
        stream_id: open,
        name: openName,
        property: 'can_administer_channel_group',
        value: value(withX ? [x.id] : [], [sys['role:moderators']]),
      },
      { type: 'stream', op: 'update', stream_id: open, name: openName, property: 'can_remove_subscribers_group', value: value(members) },
      { type: 'realm', op: 'update_dict', property: 'default', data: { can_add_custom_emoji_group: value(members) } },
    ]);
    // The owner also knows the private channel.
    const ownerTold = settingEvents(await peek(viewers[0]));
    assert.ok(
      ownerTold.some((e) => e.stream_id === hidden && e.property === 'can_add_subscribers_group' && JSON.stringify(e.value) === JSON.stringify(value(members))),
    );
  };

  await expectValues(true);
  ok(await admin.delete(`/users/${x.id}`));
  await expectValues(false);
  await expectEvents(false);
  await sync('after deactivating');
  ok(await admin.post(`/users/${x.id}/reactivate`));
  await expectValues(true);
  await expectEvents(true);
  await sync('after reactivating');
  // Leaving by oneself is the same.
  ok(await (await server.clientFor(x.id)).delete('/users/me'));
  await expectValues(false);
  await sync('after leaving');
  ok(await admin.post(`/users/${x.id}/reactivate`));
  await expectValues(true);
  await sync('after coming back');
  for (const v of viewers) await v.client.delete('/events', { queue_id: v.queueId });
});

test("'old' compares with the value as clients see it, without deactivated users", async () => {
  const z = await server.createUser({ role: ROLE.MEMBER });
  const { id } = await channel({
    can_remove_subscribers_group: value([z.id, y.id]),
    can_add_subscribers_group: value([z.id], [sys['role:moderators']]),
    can_subscribe_group: value([z.id]),
  });
  ok(await admin.patch('/realm', { can_add_custom_emoji_group: { new: value([z.id, y.id]) } }));
  ok(await admin.delete(`/users/${z.id}`));
  const mismatch = { result: 'error', msg: "'old' value does not match the expected value.", code: 'EXPECTATION_MISMATCH' };

  // Naming the deactivated user is not what clients have.
  assert.deepEqual(
    (await admin.patch(`/streams/${id}`, { can_remove_subscribers_group: { new: sys['role:members'], old: value([z.id, y.id]) } })).body,
    mismatch,
  );
  assert.deepEqual((await admin.patch('/realm', { can_add_custom_emoji_group: { new: sys['role:members'], old: value([z.id, y.id]) } })).body, mismatch);
  let stream = ok(await admin.get(`/streams/${id}`)).stream;
  assert.deepEqual(stream.can_remove_subscribers_group, value([y.id]));

  // What clients see matches, including a set left with one group, or with nothing.
  ok(
    await admin.patch(`/streams/${id}`, {
      can_remove_subscribers_group: { new: sys['role:members'], old: value([y.id]) },
      can_add_subscribers_group: { new: sys['role:administrators'], old: value([], [sys['role:moderators']]) },
      can_subscribe_group: { new: sys['role:administrators'], old: value([]) },
    }),
  );
  stream = ok(await admin.get(`/streams/${id}`)).stream;
  assert.equal(stream.can_remove_subscribers_group, sys['role:members']);
  assert.equal(stream.can_add_subscribers_group, sys['role:administrators']);
  assert.equal(stream.can_subscribe_group, sys['role:administrators']);
  const answer = ok(await admin.patch('/realm', { can_add_custom_emoji_group: { new: sys['role:members'], old: value([y.id]) } }));
  assert.equal(answer.can_add_custom_emoji_group, sys['role:members']);
  const state = ok(await member.post('/register', { fetch_event_types: ['realm'] }));
  assert.equal(state.realm_can_add_custom_emoji_group, sys['role:members']);
  await member.delete('/events', { queue_id: state.queue_id });
});
