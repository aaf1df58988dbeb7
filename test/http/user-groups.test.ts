// User groups through HTTP (spec endpoint 3, "User group", "Group-setting value";
// digest 1.3, 1.24, section 2): creating, listing, updating, membership and
// subgroups, with who may and who may not do each.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createGroup as create, ok, refused, setRealmSetting as setSetting, startGroupFixture, uniqueName } from './user-groups.fixture.ts';

const { server, owner, admin, moderator, member, other, guest, sys } = await startGroupFixture();
after(() => server.close());

const setRealmSetting = (setting: string, groupId: number) => setSetting(server, setting, groupId);

async function groupById(id: number): Promise<any> {
  const groups = ok(await owner.get('/user_groups', { include_deactivated_groups: true })).user_groups;
  return groups.find((g: any) => g.id === id);
}

async function countGroups(): Promise<number> {
  const row = await server.svc.db
    .selectFrom('user_groups')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const GROUP_FIELDS = [
  'id',
  'name',
  'description',
  'members',
  'direct_subgroup_ids',
  'is_system_group',
  'creator_id',
  'date_created',
  'deactivated',
  'can_add_members_group',
  'can_join_group',
  'can_leave_group',
  'can_manage_group',
  'can_mention_group',
  'can_remove_members_group',
].sort();

test('POST /user_groups/create: the group object, with the creator-based defaults', async () => {
  const before = Math.floor(Date.now() / 1000);
  const res = await member.post('/user_groups/create', { name: 'Backend', description: 'The backend team', members: [other.id, member.id] });
  const { group_id } = ok(res);
  assert.deepEqual(Object.keys(res.body).sort(), ['group_id', 'msg', 'result']);
  const group = await groupById(group_id);
  assert.deepEqual(Object.keys(group).sort(), GROUP_FIELDS);
  const self = { direct_members: [member.id], direct_subgroups: [] };
  assert.deepEqual(
    { ...group, date_created: 0 },
    {
      id: group_id,
      name: 'Backend',
      description: 'The backend team',
      members: [member.id, other.id].sort((a, b) => a - b),
      direct_subgroup_ids: [],
      is_system_group: false,
      creator_id: member.id,
      date_created: 0,
      deactivated: false,
      can_add_members_group: self,
      can_join_group: sys['role:nobody'],
      can_leave_group: sys['role:everyone'],
      can_manage_group: self,
      can_mention_group: sys['role:everyone'],
      can_remove_members_group: sys['role:nobody'],
    },
  );
  assert.ok(group.date_created >= before - 1 && group.date_created <= Math.floor(Date.now() / 1000) + 1);
});

test('create: settings as plain group-setting values, and subgroups', async () => {
  const sub = await create(member);
  const id = await create(member, {
    subgroups: [sub, sys['role:moderators']],
    can_manage_group: sys['role:administrators'],
    can_mention_group: { direct_members: [other.id], direct_subgroups: [sys['role:moderators']] },
    can_join_group: { direct_members: [], direct_subgroups: [sys['role:members']] },
    can_leave_group: { direct_members: [], direct_subgroups: [] },
  });
  const group = await groupById(id);
  assert.deepEqual(
    group.direct_subgroup_ids,
    [sub, sys['role:moderators']].sort((a, b) => a - b),
  );
  assert.equal(group.can_manage_group, sys['role:administrators']);
  assert.deepEqual(group.can_mention_group, { direct_members: [other.id], direct_subgroups: [sys['role:moderators']] });
  // The simplest form: one subgroup is that group, nothing is role:nobody.
  assert.equal(group.can_join_group, sys['role:members']);
  assert.equal(group.can_leave_group, sys['role:nobody']);
});

test('create: who may (can_create_groups) and who may not', async () => {
  refused(await guest.post('/user_groups/create', { name: uniqueName(), description: '', members: [] }), 'Not allowed for guest users');
  for (const client of [member, moderator, admin, owner]) await create(client);
  await setRealmSetting('can_create_groups', sys['role:administrators']);
  try {
    for (const client of [member, moderator]) {
      refused(await client.post('/user_groups/create', { name: uniqueName(), description: '', members: [] }), 'Insufficient permission');
    }
    for (const client of [admin, owner]) await create(client);
  } finally {
    await setRealmSetting('can_create_groups', sys['role:members']);
  }
});

test('create: names, members, subgroups and setting values are checked; a refusal creates nothing', async () => {
  const before = await countGroups();
  const attempt = (params: Record<string, unknown>) => member.post('/user_groups/create', { name: uniqueName(), description: '', members: [], ...params });
  refused(await attempt({ name: '  ' }), "User group name can't be empty!");
  refused(await attempt({ name: 'x'.repeat(101) }), 'User group name cannot exceed 100 characters.');
  for (const prefix of ['@', 'role:', 'user:', 'stream:', 'channel:']) {
    refused(await attempt({ name: `${prefix}team` }), `User group name cannot start with '${prefix}'.`);
  }
  await create(member, { name: 'Taken Name' });
  const afterTaken = await countGroups();
  refused(await attempt({ name: 'taken name' }), "User group 'taken name' already exists.");
  refused(await attempt({ members: [member.id, 999999] }), 'Invalid user ID: 999999');
  const gone = await server.createUser();
  await owner.delete(`/users/${gone.id}`);
  refused(await attempt({ members: [gone.id] }), `Invalid user ID: ${gone.id}`);
  refused(await attempt({ subgroups: [999999] }), 'Invalid user group ID: 999999');
  refused(await attempt({ can_manage_group: sys['role:internet'] }), "'can_manage_group' setting cannot be set to 'role:internet' group.");
  refused(await attempt({ can_manage_group: sys['role:everyone'] }), "'can_manage_group' setting cannot be set to 'role:everyone' group.");
  refused(await attempt({ can_mention_group: sys['role:owners'] }), "'can_mention_group' setting cannot be set to 'role:owners' group.");
  refused(await attempt({ can_mention_group: sys['role:internet'] }), "'can_mention_group' setting cannot be set to 'role:internet' group.");
  refused(await attempt({ can_join_group: 999999 }), 'Invalid user group ID: 999999');
  refused(await attempt({ can_join_group: { direct_members: [999999], direct_subgroups: [] } }), 'Invalid user ID: 999999');
  refused(await attempt({ members: undefined }), "Missing 'members' argument", 'REQUEST_VARIABLE_MISSING');
  assert.equal(await countGroups(), afterTaken);
  assert.equal(afterTaken, before + 3, 'only the one created group and its two anonymous settings');
});

test('GET /user_groups: members and administrators, deactivated groups on request', async () => {
  refused(await guest.get('/user_groups'), 'Not allowed for guest users');
  const id = await create(member);
  ok(await member.post(`/user_groups/${id}/deactivate`));
  for (const client of [member, moderator, admin, owner]) {
    const active = ok(await client.get('/user_groups')).user_groups;
    assert.ok(!active.some((g: any) => g.id === id));
    assert.ok(active.every((g: any) => g.deactivated === false));
    const all = ok(await client.get('/user_groups', { include_deactivated_groups: true })).user_groups;
    assert.equal(all.find((g: any) => g.id === id).deactivated, true);
  }
  const groups = ok(await member.get('/user_groups')).user_groups;
  assert.deepEqual(
    groups.map((g: any) => g.id),
    [...groups.map((g: any) => g.id)].sort((a: number, b: number) => a - b),
  );
  const everyone = groups.find((g: any) => g.id === sys['role:everyone']);
  assert.equal(everyone.name, 'role:everyone');
  assert.equal(everyone.is_system_group, true);
  assert.equal(everyone.creator_id, null);
  assert.deepEqual(everyone.direct_subgroup_ids, [sys['role:members']]);
  assert.deepEqual(everyone.members, [guest.id]);
  for (const s of ['can_add_members_group', 'can_join_group', 'can_leave_group', 'can_manage_group', 'can_mention_group', 'can_remove_members_group']) {
    assert.equal(everyone[s], sys['role:nobody'], s);
  }
});

test('PATCH /user_groups/{id}: who may manage a group and who may not', async () => {
  const id = await create(member);
  refused(await guest.patch(`/user_groups/${id}`, { description: 'x' }), 'Not allowed for guest users');
  // Administrators manage groups only through can_manage_all_groups (owners by default) or the group's own setting.
  for (const client of [other, moderator, admin]) refused(await client.patch(`/user_groups/${id}`, { description: 'x' }), 'Insufficient permission');
  ok(await member.patch(`/user_groups/${id}`, { description: 'by the creator' }));
  ok(await owner.patch(`/user_groups/${id}`, { description: 'by an owner' }));
  assert.equal((await groupById(id)).description, 'by an owner');

  await setRealmSetting('can_manage_all_groups', sys['role:moderators']);
  try {
    ok(await moderator.patch(`/user_groups/${id}`, { description: 'by a moderator' }));
    refused(await other.patch(`/user_groups/${id}`, { description: 'x' }), 'Insufficient permission');
  } finally {
    await setRealmSetting('can_manage_all_groups', sys['role:owners']);
  }
  ok(await member.patch(`/user_groups/${id}`, { can_manage_group: { new: { direct_members: [other.id], direct_subgroups: [] } } }));
  ok(await other.patch(`/user_groups/${id}`, { description: 'by the new manager' }));
  refused(await member.patch(`/user_groups/${id}`, { description: 'x' }), 'Insufficient permission');

  refused(await owner.patch(`/user_groups/${sys['role:members']}`, { description: 'x' }), 'Insufficient permission');
  refused(await owner.patch('/user_groups/999999', { description: 'x' }), 'Invalid user group');
  refused(await owner.patch(`/user_groups/${id}`, {}), 'No new data supplied');
});

test('PATCH: name and description', async () => {
  const id = await create(member, { name: 'Original' });
  await create(member, { name: 'Occupied' });
  refused(await member.patch(`/user_groups/${id}`, { name: 'OCCUPIED' }), "User group 'OCCUPIED' already exists.");
  refused(await member.patch(`/user_groups/${id}`, { name: '' }), "User group name can't be empty!");
  refused(await member.patch(`/user_groups/${id}`, { name: 'role:x' }), "User group name cannot start with 'role:'.");
  ok(await member.patch(`/user_groups/${id}`, { name: 'original' }));
  ok(await member.patch(`/user_groups/${id}`, { name: 'Renamed', description: 'New description' }));
  const group = await groupById(id);
  assert.equal(group.name, 'Renamed');
  assert.equal(group.description, 'New description');
});

test('PATCH: permission settings as {new, old}', async () => {
  const id = await create(member);
  const self = { direct_members: [member.id], direct_subgroups: [] };
  // `old` must match what the setting holds now (in any equivalent form).
  refused(
    await member.patch(`/user_groups/${id}`, { can_mention_group: { new: sys['role:members'], old: sys['role:members'] } }),
    "'old' value does not match the expected value.",
    'EXPECTATION_MISMATCH',
  );
  ok(
    await member.patch(`/user_groups/${id}`, {
      can_mention_group: { new: sys['role:members'], old: { direct_members: [], direct_subgroups: [sys['role:everyone']] } },
    }),
  );
  ok(
    await member.patch(`/user_groups/${id}`, {
      can_add_members_group: { new: { direct_members: [other.id], direct_subgroups: [sys['role:moderators']] }, old: self },
    }),
  );
  ok(await member.patch(`/user_groups/${id}`, { can_join_group: { new: sys['role:fullmembers'] }, can_leave_group: { new: sys['role:nobody'] } }));
  let group = await groupById(id);
  assert.equal(group.can_mention_group, sys['role:members']);
  assert.deepEqual(group.can_add_members_group, { direct_members: [other.id], direct_subgroups: [sys['role:moderators']] });
  assert.equal(group.can_join_group, sys['role:fullmembers']);
  assert.equal(group.can_leave_group, sys['role:nobody']);

  refused(
    await member.patch(`/user_groups/${id}`, { can_manage_group: { new: sys['role:everyone'] } }),
    "'can_manage_group' setting cannot be set to 'role:everyone' group.",
  );
  refused(
    await member.patch(`/user_groups/${id}`, { can_manage_group: { new: sys['role:internet'] } }),
    "'can_manage_group' setting cannot be set to 'role:internet' group.",
  );
  refused(
    await member.patch(`/user_groups/${id}`, { can_mention_group: { new: sys['role:owners'] } }),
    "'can_mention_group' setting cannot be set to 'role:owners' group.",
  );
  refused(await member.patch(`/user_groups/${id}`, { can_mention_group: { new: 999999 } }), 'Invalid user group ID: 999999');
  refused(await member.patch(`/user_groups/${id}`, { can_mention_group: { old: sys['role:members'] } }), 'can_mention_group["new"] is not valid');
  refused(await member.patch(`/user_groups/${id}`, { can_mention_group: 5 }), 'can_mention_group is not a dict');

  // An anonymous value that is replaced leaves no row behind.
  const anonymous = await server.svc.db.selectFrom('user_groups').select('can_add_members_group_id').where('id', '=', id).executeTakeFirstOrThrow();
  ok(await member.patch(`/user_groups/${id}`, { can_add_members_group: { new: sys['role:members'] } }));
  const row = await server.svc.db.selectFrom('user_groups').select('id').where('id', '=', anonymous.can_add_members_group_id!).executeTakeFirst();
  assert.equal(row, undefined);
  group = await groupById(id);
  assert.equal(group.can_add_members_group, sys['role:members']);
});

test('a failed request changes nothing: an `old` mismatch undoes the whole PATCH', async () => {
  const id = await create(member, { name: 'Stable', description: 'Unchanged' });
  const before = await groupById(id);
  const res = await member.patch(`/user_groups/${id}`, {
    name: 'Changed',
    description: 'Changed too',
    can_join_group: { new: sys['role:members'] },
    can_mention_group: { new: sys['role:members'], old: sys['role:nobody'] },
  });
  refused(res, "'old' value does not match the expected value.", 'EXPECTATION_MISMATCH');
  assert.deepEqual(await groupById(id), before);
});

test('PATCH deactivated: false reactivates, true does nothing; deactivated groups stay editable', async () => {
  const id = await create(member);
  ok(await member.patch(`/user_groups/${id}`, { deactivated: true }));
  assert.equal((await groupById(id)).deactivated, false);
  ok(await member.post(`/user_groups/${id}/deactivate`));
  ok(await member.patch(`/user_groups/${id}`, { name: 'Renamed while deactivated', can_join_group: { new: sys['role:members'] } }));
  let group = await groupById(id);
  assert.equal(group.deactivated, true);
  assert.equal(group.name, 'Renamed while deactivated');
  refused(await other.patch(`/user_groups/${id}`, { deactivated: false }), 'Insufficient permission');
  ok(await member.patch(`/user_groups/${id}`, { deactivated: false }));
  group = await groupById(id);
  assert.equal(group.deactivated, false);
});

test('POST /user_groups/{id}/members: adding and removing others needs can_add/can_remove_members_group', async () => {
  const id = await create(member);
  refused(await guest.post(`/user_groups/${id}/members`, { add: [other.id] }), 'Not allowed for guest users');
  for (const client of [other, moderator, admin]) refused(await client.post(`/user_groups/${id}/members`, { add: [guest.id] }), 'Insufficient permission');
  ok(await member.post(`/user_groups/${id}/members`, { add: [other.id, guest.id] }));
  ok(await owner.post(`/user_groups/${id}/members`, { add: [admin.id] }));
  assert.deepEqual(
    (await groupById(id)).members,
    [admin.id, other.id, guest.id].sort((a, b) => a - b),
  );
  refused(await member.post(`/user_groups/${id}/members`, { add: [other.id] }), `User ${other.id} is already a member of this group`);
  refused(await member.post(`/user_groups/${id}/members`, { add: [999999] }), 'Invalid user ID: 999999');

  // can_remove_members_group is nobody by default: only managers remove others.
  refused(await other.post(`/user_groups/${id}/members`, { delete: [guest.id] }), 'Insufficient permission');
  ok(
    await member.patch(`/user_groups/${id}`, {
      can_remove_members_group: { new: sys['role:moderators'] },
      can_add_members_group: { new: sys['role:administrators'] },
    }),
  );
  ok(await moderator.post(`/user_groups/${id}/members`, { delete: [guest.id] }));
  refused(await moderator.post(`/user_groups/${id}/members`, { add: [guest.id] }), 'Insufficient permission');
  ok(await admin.post(`/user_groups/${id}/members`, { add: [guest.id] }));
  refused(await member.post(`/user_groups/${id}/members`, { delete: [member.id] }), `There is no member '${member.id}' in this user group`);
  refused(await member.post(`/user_groups/${id}/members`, { delete: [999999] }), 'Invalid user ID: 999999');
  refused(
    await member.post(`/user_groups/${id}/members`, {}),
    'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".',
  );
  refused(
    await member.post(`/user_groups/${id}/members`, { add: [] }),
    'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".',
  );
  refused(await owner.post(`/user_groups/${sys['role:members']}/members`, { add: [guest.id] }), 'Insufficient permission');
  refused(await owner.post('/user_groups/999999/members', { add: [guest.id] }), 'Invalid user group');
});

test('joining and leaving oneself: can_join_group and can_leave_group', async () => {
  const id = await create(member);
  // Nobody may join by default; everyone may leave.
  refused(await other.post(`/user_groups/${id}/members`, { add: [other.id] }), 'Insufficient permission');
  ok(await member.patch(`/user_groups/${id}`, { can_join_group: { new: sys['role:members'] } }));
  ok(await other.post(`/user_groups/${id}/members`, { add: [other.id] }));
  ok(await moderator.post(`/user_groups/${id}/members`, { add: [moderator.id] }));
  refused(await guest.post(`/user_groups/${id}/members`, { add: [guest.id] }), 'Not allowed for guest users');
  // Joining oneself does not let one add others.
  refused(await other.post(`/user_groups/${id}/members`, { add: [admin.id] }), 'Insufficient permission');
  refused(await other.post(`/user_groups/${id}/members`, { add: [other.id, admin.id] }), 'Insufficient permission');
  ok(await other.post(`/user_groups/${id}/members`, { delete: [other.id] }));
  ok(await member.patch(`/user_groups/${id}`, { can_leave_group: { new: sys['role:nobody'] } }));
  refused(await moderator.post(`/user_groups/${id}/members`, { delete: [moderator.id] }), 'Insufficient permission');
  refused(await moderator.post(`/user_groups/${id}/members`, { delete: [moderator.id, other.id] }), 'Insufficient permission');
  // Managers may remove anyone, themselves included.
  ok(await member.post(`/user_groups/${id}/members`, { delete: [moderator.id] }));
  assert.deepEqual((await groupById(id)).members, []);
});

test('members and subgroups in one request: all or nothing', async () => {
  const id = await create(member, { members: [other.id] });
  const sub = await create(member);
  const before = await groupById(id);
  refused(
    await member.post(`/user_groups/${id}/members`, { add: [admin.id], delete: [moderator.id] }),
    `There is no member '${moderator.id}' in this user group`,
  );
  refused(await member.post(`/user_groups/${id}/members`, { delete: [other.id], add_subgroups: [999999] }), 'Invalid user group ID: 999999');
  assert.deepEqual(await groupById(id), before);
  ok(await member.post(`/user_groups/${id}/members`, { add: [admin.id], delete: [other.id], add_subgroups: [sub] }));
  const after = await groupById(id);
  assert.deepEqual(after.members, [admin.id]);
  assert.deepEqual(after.direct_subgroup_ids, [sub]);
});

test('subgroups: adding needs can_add_members_group, removing needs managing; no cycles', async () => {
  const a = await create(member);
  const b = await create(member);
  const c = await create(member);
  refused(await other.post(`/user_groups/${a}/subgroups`, { add: [b] }), 'Insufficient permission');
  refused(await guest.post(`/user_groups/${a}/subgroups`, { add: [b] }), 'Not allowed for guest users');
  ok(await member.post(`/user_groups/${a}/subgroups`, { add: [b] }));
  ok(await member.post(`/user_groups/${b}/members`, { add_subgroups: [c, sys['role:moderators']] }));
  refused(await member.post(`/user_groups/${a}/subgroups`, { add: [b] }), `User group ${b} is already a subgroup of this group.`);
  refused(await member.post(`/user_groups/${c}/subgroups`, { add: [a] }), `User group ${c} is already a subgroup of one of the passed subgroups.`);
  refused(await member.post(`/user_groups/${a}/subgroups`, { add: [a] }), `User group ${a} is already a subgroup of one of the passed subgroups.`);
  refused(await member.post(`/user_groups/${a}/subgroups`, { add: [999999] }), 'Invalid user group ID: 999999');
  refused(await member.post(`/user_groups/${a}/subgroups`, { delete: [c] }), `User group ${c} is not a subgroup of this group.`);
  refused(await member.post(`/user_groups/${a}/subgroups`, {}), 'Nothing to do. Specify at least one of "add" or "delete".');
  refused(await owner.post(`/user_groups/${sys['role:members']}/subgroups`, { add: [a] }), 'Insufficient permission');

  // can_add_members_group lets one add subgroups but not remove them.
  ok(await member.patch(`/user_groups/${a}`, { can_add_members_group: { new: sys['role:members'] } }));
  const d = await create(other);
  ok(await other.post(`/user_groups/${a}/subgroups`, { add: [d] }));
  refused(await other.post(`/user_groups/${a}/subgroups`, { delete: [d] }), 'Insufficient permission');
  ok(await member.post(`/user_groups/${a}/subgroups`, { delete: [d] }));

  assert.deepEqual(ok(await other.get(`/user_groups/${a}/subgroups`, { direct_subgroup_only: true })).subgroups, [b]);
  const all = ok(await other.get(`/user_groups/${a}/subgroups`)).subgroups;
  assert.deepEqual(
    all,
    [...all].sort((x: number, y: number) => x - y),
  );
  for (const g of [b, c, sys['role:moderators'], sys['role:administrators'], sys['role:owners']]) assert.ok(all.includes(g), String(g));
  assert.ok(!all.includes(a));
  refused(await guest.get(`/user_groups/${a}/subgroups`), 'Not allowed for guest users');
});

test('GET members, membership of one user: direct or through subgroups, active users only', async () => {
  const inner = await create(member, { members: [other.id] });
  const outer = await create(member, { members: [member.id], subgroups: [inner] });
  const leaving = await server.createUser();
  ok(await member.post(`/user_groups/${outer}/members`, { add: [leaving.id] }));
  const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
  assert.deepEqual(ok(await member.get(`/user_groups/${outer}/members`)).members, sorted([member.id, other.id, leaving.id]));
  assert.deepEqual(ok(await member.get(`/user_groups/${outer}/members`, { direct_member_only: true })).members, sorted([member.id, leaving.id]));
  ok(await owner.delete(`/users/${leaving.id}`));
  assert.deepEqual(ok(await member.get(`/user_groups/${outer}/members`)).members, sorted([member.id, other.id]));
  assert.deepEqual((await groupById(outer)).members, [member.id]);

  assert.equal(ok(await member.get(`/user_groups/${outer}/members/${other.id}`)).is_user_group_member, true);
  assert.equal(ok(await member.get(`/user_groups/${outer}/members/${other.id}`, { direct_member_only: true })).is_user_group_member, false);
  assert.equal(ok(await member.get(`/user_groups/${outer}/members/${admin.id}`)).is_user_group_member, false);
  refused(await member.get(`/user_groups/${outer}/members/${leaving.id}`), 'User is deactivated');
  refused(await member.get(`/user_groups/${outer}/members/999999`), 'No such user');
  assert.deepEqual(ok(await member.get(`/user_groups/${sys['role:administrators']}/members`)).members, sorted([owner.id, admin.id]));
  refused(await guest.get(`/user_groups/${outer}/members`), 'Not allowed for guest users');
  refused(await guest.get(`/user_groups/${outer}/members/${other.id}`), 'Not allowed for guest users');
  refused(await member.get('/user_groups/999999/members'), 'Invalid user group');
  ok(await member.post(`/user_groups/${outer}/deactivate`));
  refused(await member.get(`/user_groups/${outer}/members`), 'User group is deactivated.');
});

test('concurrent requests: one name, one winner; two subgroup edits never close a cycle', async () => {
  const results = await Promise.all(Array.from({ length: 6 }, () => member.post('/user_groups/create', { name: 'Raced Name', description: '', members: [] })));
  assert.equal(results.filter((r) => r.status === 200).length, 1);
  for (const r of results.filter((r) => r.status !== 200)) refused(r, "User group 'Raced Name' already exists.");
  for (let round = 0; round < 4; round++) {
    const a = await create(member);
    const b = await create(member);
    const [ab, ba] = await Promise.all([member.post(`/user_groups/${a}/subgroups`, { add: [b] }), member.post(`/user_groups/${b}/subgroups`, { add: [a] })]);
    assert.deepEqual([ab.status, ba.status].sort(), [200, 400], JSON.stringify([ab.body, ba.body]));
    const loser = ab.status === 400 ? ab : ba;
    assert.match(loser.body.msg, /^User group \d+ is already a subgroup of one of the passed subgroups\.$/);
  }
});
