// Custom profile field values (spec endpoints 13 and 22, "User" profile_data;
// digest 1.13, 1.22, section 2, 3.3): the own-profile endpoints, PATCH
// /users/{id} profile_data, validation per type, Markdown rendering, who may
// change what, the realm_user events and register's realm_users.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE, type Role } from '../../src/users/roles.ts';
import { createUserAsOperator } from '../../src/users/actions.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';

let server: TestServer;
let admin: Client;
let moderator: Client;
let member: Client;
let guest: Client;
let bot: Client;
let gone: Client;
const F = { short: 0, long: 0, select: 0, date: 0, url: 0, user: 0, github: 0, pronouns: 0, locked: 0 };

async function create(params: Record<string, unknown>): Promise<number> {
  const res = await server.owner.post('/realm/profile_fields', params);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, fullName: 'Ad Min' });
  moderator = await server.createUser({ role: ROLE.MODERATOR, fullName: 'Mod Erator' });
  member = await server.createUser({ role: ROLE.MEMBER, fullName: 'Mem Ber' });
  guest = await server.createUser({ role: ROLE.GUEST, fullName: 'Gue St' });
  gone = await server.createUser({ role: ROLE.MEMBER, fullName: 'Gone Away' });
  await server.owner.delete(`/users/${gone.id}`);
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('string_id', '=', '').executeTakeFirstOrThrow();
  const b = await createUserAsOperator(server.svc, realm, {
    email: 'helper-bot@example.com',
    fullName: 'Helper Bot',
    password: null,
    role: ROLE.MEMBER,
    isBot: true,
    botType: 1,
    botOwnerId: server.owner.id,
  });
  bot = await server.clientFor(b.id);
  F.short = await create({ name: 'Status', field_type: 1 });
  F.long = await create({ name: 'Biography', field_type: 2, required: true });
  F.select = await create({ name: 'Editor', field_type: 3, field_data: { vim: { text: 'Vim', order: '1' }, emacs: { text: 'Emacs', order: '2' } } });
  F.date = await create({ name: 'Birthday', field_type: 4 });
  F.url = await create({ name: 'Website', field_type: 5 });
  F.user = await create({ name: 'Mentor', field_type: 6 });
  F.github = await create({ field_type: 7, field_data: { subtype: 'github' } });
  F.pronouns = await create({ name: 'Pronouns', field_type: 8 });
  F.locked = await create({ name: 'Employee ID', field_type: 1, editable_by_user: false });
});
after(() => server.close());

async function profile(c: Client): Promise<Record<string, any>> {
  const res = await server.owner.get(`/users/${c.id}`, { include_custom_profile_fields: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.user.profile_data;
}

function expectError(res: { status: number; body: any }, msg: string, code = 'BAD_REQUEST'): void {
  assert.equal(res.status, 400, `${msg}: ${JSON.stringify(res.body)}`);
  assert.deepEqual(res.body, { result: 'error', msg, code });
}

const setOwn = (c: Client, data: unknown) => c.patch('/users/me/profile_data', { data });

test('a user sets a value of every type; the user endpoints show them, Markdown types rendered', async () => {
  const res = await setOwn(member, [
    { id: F.short, value: 'Out **today**' },
    { id: F.long, value: 'Works with @**Ad Min** on *everything*' },
    { id: F.select, value: 'vim' },
    { id: F.date, value: '2000-02-29' },
    { id: F.url, value: 'https://example.com/~mem?x=1' },
    { id: F.user, value: [admin.id, server.owner.id] },
    { id: F.github, value: 'octocat' },
    { id: F.pronouns, value: 'they/them' },
  ]);
  assert.deepEqual(res.body, { result: 'success', msg: '' });
  const data = await profile(member);
  assert.deepEqual(Object.keys(data), [F.short, F.long, F.select, F.date, F.url, F.user, F.github, F.pronouns].map(String));
  assert.deepEqual(data[F.short], { value: 'Out **today**', rendered_value: '<p>Out <strong>today</strong></p>' });
  assert.equal(data[F.long].value, 'Works with @**Ad Min** on *everything*');
  assert.match(data[F.long].rendered_value, new RegExp(`<span class="user-mention" data-user-id="${admin.id}">@Ad Min</span>`));
  assert.match(data[F.long].rendered_value, /<em>everything<\/em>/);
  assert.deepEqual(data[F.select], { value: 'vim' });
  assert.deepEqual(data[F.date], { value: '2000-02-29' });
  assert.deepEqual(data[F.url], { value: 'https://example.com/~mem?x=1' });
  assert.deepEqual(data[F.user], { value: `[${admin.id},${server.owner.id}]` });
  assert.deepEqual(data[F.github], { value: 'octocat' });
  assert.deepEqual(data[F.pronouns], { value: 'they/them' });

  assert.deepEqual((await member.get('/users/me')).body.profile_data, data);
  const plain = await guest.get(`/users/${member.id}`);
  assert.equal('profile_data' in plain.body.user, false, 'only with include_custom_profile_fields');
  assert.deepEqual((await guest.get(`/users/${member.id}`, { include_custom_profile_fields: true })).body.user.profile_data, data);
  const all = await guest.get('/users', { include_custom_profile_fields: true });
  assert.deepEqual(all.body.members.find((u: any) => u.user_id === member.id).profile_data, data);
  assert.deepEqual(all.body.members.find((u: any) => u.user_id === guest.id).profile_data, {});
  assert.equal('profile_data' in all.body.members.find((u: any) => u.user_id === bot.id), false, 'bots have no profile');
  const registered = await guest.post('/register', { fetch_event_types: ['realm_user'] });
  assert.deepEqual(registered.body.realm_users.find((u: any) => u.user_id === member.id).profile_data, data);
});

test('values are checked by type, with the field label in the message; a failed request stores nothing', async () => {
  const before = await profile(guest);
  const cases: [unknown, string][] = [
    [[{ id: F.short, value: 'x'.repeat(51) }], 'Status is too long (limit: 50 characters)'],
    [[{ id: F.pronouns, value: 'x'.repeat(51) }], 'Pronouns is too long (limit: 50 characters)'],
    [[{ id: F.github, value: 'x'.repeat(51) }], 'GitHub username is too long (limit: 50 characters)'],
    [[{ id: F.long, value: 'x'.repeat(501) }], 'Biography is too long (limit: 500 characters)'],
    [[{ id: F.short, value: [1] }], 'Status is not a string'],
    [[{ id: F.date, value: '2001-02-29' }], 'Birthday is not a date'],
    [[{ id: F.date, value: '29/02/2000' }], 'Birthday is not a date'],
    [[{ id: F.url, value: 'example.com' }], 'Website is not a URL'],
    [[{ id: F.url, value: 'javascript:alert(1)' }], 'Website is not a URL'],
    [[{ id: F.url, value: 'https://exa mple.com' }], 'Website is not a URL'],
    [[{ id: F.select, value: 'notepad' }], "'notepad' is not a valid choice for 'Editor'."],
    [[{ id: F.select, value: 'Vim' }], "'Vim' is not a valid choice for 'Editor'."],
    [[{ id: F.user, value: String(admin.id) }], 'User IDs is not a list'],
    [[{ id: F.user, value: [999999] }], 'Invalid user ID: 999999'],
    [[{ id: F.user, value: [gone.id] }], `User with ID ${gone.id} is deactivated`],
    [[{ id: F.user, value: [admin.id, bot.id] }], `User with ID ${bot.id} is a bot`],
    [[{ id: 999999, value: 'x' }], 'Field id 999999 not found.'],
    // The first entry is valid: the request as a whole fails and stores nothing.
    [
      [
        { id: F.short, value: 'fine' },
        { id: F.date, value: 'soon' },
      ],
      'Birthday is not a date',
    ],
    [{ id: F.short, value: 'x' }, 'data is not a list'],
    [[{ value: 'x' }], 'data[0]["id"] field is missing'],
    [[{ id: F.short, value: 5 }], 'data[0]["value"] is not valid'],
  ];
  for (const [data, msg] of cases) expectError(await setOwn(guest, data), msg);
  expectError(await guest.patch('/users/me/profile_data', { data: 'nope' }), 'data is not valid JSON');
  const missing = await guest.patch('/users/me/profile_data');
  assert.equal(missing.body.code, 'REQUEST_VARIABLE_MISSING');
  assert.deepEqual(await profile(guest), before);
  // The limits themselves are fine.
  assert.equal(
    (
      await setOwn(guest, [
        { id: F.short, value: 's'.repeat(50) },
        { id: F.long, value: 'l'.repeat(500) },
        { id: F.url, value: 'http://localhost:8080/x' },
      ])
    ).status,
    200,
  );
  assert.equal((await profile(guest))[F.short].value, 's'.repeat(50));
});

test('empty and null values remove; DELETE /users/me/profile_data removes; required fields may be emptied', async () => {
  const c = await server.createUser({ fullName: 'Rem Over' });
  await setOwn(c, [
    { id: F.short, value: 'a' },
    { id: F.long, value: 'b' },
    { id: F.user, value: [admin.id] },
    { id: F.date, value: '1999-12-31' },
    { id: F.pronouns, value: 'she/her' },
  ]);
  assert.equal(
    (
      await setOwn(c, [
        { id: F.short, value: '' },
        { id: F.long, value: null },
        { id: F.user, value: [] },
        { id: F.date, value: '   ' },
      ])
    ).status,
    200,
  );
  assert.deepEqual(Object.keys(await profile(c)), [String(F.pronouns)]);
  const removed = await c.delete('/users/me/profile_data', { data: [F.pronouns, F.select] });
  assert.deepEqual(removed.body, { result: 'success', msg: '' });
  assert.deepEqual(await profile(c), {});
  expectError(await c.delete('/users/me/profile_data', { data: [999999] }), 'Field id 999999 not found.');
  expectError(await c.delete('/users/me/profile_data', { data: ['x'] }), 'data[0] is not an integer');
});

test('editable_by_user: users change only editable fields of their own; administrators change any', async () => {
  const msg = 'You are not allowed to change this field. Contact an administrator to update it.';
  for (const c of [guest, member, moderator]) {
    expectError(await setOwn(c, [{ id: F.locked, value: 'E-1' }]), msg);
    expectError(await c.delete('/users/me/profile_data', { data: [F.locked] }), msg);
    expectError(
      await setOwn(c, [
        { id: F.pronouns, value: 'any' },
        { id: F.locked, value: 'E-1' },
      ]),
      msg,
    );
    assert.equal((await profile(c))[F.locked], undefined);
  }
  // Every role may change its own editable fields.
  for (const c of [guest, member, moderator, admin, server.owner]) {
    assert.equal((await setOwn(c, [{ id: F.pronouns, value: `role ${c.id}` }])).status, 200);
    assert.equal((await profile(c))[F.pronouns].value, `role ${c.id}`);
  }
  for (const c of [admin, server.owner]) {
    assert.equal((await setOwn(c, [{ id: F.locked, value: `E-${c.id}` }])).status, 200);
    assert.deepEqual((await profile(c))[F.locked], { value: `E-${c.id}`, rendered_value: `<p>E-${c.id}</p>` });
    assert.equal((await c.delete('/users/me/profile_data', { data: [F.locked] })).status, 200);
  }
  assert.equal((await server.owner.patch(`/users/${member.id}`, { profile_data: [{ id: F.locked, value: 'E-42' }] })).status, 200);
  assert.equal((await profile(member))[F.locked].value, 'E-42');
  expectError(await member.delete('/users/me/profile_data', { data: [F.locked] }), msg);
  assert.equal((await profile(member))[F.locked].value, 'E-42');
});

test('PATCH /users/{id} profile_data: administrators and owners only, any field, empty removes', async () => {
  const target = await server.createUser({ fullName: 'Tar Get' });
  for (const c of [guest, member, moderator, target]) {
    expectError(
      await c.patch(`/users/${target.id}`, { profile_data: [{ id: F.short, value: 'by a non-admin' }] }),
      'Must be an organization administrator',
      'UNAUTHORIZED_PRINCIPAL',
    );
  }
  assert.deepEqual(await profile(target), {});
  for (const [c, role] of [
    [admin, ROLE.ADMINISTRATOR],
    [server.owner, ROLE.OWNER],
  ] as [Client, Role][]) {
    const res = await c.patch(`/users/${target.id}`, {
      profile_data: [
        { id: F.short, value: `set by ${role}` },
        { id: F.locked, value: `L${role}` },
      ],
    });
    assert.deepEqual(res.body, { result: 'success', msg: '' });
    const data = await profile(target);
    assert.deepEqual([data[F.short].value, data[F.locked].value], [`set by ${role}`, `L${role}`]);
  }
  expectError(
    await admin.patch(`/users/${target.id}`, {
      profile_data: [
        { id: F.short, value: 'ok' },
        { id: F.select, value: 'nano' },
      ],
    }),
    "'nano' is not a valid choice for 'Editor'.",
  );
  expectError(await admin.patch(`/users/${target.id}`, { full_name: 'Renamed Too', profile_data: [{ id: 999999, value: 'x' }] }), 'Field id 999999 not found.');
  const unchanged = (await admin.get(`/users/${target.id}`)).body.user;
  assert.equal(unchanged.full_name, 'Tar Get', 'the failed request changed nothing');
  assert.equal((await profile(target))[F.short].value, `set by ${ROLE.OWNER}`);
  assert.equal(
    (
      await admin.patch(`/users/${target.id}`, {
        profile_data: [
          { id: F.short, value: null },
          { id: F.locked, value: '' },
        ],
      })
    ).status,
    200,
  );
  assert.deepEqual(await profile(target), {});
  expectError(await admin.patch(`/users/${target.id}`, { profile_data: '[' }), 'profile_data is not valid JSON');
});

test('bots have no profile', async () => {
  expectError(await setOwn(bot, [{ id: F.short, value: 'beep' }]), 'This endpoint does not accept bot requests.');
  expectError(await bot.delete('/users/me/profile_data', { data: [F.short] }), 'This endpoint does not accept bot requests.');
  expectError(await server.owner.patch(`/users/${bot.id}`, { profile_data: [{ id: F.short, value: 'beep' }] }), 'Bots cannot have custom profile field values');
  const res = await server.owner.get(`/users/${bot.id}`, { include_custom_profile_fields: true });
  assert.equal('profile_data' in res.body.user, false);
});

async function queueOf(c: Client): Promise<string> {
  const res = await c.post('/register', { event_types: ['realm_user', 'custom_profile_fields'] });
  assert.equal(res.status, 200);
  return res.body.queue_id;
}

async function eventsOf(c: Client, queueId: string): Promise<any[]> {
  const res = await c.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200);
  return res.body.events.map(({ id: _id, ...e }: any) => e);
}

const valueEvent = (userId: number, facet: Record<string, unknown>) => ({
  type: 'realm_user',
  op: 'update',
  person: { user_id: userId, custom_profile_field: facet },
});

test('value changes send realm_user updates to everyone; unchanged values and refusals send nothing', async () => {
  const c = await server.createUser({ fullName: 'Ev Ents' });
  const queues = [
    [guest, await queueOf(guest)],
    [admin, await queueOf(admin)],
    [c, await queueOf(c)],
  ] as [Client, string][];
  await setOwn(c, [
    { id: F.short, value: '*hi*' },
    { id: F.select, value: 'emacs' },
  ]);
  await setOwn(c, [{ id: F.short, value: '*hi*' }]);
  await setOwn(c, [{ id: F.locked, value: 'refused' }]);
  await c.delete('/users/me/profile_data', { data: [F.short, F.date] });
  await admin.patch(`/users/${c.id}`, {
    profile_data: [
      { id: F.user, value: [member.id] },
      { id: F.select, value: '' },
    ],
  });
  const expected = [
    valueEvent(c.id, { id: F.short, value: '*hi*', rendered_value: '<p><em>hi</em></p>' }),
    valueEvent(c.id, { id: F.select, value: 'emacs' }),
    valueEvent(c.id, { id: F.short, value: null }),
    valueEvent(c.id, { id: F.user, value: `[${member.id}]` }),
    valueEvent(c.id, { id: F.select, value: null }),
  ];
  for (const [viewer, queueId] of queues) assert.deepEqual(await eventsOf(viewer, queueId), expected, `events of ${viewer.id}`);
});

test('deleting a field or one of its choices removes those values, and clients hear of it', async () => {
  const a = await server.createUser({ fullName: 'Cho Oser' });
  const b = await server.createUser({ fullName: 'Oth Er' });
  const field = await create({ name: 'Team', field_type: 3, field_data: { red: { text: 'Red', order: '1' }, blue: { text: 'Blue', order: '2' } } });
  const notes = await create({ name: 'Notes', field_type: 1 });
  await setOwn(a, [
    { id: field, value: 'red' },
    { id: notes, value: 'n1' },
  ]);
  await setOwn(b, [{ id: field, value: 'blue' }]);
  const queueId = await queueOf(guest);
  const fieldIds = async () => (await server.owner.get('/realm/profile_fields')).body.custom_fields.map((f: any) => f.id);
  assert.equal(
    (await server.owner.patch(`/realm/profile_fields/${field}`, { field_data: { blue: { text: 'Blue', order: '1' }, green: { text: 'Green', order: '2' } } }))
      .status,
    200,
  );
  assert.equal((await profile(a))[field], undefined);
  assert.deepEqual((await profile(b))[field], { value: 'blue' });
  const withNotes = await fieldIds();
  assert.equal((await server.owner.delete(`/realm/profile_fields/${notes}`)).status, 200);
  assert.equal((await profile(a))[notes], undefined);
  const withoutNotes = await fieldIds();
  assert.ok(withNotes.includes(notes) && !withoutNotes.includes(notes));
  const events = await eventsOf(guest, queueId);
  assert.deepEqual(
    events.map((e) => (e.type === 'realm_user' ? e : { type: e.type, ids: e.fields.map((f: any) => f.id) })),
    [
      valueEvent(a.id, { id: field, value: null }),
      { type: 'custom_profile_fields', ids: withNotes },
      valueEvent(a.id, { id: notes, value: null }),
      { type: 'custom_profile_fields', ids: withoutNotes },
    ],
  );
  await server.owner.delete(`/realm/profile_fields/${field}`);
});

test('register stays in sync with the value and field events (owner and member viewers)', async () => {
  const subject = await server.createUser({ fullName: 'Sub Ject' });
  const viewers = [await registerViewer(server, server.owner), await registerViewer(server, member)];
  const sync = async (label: string) => {
    for (const v of viewers) await expectStateInSync(server, v, label);
  };
  await setOwn(subject, [
    { id: F.short, value: '**bold**' },
    { id: F.user, value: [member.id] },
  ]);
  await sync('after setting values');
  await server.owner.patch(`/users/${subject.id}`, {
    profile_data: [
      { id: F.short, value: 'changed' },
      { id: F.locked, value: 'E-7' },
    ],
  });
  await sync('after an administrator changed values');
  await subject.delete('/users/me/profile_data', { data: [F.user] });
  await setOwn(subject, [{ id: F.short, value: '' }]);
  await sync('after removing values');
  const team = await create({ name: 'Squad', field_type: 3, field_data: { a: { text: 'A', order: '1' }, b: { text: 'B', order: '2' } } });
  await setOwn(subject, [{ id: team, value: 'a' }]);
  await setOwn(member, [{ id: team, value: 'b' }]);
  await sync('after a new field and its values');
  await server.owner.patch(`/realm/profile_fields/${team}`, { field_data: { b: { text: 'B', order: '1' } } });
  await sync('after removing a choice');
  await server.owner.delete(`/realm/profile_fields/${team}`);
  await sync('after deleting a field');
});

test('values of a user are announced only to those who may see the user (can_access_all_users_group)', async () => {
  const groups = (await server.owner.get('/user_groups')).body.user_groups;
  const sys = (name: string) => groups.find((g: any) => g.name === name).id;
  assert.equal((await server.owner.patch('/realm', { can_access_all_users_group: { new: sys('role:members') } })).status, 200);
  try {
    const limited = await server.createUser({ role: ROLE.GUEST, fullName: 'Lim Ited' });
    const subject = await server.createUser({ fullName: 'Un Seen' });
    const field = await create({ name: 'Secret', field_type: 3, field_data: { a: { text: 'A', order: '1' }, b: { text: 'B', order: '2' } } });
    const queues = [
      [limited, await queueOf(limited)],
      [member, await queueOf(member)],
    ] as [Client, string][];
    const viewers = [await registerViewer(server, limited), await registerViewer(server, member)];
    assert.equal(
      (
        await setOwn(subject, [
          { id: F.short, value: 'hidden' },
          { id: field, value: 'a' },
        ])
      ).status,
      200,
    );
    assert.equal((await server.owner.patch(`/realm/profile_fields/${field}`, { field_data: { b: { text: 'B', order: '1' } } })).status, 200);
    assert.equal((await server.owner.delete(`/realm/profile_fields/${field}`)).status, 200);
    const valueEvents = async (c: Client, queueId: string) => (await eventsOf(c, queueId)).filter((e) => e.type === 'realm_user');
    assert.deepEqual(await valueEvents(limited, queues[0]![1]), [], 'a guest who may not see the user hears nothing of their values');
    assert.deepEqual(await valueEvents(member, queues[1]![1]), [
      valueEvent(subject.id, { id: F.short, value: 'hidden', rendered_value: '<p>hidden</p>' }),
      valueEvent(subject.id, { id: field, value: 'a' }),
      valueEvent(subject.id, { id: field, value: null }),
    ]);
    expectError(await limited.get(`/users/${subject.id}`, { include_custom_profile_fields: true }), 'No such user');
    for (const v of viewers) await expectStateInSync(server, v, `restricted access (viewer ${v.client.id})`);
  } finally {
    assert.equal(
      (
        await server.owner.patch('/realm', {
          can_access_all_users_group: { new: (await server.owner.get('/user_groups')).body.user_groups.find((g: any) => g.name === 'role:everyone').id },
        })
      ).status,
      200,
    );
  }
});
