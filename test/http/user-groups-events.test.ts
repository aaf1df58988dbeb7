// User groups: user_group events and register's realm_user_groups (with and
// without include_deactivated_groups), deactivation and what objects to it,
// deactivated groups in permissions and mentions (digest 1.24, 3.2, 3.3, 4).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '../support/server.ts';
import { expectStateInSync, registerViewer, type Viewer } from '../support/state.ts';
import { ROLE } from '../../src/users/roles.ts';
import { storeGroupSettingValue } from '../../src/user_groups/group-setting.ts';
import type { GroupUseObjection } from '../../src/user_groups/objections.ts';
import { checkGroupMentionsAllowed, mayMentionGroup } from '../../src/user_groups/mentions.ts';
import { renderMarkdown } from '../../src/rendering/index.ts';
import { getUser } from '../../src/users/queries.ts';
import { createGroup as create, ok, refused, setRealmSetting as setSetting, startGroupFixture } from './user-groups.fixture.ts';

const { server, owner, admin, moderator, member, other, guest, sys } = await startGroupFixture();
after(() => server.close());

const setRealmSetting = (setting: string, groupId: number) => setSetting(server, setting, groupId);

const WITH_DEACTIVATED = { client_capabilities: { notification_settings_null: false, include_deactivated_groups: true } };

/** The events waiting in a viewer's queue, without acknowledging them. */
async function peek(viewer: Viewer): Promise<any[]> {
  const res = await viewer.client.get('/events', { queue_id: viewer.queueId, last_event_id: viewer.lastEventId, dont_block: true });
  return ok(res).events.filter((e: any) => e.type === 'user_group');
}

const strip = ({ id: _id, ...event }: any) => event;

test('register: realm_user_groups, deactivated groups only with include_deactivated_groups', async () => {
  const active = await create(member);
  const gone = await create(member);
  ok(await member.post(`/user_groups/${gone}/deactivate`));
  const plain = ok(await member.post('/register', { fetch_event_types: ['realm_user_groups'] }));
  assert.ok(plain.realm_user_groups.some((g: any) => g.id === active));
  assert.ok(!plain.realm_user_groups.some((g: any) => g.id === gone));
  const full = ok(await member.post('/register', { fetch_event_types: ['realm_user_groups'], ...WITH_DEACTIVATED }));
  assert.equal(full.realm_user_groups.find((g: any) => g.id === gone).deactivated, true);
  // The same objects as GET /user_groups.
  assert.deepEqual(full.realm_user_groups, ok(await member.get('/user_groups', { include_deactivated_groups: true })).user_groups);
  // Guests may not list groups, but their register has them (Zulip's too).
  const guestState = ok(await guest.post('/register', { fetch_event_types: ['realm_user_groups'] }));
  assert.deepEqual(guestState.realm_user_groups, plain.realm_user_groups);
  for (const q of [plain, full]) await member.delete('/events', { queue_id: q.queue_id });
  await guest.delete('/events', { queue_id: guestState.queue_id });
});

test('every user group action keeps registered state in sync, with and without include_deactivated_groups', async () => {
  const viewers = [
    await registerViewer(server, owner),
    await registerViewer(server, owner, WITH_DEACTIVATED),
    await registerViewer(server, member, WITH_DEACTIVATED),
    await registerViewer(server, guest),
  ];
  const sync = async (label: string) => {
    for (const v of viewers)
      await expectStateInSync(server, v, `${label} (viewer ${v.client.id}, ${v.params.client_capabilities ? 'with' : 'without'} deactivated)`);
  };
  const target = await server.createUser({ fullName: 'Group Target' });
  await sync('creating a user');
  const g = await create(member, {
    members: [member.id, target.id],
    can_mention_group: { direct_members: [target.id], direct_subgroups: [sys['role:moderators']] },
  });
  await sync('create');
  ok(await member.patch(`/user_groups/${g}`, { name: 'Synced group', description: 'Described' }));
  await sync('rename and describe');
  ok(
    await member.patch(`/user_groups/${g}`, {
      can_join_group: { new: sys['role:members'] },
      can_leave_group: { new: { direct_members: [other.id], direct_subgroups: [] } },
    }),
  );
  await sync('settings');
  ok(await member.post(`/user_groups/${g}/members`, { add: [other.id, admin.id], delete: [member.id] }));
  await sync('members');
  const h = await create(member, { subgroups: [sys['role:owners']] });
  ok(await member.post(`/user_groups/${g}/subgroups`, { add: [h] }));
  await sync('add subgroup');
  ok(await member.post(`/user_groups/${g}/subgroups`, { delete: [h] }));
  await sync('remove subgroup');
  ok(await member.post(`/user_groups/${h}/deactivate`));
  await sync('deactivate');
  ok(await member.patch(`/user_groups/${h}`, { name: 'Deactivated and renamed', can_mention_group: { new: sys['role:members'] } }));
  await sync('edit a deactivated group');
  ok(await member.post(`/user_groups/${h}/members`, { add: [other.id] }));
  ok(await member.post(`/user_groups/${h}/subgroups`, { delete: [sys['role:owners']] }));
  await sync('membership of a deactivated group');
  ok(await member.patch(`/user_groups/${h}`, { deactivated: false, description: 'Back', can_leave_group: { new: sys['role:nobody'] } }));
  await sync('reactivate');
  ok(await owner.patch(`/users/${other.id}`, { role: ROLE.MODERATOR }));
  await sync('role change');
  ok(await owner.patch(`/users/${other.id}`, { role: ROLE.MEMBER }));
  await sync('role change back');
  ok(await owner.delete(`/users/${target.id}`));
  await sync('deactivating a member');
  ok(await owner.patch(`/users/${target.id}`, { role: ROLE.GUEST }));
  await sync('role change of a deactivated user');
  ok(await owner.post(`/users/${target.id}/reactivate`));
  await sync('reactivating a member');
  for (const v of viewers) await v.client.delete('/events', { queue_id: v.queueId });
});

test('deactivation events: an update with the capability, a removal (and an addition back) without', async () => {
  const g = await create(member, { members: [other.id] });
  const without = await registerViewer(server, owner);
  const withCap = await registerViewer(server, owner, WITH_DEACTIVATED);
  ok(await member.post(`/user_groups/${g}/deactivate`));
  ok(await member.patch(`/user_groups/${g}`, { name: 'Quiet rename' }));
  ok(await member.patch(`/user_groups/${g}`, { deactivated: false }));
  const fresh = ok(await owner.get('/user_groups')).user_groups.find((x: any) => x.id === g);
  assert.deepEqual((await peek(without)).map(strip), [
    { type: 'user_group', op: 'remove', group_id: g },
    { type: 'user_group', op: 'add', group: fresh },
  ]);
  assert.deepEqual((await peek(withCap)).map(strip), [
    { type: 'user_group', op: 'update', group_id: g, data: { deactivated: true } },
    { type: 'user_group', op: 'update', group_id: g, data: { name: 'Quiet rename' } },
    { type: 'user_group', op: 'update', group_id: g, data: { deactivated: false } },
  ]);
  for (const v of [without, withCap]) await v.client.delete('/events', { queue_id: v.queueId });
});

test('event shapes: add, update, members, subgroups; role changes move users between system groups', async () => {
  const viewer = await registerViewer(server, guest);
  const g = await create(member, { members: [other.id] });
  ok(await member.patch(`/user_groups/${g}`, { can_mention_group: { new: { direct_members: [other.id], direct_subgroups: [] } } }));
  ok(await member.post(`/user_groups/${g}/members`, { add: [admin.id] }));
  ok(await member.post(`/user_groups/${g}/members`, { delete: [admin.id] }));
  ok(await member.post(`/user_groups/${g}/subgroups`, { add: [sys['role:moderators']] }));
  ok(await member.post(`/user_groups/${g}/subgroups`, { delete: [sys['role:moderators']] }));
  const changed = await server.createUser();
  ok(await owner.patch(`/users/${changed.id}`, { role: ROLE.MODERATOR }));
  const events = (await peek(viewer)).map(strip);
  assert.equal(events[0].op, 'add');
  assert.equal(events[0].group.id, g);
  assert.deepEqual(events.slice(1), [
    { type: 'user_group', op: 'update', group_id: g, data: { can_mention_group: { direct_members: [other.id], direct_subgroups: [] } } },
    { type: 'user_group', op: 'add_members', group_id: g, user_ids: [admin.id] },
    { type: 'user_group', op: 'remove_members', group_id: g, user_ids: [admin.id] },
    { type: 'user_group', op: 'add_subgroups', group_id: g, direct_subgroup_ids: [sys['role:moderators']] },
    { type: 'user_group', op: 'remove_subgroups', group_id: g, direct_subgroup_ids: [sys['role:moderators']] },
    { type: 'user_group', op: 'add_members', group_id: sys['role:members'], user_ids: [changed.id] },
    { type: 'user_group', op: 'add_members', group_id: sys['role:fullmembers'], user_ids: [changed.id] },
    { type: 'user_group', op: 'remove_members', group_id: sys['role:members'], user_ids: [changed.id] },
    { type: 'user_group', op: 'remove_members', group_id: sys['role:fullmembers'], user_ids: [changed.id] },
    { type: 'user_group', op: 'add_members', group_id: sys['role:moderators'], user_ids: [changed.id] },
  ]);
  // A setting that does not change sends nothing.
  ok(await member.patch(`/user_groups/${g}`, { can_mention_group: { new: { direct_members: [other.id], direct_subgroups: [] } } }));
  assert.equal((await peek(viewer)).length, events.length);
  await guest.delete('/events', { queue_id: viewer.queueId });
});

test('POST /user_groups/{id}/deactivate: who may and who may not', async () => {
  const g = await create(member);
  for (const client of [guest, other, moderator, admin]) refused(await client.post(`/user_groups/${g}/deactivate`), 'Insufficient permission');
  ok(await member.post(`/user_groups/${g}/deactivate`));
  refused(await member.post(`/user_groups/${g}/deactivate`), 'User group is deactivated.');
  const h = await create(member);
  ok(await owner.post(`/user_groups/${h}/deactivate`));
  refused(await owner.post(`/user_groups/${sys['role:members']}/deactivate`), 'Insufficient permission');
  refused(await owner.post('/user_groups/999999/deactivate'), 'Invalid user group');
});

test('CANNOT_DEACTIVATE_GROUP_IN_USE: subgroups, group settings, organization settings, registered uses', async () => {
  const used = await create(member);
  const deactivate = () => member.post(`/user_groups/${used}/deactivate`);
  const objections = async () => refused(await deactivate(), 'Cannot deactivate user group in use.', 'CANNOT_DEACTIVATE_GROUP_IN_USE').objections;

  // Its own settings naming it do not count.
  ok(await member.patch(`/user_groups/${used}`, { can_mention_group: { new: used } }));

  const parent = await create(member, { subgroups: [used] });
  assert.deepEqual(await objections(), [{ type: 'subgroup', supergroup_ids: [parent] }]);
  ok(await member.post(`/user_groups/${parent}/deactivate`));

  const holder = await create(member, { can_mention_group: used, can_leave_group: { direct_members: [other.id], direct_subgroups: [used] } });
  assert.deepEqual(await objections(), [{ type: 'user_group', group_id: holder, settings: ['can_leave_group', 'can_mention_group'] }]);
  ok(await member.post(`/user_groups/${holder}/deactivate`));

  const anonymous = await server.svc.db
    .transaction()
    .execute((tx) => storeGroupSettingValue(tx, 1, { direct_members: [other.id], direct_subgroups: [used] }, 'can_add_custom_emoji_group'));
  await setRealmSetting('can_add_custom_emoji_group', anonymous);
  await setRealmSetting('can_invite_users_group', used);
  const channelUse = { type: 'channel' as const, channel_id: 4242, settings: ['can_send_message_group'] };
  let channelUses: GroupUseObjection[] = [channelUse];
  // A domain whose settings use the group (as channels do), added to this server's hooks
  // (every process's, when the tests run against a cluster).
  const hooks = server.svc.hooks;
  for (const p of server.processes) {
    p.svc.hooks = { ...hooks, groupUseSources: [...hooks.groupUseSources, async (_db, _realm, ids) => (ids.has(used) ? channelUses : [])] };
  }
  try {
    assert.deepEqual(await objections(), [channelUse, { type: 'realm', settings: ['can_add_custom_emoji_group', 'can_invite_users_group'] }]);
  } finally {
    await setRealmSetting('can_add_custom_emoji_group', sys['role:members']);
    await setRealmSetting('can_invite_users_group', sys['role:members']);
  }
  assert.deepEqual(await objections(), [channelUse]);
  channelUses = [];
  ok(await deactivate());
  for (const p of server.processes) p.svc.hooks = hooks;
});

test('a deactivated group cannot be used in a permission or as a subgroup until reactivated', async () => {
  const g = await create(member);
  const user = await create(member);
  ok(await member.post(`/user_groups/${g}/deactivate`));
  refused(await member.patch(`/user_groups/${user}`, { can_mention_group: { new: g } }), 'User group is deactivated.');
  refused(
    await member.patch(`/user_groups/${user}`, { can_join_group: { new: { direct_members: [other.id], direct_subgroups: [g] } } }),
    'User group is deactivated.',
  );
  refused(
    await member.post('/user_groups/create', { name: 'uses a deactivated group', description: '', members: [], can_manage_group: g }),
    'User group is deactivated.',
  );
  refused(await member.post(`/user_groups/${user}/subgroups`, { add: [g] }), 'User group is deactivated.');
  refused(
    await member.post('/user_groups/create', { name: 'deactivated subgroup', description: '', members: [], subgroups: [g] }),
    'User group is deactivated.',
  );
  ok(await member.patch(`/user_groups/${g}`, { deactivated: false }));
  ok(await member.patch(`/user_groups/${user}`, { can_mention_group: { new: g } }));
  ok(await member.post(`/user_groups/${user}/subgroups`, { add: [g] }));
});

test('mentions: deactivated groups render silent; can_mention_group decides who may notify a group', async () => {
  const open = await create(member, { name: 'Open Team' });
  const closed = await create(member, { name: 'Closed Team', can_mention_group: { direct_members: [other.id], direct_subgroups: [] } });
  const gone = await create(member, { name: 'Gone Team' });
  ok(await member.post(`/user_groups/${gone}/deactivate`));
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const result = await renderMarkdown(server.svc, { realm, content: 'hi @*open team* and @*Gone Team* and @_*Closed Team* and @*nobody here*' });
  assert.ok(result.html.includes(`<span class="user-group-mention" data-user-group-id="${open}">@Open Team</span>`), result.html);
  assert.ok(result.html.includes(`<span class="user-group-mention silent" data-user-group-id="${gone}">Gone Team</span>`), result.html);
  assert.ok(result.html.includes(`<span class="user-group-mention silent" data-user-group-id="${closed}">Closed Team</span>`), result.html);
  assert.deepEqual(result.mentions.group_ids, [open]);

  const asUser = async (c: Client) => (await getUser(server.svc.db, 1, c.id))!;
  assert.equal(await mayMentionGroup(server.svc.db, await asUser(guest), open), true);
  assert.equal(await mayMentionGroup(server.svc.db, await asUser(other), closed), true);
  assert.equal(await mayMentionGroup(server.svc.db, await asUser(member), closed), false);
  assert.equal(await mayMentionGroup(server.svc.db, await asUser(owner), gone), false);
  await checkGroupMentionsAllowed(server.svc.db, await asUser(other), [open, closed]);
  await assert.rejects(checkGroupMentionsAllowed(server.svc.db, await asUser(member), [open, closed]), {
    message: "You are not allowed to mention user group 'Closed Team'.",
  });
  // System groups are nobody's to mention.
  assert.equal(await mayMentionGroup(server.svc.db, await asUser(owner), sys['role:members']), false);
});

test('mentions in messages sent through the API: can_mention_group is enforced, deactivated groups notify nobody', async () => {
  ok(await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'Group mentions' }], principals: [owner.id, member.id, other.id, moderator.id] }));
  await create(member, { name: 'Mentionable', members: [other.id] });
  await create(member, { name: 'Restricted', members: [other.id], can_mention_group: { direct_members: [moderator.id], direct_subgroups: [] } });
  const gone = await create(member, { name: 'Retired', members: [other.id] });
  ok(await member.post(`/user_groups/${gone}/deactivate`));
  const send = (c: Client, content: string) => c.post('/messages', { type: 'stream', to: 'Group mentions', topic: 'mentions', content });
  const flagsOf = async (id: number) => ok(await other.get(`/messages/${id}`)).message.flags;
  const countMessages = async () =>
    Number(
      (
        await server.svc.db
          .selectFrom('messages')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  const before = await countMessages();
  refused(await send(member, 'hey @*Restricted*'), "You are not allowed to mention user group 'Restricted'.");
  refused(await send(owner, 'hey @*Mentionable* and @*Restricted*'), "You are not allowed to mention user group 'Restricted'.");
  assert.equal(await countMessages(), before, 'a refused message is not stored');

  const allowed = ok(await send(moderator, 'hey @*Restricted*')).id;
  assert.ok((await flagsOf(allowed)).includes('mentioned'));
  const openly = ok(await send(member, 'hey @*Mentionable*')).id;
  assert.ok((await flagsOf(openly)).includes('mentioned'));
  // A silent mention notifies nobody, so anyone may write it.
  const silent = ok(await send(member, 'hey @_*Restricted*')).id;
  assert.ok(!(await flagsOf(silent)).includes('mentioned'));
  const retired = ok(await send(member, 'hey @*Retired*'));
  assert.ok(!(await flagsOf(retired.id)).includes('mentioned'));
  assert.match(
    ok(await other.get(`/messages/${retired.id}`)).message.content,
    new RegExp(`<span class="user-group-mention silent" data-user-group-id="${gone}">Retired</span>`),
  );
  ok(await member.patch(`/user_groups/${gone}`, { deactivated: false }));
  const back = ok(await send(member, 'hey @*Retired*')).id;
  assert.ok((await flagsOf(back)).includes('mentioned'), 'a reactivated group can be mentioned again');
});
