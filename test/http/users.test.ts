// Users and roles (spec "User", endpoints 13, 17, 22; digest 1.13, 1.17, 1.22, 1.26).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, OWNER_EMAIL, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { systemGroupIds, userGroupIds } from '../../src/user_groups/group-setting.ts';

let server: TestServer;
let admin: Client;
let member: Client;
let guest: Client;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com', fullName: 'Ada Admin' });
  member = await server.createUser({ role: ROLE.MEMBER, email: 'member@example.com', fullName: 'Mem Ber' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com', fullName: 'Gue St' });
});
after(() => server.close());

const USER_FIELDS = [
  'user_id',
  'delivery_email',
  'email',
  'full_name',
  'date_joined',
  'is_active',
  'is_owner',
  'is_admin',
  'is_guest',
  'is_bot',
  'bot_type',
  'bot_owner_id',
  'role',
  'timezone',
  'avatar_url',
  'avatar_version',
].sort();

test('GET /users/me returns the caller with every field', async () => {
  const res = await member.get('/users/me');
  assert.equal(res.status, 200);
  const { result, msg, max_message_id, profile_data, ...user } = res.body;
  assert.equal(result, 'success');
  assert.equal(msg, '');
  assert.equal(max_message_id, -1);
  assert.deepEqual(profile_data, {});
  // The bot fields are for bots only, as in the reference.
  assert.deepEqual(
    Object.keys(user).sort(),
    USER_FIELDS.filter((k) => k !== 'bot_type' && k !== 'bot_owner_id'),
  );
  assert.equal(user.user_id, member.id);
  assert.equal(user.email, 'member@example.com');
  assert.equal(user.delivery_email, 'member@example.com');
  assert.equal(user.full_name, 'Mem Ber');
  assert.equal(user.role, 400);
  assert.equal(user.is_active, true);
  assert.equal(user.is_admin, false);
  assert.equal(user.is_bot, false);
  assert.match(user.date_joined, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$/);
  assert.match(user.avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/);
});

test('role flags follow the role', async () => {
  const flags = async (c: Client) => {
    const u = (await c.get('/users/me')).body;
    return [u.role, u.is_owner, u.is_admin, u.is_guest];
  };
  assert.deepEqual(await flags(server.owner), [100, true, true, false]);
  assert.deepEqual(await flags(admin), [200, false, true, false]);
  assert.deepEqual(await flags(member), [400, false, false, false]);
  assert.deepEqual(await flags(guest), [600, false, false, true]);
});

test('GET /users/{id} and /users/{email}, with client_svcavatar and custom profile fields', async () => {
  const byId = await guest.get(`/users/${member.id}`);
  assert.equal(byId.status, 200);
  assert.deepEqual(Object.keys(byId.body.user).sort(), USER_FIELDS);
  // Default client_svcavatar=true: the client computes provider avatars it can see the email for.
  assert.equal(byId.body.user.avatar_url, null);
  const withUrl = await guest.get(`/users/${member.id}`, { client_svcavatar: false });
  assert.match(withUrl.body.user.avatar_url, /gravatar/);
  const byEmail = await guest.get('/users/MEMBER@example.com');
  assert.equal(byEmail.body.user.user_id, member.id);
  const profile = await guest.get(`/users/${member.id}`, { include_custom_profile_fields: true });
  assert.deepEqual(profile.body.user.profile_data, {});
  const missing = await guest.get('/users/999999');
  assert.equal(missing.status, 400);
  assert.deepEqual(missing.body, { result: 'error', msg: 'No such user', code: 'BAD_REQUEST' });
});

test('GET /users lists everyone, deactivated users included, and filters by user_ids', async () => {
  const leaving = await server.createUser({ fullName: 'Lea Ving' });
  await server.owner.delete(`/users/${leaving.id}`);
  const res = await member.get('/users');
  assert.equal(res.status, 200);
  const ids = res.body.members.map((u: any) => u.user_id);
  assert.deepEqual(
    ids,
    [...ids].sort((a: number, b: number) => a - b),
  );
  for (const id of [server.owner.id, admin.id, member.id, guest.id, leaving.id]) assert.ok(ids.includes(id));
  assert.equal(res.body.members.find((u: any) => u.user_id === leaving.id).is_active, false);
  const some = await member.get('/users', { user_ids: [admin.id, guest.id] });
  assert.deepEqual(
    some.body.members.map((u: any) => u.user_id),
    [admin.id, guest.id],
  );
  const withProfiles = await member.get('/users', { include_custom_profile_fields: true });
  assert.deepEqual(withProfiles.body.members[0].profile_data, {});
});

test('hidden email addresses: a fake API email, and the real one only for those allowed', async () => {
  const hidden = await server.createUser({ email: 'secret@example.com', fullName: 'Sec Ret' });
  const fake = `user${hidden.id}@confab.test`;
  await server.svc.db
    .updateTable('users')
    .set({ settings: JSON.stringify({ email_address_visibility: 3 }), email: fake })
    .where('id', '=', hidden.id)
    .execute();
  const seenByMember = (await member.get(`/users/${hidden.id}`, { client_svcavatar: true })).body.user;
  assert.equal(seenByMember.email, fake);
  assert.equal(seenByMember.delivery_email, null);
  // The avatar hashes the real email, so a client that cannot see it needs the URL.
  assert.match(seenByMember.avatar_url, /gravatar/);
  const seenByAdmin = (await admin.get(`/users/${hidden.id}`)).body.user;
  assert.equal(seenByAdmin.delivery_email, 'secret@example.com');
  assert.equal(seenByAdmin.avatar_url, null);
  const self = (await hidden.get('/users/me')).body;
  assert.equal(self.delivery_email, 'secret@example.com');
  assert.equal(self.email, fake);
  // The fake email authenticates and finds the user too.
  assert.equal((await member.get(`/users/${fake}`)).body.user.user_id, hidden.id);
});

test('POST /users: administrators with can_create_users', async () => {
  const denied = await admin.post('/users', { email: 'x1@example.com', password: 'secret123', full_name: 'Xx One' });
  assert.equal(denied.status, 400);
  assert.equal(denied.body.msg, 'User not authorized to create users');
  const byMember = await member.post('/users', { email: 'x2@example.com', password: 'secret123', full_name: 'Xx Two' });
  assert.equal(byMember.body.msg, 'User not authorized to create users');

  const created = await server.owner.post('/users', { email: 'new@example.com', password: 'secret123', full_name: 'New Comer' });
  assert.equal(created.status, 200);
  assert.equal(typeof created.body.user_id, 'number');
  const user = (await member.get(`/users/${created.body.user_id}`)).body.user;
  assert.equal(user.full_name, 'New Comer');
  assert.equal(user.role, 400);
  const login = await server.anonymous.post('/fetch_api_key', { username: 'new@example.com', password: 'secret123' });
  assert.equal(login.status, 200);
  assert.equal(login.body.user_id, created.body.user_id);

  const cases: [Record<string, string>, string][] = [
    [{ email: 'NEW@example.com', password: 'secret123', full_name: 'Du Plicate' }, 'Email is already in use.'],
    [{ email: 'not-an-email', password: 'secret123', full_name: 'Bad Email' }, 'Bad name or username'],
    [{ email: 'weak@example.com', password: '123', full_name: 'Weak Pass' }, 'The password is too weak.'],
    [{ email: 'name1@example.com', password: 'secret123', full_name: ' ' }, 'Name too short!'],
    [{ email: 'name2@example.com', password: 'secret123', full_name: 'Bad*Name' }, 'Invalid characters in name!'],
    [{ email: 'name3@example.com', password: 'secret123', full_name: 'x'.repeat(101) }, 'Name too long!'],
    [{ email: 'name4@example.com', password: 'secret123', full_name: 'Alias|12' }, 'Invalid format!'],
  ];
  for (const [params, msg] of cases) {
    const res = await server.owner.post('/users', params);
    assert.equal(res.status, 400, msg);
    assert.equal(res.body.msg, msg);
    assert.equal(res.body.code, 'BAD_REQUEST');
  }
});

test('POST /users: requests racing for one address create one account; the others are told the address is in use', async () => {
  const params = { email: 'racer@example.com', password: 'secret123', full_name: 'Race Runner' };
  const answers = await Promise.all(Array.from({ length: 4 }, () => server.owner.post('/users', params)));
  const created = answers.filter((r) => r.status === 200);
  assert.equal(created.length, 1, JSON.stringify(answers.map((r) => r.body)));
  for (const r of answers.filter((a) => a.status !== 200)) {
    assert.equal(r.status, 400);
    assert.equal(r.body.msg, 'Email is already in use.');
  }
  const members = (await server.owner.get('/users')).body.members.filter(
    (u: { delivery_email?: string; email: string }) => (u.delivery_email ?? u.email) === 'racer@example.com',
  );
  assert.equal(members.length, 1);
});

test('POST /users: the organization decides which addresses it admits (digest 1.17)', async () => {
  const count = async () => (await server.owner.get('/users')).body.members.length;
  const before = await count();
  const disposable = await server.owner.post('/users', { email: 'throwaway@mailinator.com', password: 'secret123', full_name: 'Throw Away' });
  assert.equal(disposable.status, 400);
  assert.deepEqual(disposable.body, { result: 'error', msg: 'Disposable email addresses are not allowed in this organization', code: 'BAD_REQUEST' });
  assert.equal((await server.owner.patch('/realm', { emails_restricted_to_domains: true })).status, 200);
  try {
    const outside = await server.owner.post('/users', { email: 'outside@example.com', password: 'secret123', full_name: 'Out Side' });
    assert.equal(outside.status, 400);
    assert.equal(outside.body.msg, "Email 'outside@example.com' not allowed in this organization");
    const plus = await server.owner.post('/users', { email: 'some+tag@example.com', password: 'secret123', full_name: 'Plus Tag' });
    assert.equal(plus.body.msg, 'Email addresses containing + are not allowed.');
  } finally {
    await server.owner.patch('/realm', { emails_restricted_to_domains: false, disallow_disposable_email_addresses: false });
  }
  assert.equal(await count(), before, 'nothing was created');
  // An organization that admits disposable addresses takes them.
  const allowed = await server.owner.post('/users', { email: 'throwaway@mailinator.com', password: 'secret123', full_name: 'Throw Away' });
  assert.equal(allowed.status, 200);
  await server.owner.patch('/realm', { disallow_disposable_email_addresses: true });
});

test('PATCH /users/{id}: administrators only; full_name rules', async () => {
  const target = await server.createUser({ fullName: 'Tar Get' });
  const byMember = await member.patch(`/users/${target.id}`, { full_name: 'Nope Nope' });
  assert.equal(byMember.status, 400);
  assert.deepEqual(byMember.body, { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' });
  assert.equal((await admin.patch(`/users/${target.id}`, { full_name: 'New Name' })).status, 200);
  assert.equal((await member.get(`/users/${target.id}`)).body.user.full_name, 'New Name');
  // A blank name is ignored, not an error.
  assert.equal((await admin.patch(`/users/${target.id}`, { full_name: '   ' })).status, 200);
  assert.equal((await member.get(`/users/${target.id}`)).body.user.full_name, 'New Name');
  assert.equal((await admin.patch(`/users/${target.id}`, { full_name: 'Bad@Name' })).body.msg, 'Invalid characters in name!');
  assert.equal((await admin.patch('/users/999999', { full_name: 'Who Ever' })).body.msg, 'No such user');
  assert.equal((await admin.patch(`/users/${target.id}`, { role: 250 })).body.msg, 'Invalid role');
});

test('role changes: only owners touch the owner role, the only owner keeps it, guests cannot become administrators', async () => {
  const target = await server.createUser();
  const toOwner = await admin.patch(`/users/${target.id}`, { role: ROLE.OWNER });
  assert.deepEqual(toOwner.body, { result: 'error', msg: 'Must be an organization owner', code: 'UNAUTHORIZED_PRINCIPAL' });
  const demoteOwner = await admin.patch(`/users/${server.owner.id}`, { role: ROLE.MEMBER });
  assert.equal(demoteOwner.body.msg, 'Must be an organization owner');
  const onlyOwner = await server.owner.patch(`/users/${server.owner.id}`, { role: ROLE.ADMINISTRATOR });
  assert.equal(onlyOwner.status, 400);
  assert.equal(onlyOwner.body.msg, 'The owner permission cannot be removed from the only organization owner.');
  const guestUp = await server.owner.patch(`/users/${guest.id}`, { role: ROLE.ADMINISTRATOR });
  assert.equal(guestUp.status, 400);
  assert.equal(guestUp.body.code, 'BAD_REQUEST');
  assert.equal(guestUp.body.msg, 'Guests cannot be organization administrators');
  assert.equal((await guest.get('/users/me')).body.role, ROLE.GUEST);

  assert.equal((await admin.patch(`/users/${target.id}`, { role: ROLE.MODERATOR })).status, 200);
  assert.equal((await target.get('/users/me')).body.role, ROLE.MODERATOR);
  assert.equal((await server.owner.patch(`/users/${target.id}`, { role: ROLE.OWNER })).status, 200);
  // With two owners, one may step down.
  assert.equal((await target.patch(`/users/${target.id}`, { role: ROLE.MEMBER })).status, 200);
  assert.equal((await target.get('/users/me')).body.is_owner, false);
});

test('system groups follow roles', async () => {
  const user = await server.createUser();
  const groups = await systemGroupIds(server.svc.db, 1);
  const inGroups = async () => userGroupIds(server.svc.db, user.id);
  let mine = await inGroups();
  for (const g of ['role:internet', 'role:everyone', 'role:members', 'role:fullmembers'] as const) assert.ok(mine.has(groups[g]), g);
  for (const g of ['role:moderators', 'role:administrators', 'role:owners', 'role:nobody'] as const) assert.ok(!mine.has(groups[g]), g);
  await server.owner.patch(`/users/${user.id}`, { role: ROLE.ADMINISTRATOR });
  mine = await inGroups();
  assert.ok(mine.has(groups['role:administrators']) && mine.has(groups['role:moderators']) && !mine.has(groups['role:owners']));
  await server.owner.patch(`/users/${user.id}`, { role: ROLE.GUEST });
  mine = await inGroups();
  assert.ok(mine.has(groups['role:everyone']) && !mine.has(groups['role:members']));
  await server.owner.delete(`/users/${user.id}`);
  assert.equal((await inGroups()).size, 0, 'deactivated users belong to no group');
});

test('changing emails needs an owner with can_change_user_emails', async () => {
  const target = await server.createUser({ email: 'old@example.com' });
  assert.equal((await admin.patch(`/users/${target.id}`, { new_email: 'new1@example.com' })).body.msg, 'User not authorized to change user emails');
  assert.equal((await server.owner.patch(`/users/${target.id}`, { new_email: 'not valid' })).body.msg, 'Invalid new email address.');
  assert.equal(
    (await server.owner.patch(`/users/${target.id}`, { new_email: 'member@example.com' })).body.msg,
    'New email value error: Email is already in use.',
  );
  assert.equal((await server.owner.patch(`/users/${target.id}`, { new_email: 'renamed@example.com' })).status, 200);
  const after = (await admin.get(`/users/${target.id}`)).body.user;
  assert.equal(after.delivery_email, 'renamed@example.com');
  assert.equal(after.email, 'renamed@example.com');
});

test('a failed request changes nothing', async () => {
  const target = await server.createUser({ fullName: 'Sta Ble' });
  // The name change is valid, the email change is not: neither happens.
  const res = await server.owner.patch(`/users/${target.id}`, { full_name: 'Changed Name', new_email: 'broken' });
  assert.equal(res.status, 400);
  assert.equal((await admin.get(`/users/${target.id}`)).body.user.full_name, 'Sta Ble');
});

test('deactivation and reactivation', async () => {
  const target = await server.createUser();
  assert.deepEqual((await member.delete(`/users/${target.id}`)).body, { result: 'error', msg: 'Insufficient permission', code: 'BAD_REQUEST' });
  // Not even oneself: leaving is DELETE /users/me.
  assert.deepEqual((await member.delete(`/users/${member.id}`)).body, { result: 'error', msg: 'Insufficient permission', code: 'BAD_REQUEST' });
  assert.equal((await admin.delete(`/users/${server.owner.id}`)).body.msg, 'Must be an organization owner');
  assert.equal((await server.owner.delete(`/users/${server.owner.id}`)).body.msg, 'Cannot deactivate the only organization owner');
  assert.equal((await admin.delete(`/users/${target.id}`)).status, 200);
  assert.equal((await admin.get(`/users/${target.id}`)).body.user.is_active, false);
  assert.equal((await admin.delete(`/users/${target.id}`)).body.msg, 'User is deactivated');

  assert.deepEqual((await member.post(`/users/${target.id}/reactivate`)).body, {
    result: 'error',
    msg: 'Must be an organization administrator',
    code: 'UNAUTHORIZED_PRINCIPAL',
  });
  assert.equal((await admin.post(`/users/${target.id}/reactivate`)).status, 200);
  assert.equal((await target.get('/users/me')).status, 200);
  assert.equal((await admin.post(`/users/${target.id}/reactivate`)).body.msg, 'User is already active.');
});

test('DELETE /users/me: anyone but the last owner or the last user', async () => {
  const last = await server.owner.delete('/users/me');
  assert.equal(last.status, 400);
  assert.deepEqual(last.body, {
    result: 'error',
    msg: 'Cannot deactivate the only organization owner.',
    code: 'CANNOT_DEACTIVATE_LAST_USER',
    is_last_owner: true,
    entity: 'user',
  });
  const leaver = await server.createUser();
  assert.equal((await leaver.delete('/users/me')).status, 200);
  assert.equal((await leaver.get('/users/me')).status, 401);
});

test('GET /avatar redirects to the avatar', async () => {
  const res = await member.get(`/avatar/${admin.id}`);
  assert.equal(res.status, 302);
  assert.match(String(res.headers.location), /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/);
  const medium = await member.get(`/avatar/${admin.id}/medium`, { foo: 'bar' });
  assert.match(String(medium.headers.location), /&s=500&foo=bar$/);
  const byEmail = await member.get('/avatar/admin@example.com');
  assert.equal(byEmail.headers.location, res.headers.location);
  const unknown = await member.get('/avatar/999999');
  assert.equal(unknown.headers.location, '/static/images/unknown-user-avatar.png');
  const viaKey = await server.anonymous.get(`/avatar/${admin.id}`, { api_key: member.apiKey });
  assert.equal(viaKey.status, 302);
  assert.equal(viaKey.headers.location, res.headers.location);
  const anonymous = await server.anonymous.get(`/avatar/${admin.id}`);
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.body.code, 'UNAUTHORIZED');
  // HEAD is answered wherever GET is.
  const head = await member.request('HEAD', `/avatar/${admin.id}`);
  assert.equal(head.status, 302);
  assert.equal(head.headers.location, res.headers.location);
  assert.equal((await member.request('HEAD', `/avatar/${admin.id}/medium`)).status, 302);
});

test('the owner account from bootstrap can create users and change emails', async () => {
  const me = await server.svc.db.selectFrom('users').selectAll().where('delivery_email', '=', OWNER_EMAIL).executeTakeFirstOrThrow();
  assert.equal(me.can_create_users, true);
  assert.equal(me.can_change_user_emails, true);
  assert.equal(me.role, ROLE.OWNER);
});

test('new users get a fake API email when the organization hides addresses by default', async () => {
  await server.svc.db
    .updateTable('realms')
    .set({ settings: JSON.stringify({ default_email_address_visibility: 3 }) })
    .where('id', '=', 1)
    .execute();
  server.svc.credentials.clear();
  try {
    const created = await server.owner.post('/users', { email: 'private@example.com', password: 'secret123', full_name: 'Pri Vate' });
    const seen = (await member.get(`/users/${created.body.user_id}`)).body.user;
    assert.equal(seen.email, `user${created.body.user_id}@confab.test`);
    assert.equal(seen.delivery_email, null);
    assert.equal((await admin.get(`/users/${created.body.user_id}`)).body.user.delivery_email, 'private@example.com');
    const login = await server.anonymous.post('/fetch_api_key', { username: 'private@example.com', password: 'secret123' });
    assert.equal(login.body.email, 'private@example.com');
  } finally {
    await server.svc.db.updateTable('realms').set({ settings: '{}' }).where('id', '=', 1).execute();
    server.svc.credentials.clear();
  }
});
