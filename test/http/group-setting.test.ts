// The group-setting value and the one membership question every permission asks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import {
  dropIfAnonymous,
  groupMemberIds,
  groupSettingValue,
  isUserInGroup,
  settingValueEquals,
  storeGroupSettingValue,
  systemGroupIds,
} from '../../src/user_groups/group-setting.ts';
import { ApiError } from '../../src/http/errors.ts';
import type { SystemGroupName } from '../../src/user_groups/system-groups.ts';

let server: TestServer;
let groups: Record<SystemGroupName, number>;
let realmId: number;
const users: Record<string, Client> = {};
before(async () => {
  server = await startTestServer();
  realmId = (await server.svc.db.selectFrom('realms').select('id').executeTakeFirstOrThrow()).id;
  groups = await systemGroupIds(server.svc.db, realmId);
  users.owner = server.owner;
  users.admin = await server.createUser({ role: ROLE.ADMINISTRATOR });
  users.moderator = await server.createUser({ role: ROLE.MODERATOR });
  users.member = await server.createUser({ role: ROLE.MEMBER });
  users.guest = await server.createUser({ role: ROLE.GUEST });
});
after(() => server.close());

test('system groups nest by role', async () => {
  const expected: Record<string, SystemGroupName[]> = {
    owner: ['role:internet', 'role:everyone', 'role:members', 'role:fullmembers', 'role:moderators', 'role:administrators', 'role:owners'],
    admin: ['role:internet', 'role:everyone', 'role:members', 'role:fullmembers', 'role:moderators', 'role:administrators'],
    moderator: ['role:internet', 'role:everyone', 'role:members', 'role:fullmembers', 'role:moderators'],
    member: ['role:internet', 'role:everyone', 'role:members', 'role:fullmembers'],
    guest: ['role:internet', 'role:everyone'],
  };
  for (const [who, inGroups] of Object.entries(expected)) {
    for (const name of Object.keys(groups) as SystemGroupName[]) {
      assert.equal(await isUserInGroup(server.svc.db, users[who].id, groups[name]), inGroups.includes(name), `${who} in ${name}`);
    }
  }
  assert.deepEqual(await groupMemberIds(server.svc.db, groups['role:nobody']), []);
  assert.deepEqual(
    await groupMemberIds(server.svc.db, groups['role:moderators']),
    [users.owner.id, users.admin.id, users.moderator.id].sort((a, b) => a - b),
  );
});

test("an anonymous value admits its members and its subgroups' members", async () => {
  const id = await server.svc.db
    .transaction()
    .execute((tx) =>
      storeGroupSettingValue(tx, realmId, { direct_members: [users.guest.id], direct_subgroups: [groups['role:administrators']] }, 'can_x_group'),
    );
  assert.deepEqual(await groupSettingValue(server.svc.db, id), {
    direct_members: [users.guest.id],
    direct_subgroups: [groups['role:administrators']],
  });
  assert.equal(await isUserInGroup(server.svc.db, users.guest.id, id), true);
  assert.equal(await isUserInGroup(server.svc.db, users.admin.id, id), true);
  assert.equal(await isUserInGroup(server.svc.db, users.owner.id, id), true);
  assert.equal(await isUserInGroup(server.svc.db, users.member.id, id), false);
  assert.equal(
    await settingValueEquals(server.svc.db, realmId, id, { direct_members: [users.guest.id], direct_subgroups: [groups['role:administrators']] }),
    true,
  );
  assert.equal(await settingValueEquals(server.svc.db, realmId, id, groups['role:administrators']), false);
  await dropIfAnonymous(server.svc.db as any, id);
  assert.equal(await server.svc.db.selectFrom('user_groups').select('id').where('id', '=', id).executeTakeFirst(), undefined);
});

test('values are reduced to their simplest form', async () => {
  const store = (v: Parameters<typeof storeGroupSettingValue>[2]) =>
    server.svc.db.transaction().execute((tx) => storeGroupSettingValue(tx, realmId, v, 'can_x_group'));
  assert.equal(await store(groups['role:members']), groups['role:members']);
  assert.equal(await store({ direct_members: [], direct_subgroups: [groups['role:members']] }), groups['role:members']);
  assert.equal(await store({ direct_members: [], direct_subgroups: [] }), groups['role:nobody']);
  assert.equal(
    await settingValueEquals(server.svc.db, realmId, groups['role:members'], { direct_members: [], direct_subgroups: [groups['role:members']] }),
    true,
  );
});

test('invalid values and setting constraints are refused', async () => {
  const refusal = async (v: Parameters<typeof storeGroupSettingValue>[2], rules = {}) => {
    try {
      await server.svc.db.transaction().execute((tx) => storeGroupSettingValue(tx, realmId, v, 'can_manage_group', rules));
    } catch (e) {
      assert.ok(e instanceof ApiError);
      return e;
    }
    assert.fail('expected a refusal');
  };
  assert.equal((await refusal(999999)).message, 'Invalid user group ID: 999999');
  assert.equal((await refusal({ direct_members: [999999], direct_subgroups: [] })).message, 'Invalid user ID: 999999');
  assert.equal((await refusal(groups['role:internet'])).message, "'can_manage_group' setting cannot be set to 'role:internet' group.");
  assert.equal(
    (await refusal(groups['role:everyone'], { allowEveryone: false })).message,
    "'can_manage_group' setting cannot be set to 'role:everyone' group.",
  );
  assert.equal((await refusal(groups['role:owners'], { allowOwners: false })).message, "'can_manage_group' setting cannot be set to 'role:owners' group.");
  const system = await refusal({ direct_members: [users.member.id], direct_subgroups: [] }, { requireSystemGroup: true });
  assert.equal(system.code, 'SYSTEM_GROUP_REQUIRED');
  // A failed store leaves no anonymous group behind.
  const before = await server.svc.db
    .selectFrom('user_groups')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  await refusal({ direct_members: [users.member.id], direct_subgroups: [groups['role:internet']] });
  const afterCount = await server.svc.db
    .selectFrom('user_groups')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  assert.equal(Number(afterCount.n), Number(before.n));
});
