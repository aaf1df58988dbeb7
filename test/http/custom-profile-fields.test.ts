// Custom profile field definitions (spec "Custom profile field", endpoint 11;
// digest 1.11, section 2, 3.3, 4): create, list, update, delete, reorder,
// who may do each, the events and register's section.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';

let server: TestServer;
let admin: Client;
let moderator: Client;
let member: Client;
let guest: Client;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, fullName: 'Ad Min' });
  moderator = await server.createUser({ role: ROLE.MODERATOR, fullName: 'Mod Erator' });
  member = await server.createUser({ role: ROLE.MEMBER, fullName: 'Mem Ber' });
  guest = await server.createUser({ role: ROLE.GUEST, fullName: 'Gue St' });
});
after(() => server.close());

async function fields(c: Client = member): Promise<any[]> {
  const res = await c.get('/realm/profile_fields');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.custom_fields;
}

beforeEach(async () => {
  for (const f of await fields(server.owner)) assert.equal((await server.owner.delete(`/realm/profile_fields/${f.id}`)).status, 200);
});

async function create(params: Record<string, unknown>, c: Client = server.owner): Promise<number> {
  const res = await c.post('/realm/profile_fields', params);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body).sort(), ['id', 'msg', 'result']);
  return res.body.id;
}

function expectError(res: { status: number; body: any }, msg: string, code = 'BAD_REQUEST', data: Record<string, unknown> = {}): void {
  assert.equal(res.status, 400, `${msg}: ${JSON.stringify(res.body)}`);
  assert.deepEqual(res.body, { result: 'error', msg, code, ...data });
}

const CHOICES = { vim: { text: 'Vim', order: '1' }, emacs: { text: 'Emacs', order: '2' } };

test('each of the 8 types is created and listed in the Zulip shape', async () => {
  const phone = await create({ name: '  Phone  ', hint: 'Work number', field_type: 1 });
  const bio = await create({ name: 'Biography', field_type: 2, required: true });
  const editor = await create({ name: 'Editor', field_type: 3, field_data: CHOICES, display_in_profile_summary: true });
  const birthday = await create({ name: 'Birthday', field_type: 4, editable_by_user: false });
  const site = await create({ name: 'Website', field_type: 5, field_data: { ignored: 'for links' } });
  const mentor = await create({ name: 'Mentor', field_type: 6 });
  const gitlab = await create({ name: 'GitLab', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://gitlab.com/%(username)s' } });
  const pronouns = await create({ name: 'Pronouns', field_type: 8 });
  const list = await fields(guest);
  const base = { hint: '', field_data: '', required: false, editable_by_user: true };
  assert.deepEqual(list, [
    { ...base, id: phone, name: 'Phone', type: 1, hint: 'Work number', order: list[0].order },
    { ...base, id: bio, name: 'Biography', type: 2, required: true, order: list[1].order },
    { ...base, id: editor, name: 'Editor', type: 3, field_data: JSON.stringify(CHOICES), order: list[2].order, display_in_profile_summary: true },
    { ...base, id: birthday, name: 'Birthday', type: 4, editable_by_user: false, order: list[3].order },
    { ...base, id: site, name: 'Website', type: 5, order: list[4].order },
    { ...base, id: mentor, name: 'Mentor', type: 6, order: list[5].order },
    { ...base, id: gitlab, name: 'GitLab', type: 7, field_data: '{"subtype":"custom","url_pattern":"https://gitlab.com/%(username)s"}', order: list[6].order },
    { ...base, id: pronouns, name: 'Pronouns', type: 8, order: list[7].order },
  ]);
  // New fields go last.
  const orders = list.map((f) => f.order);
  assert.deepEqual(
    orders,
    [...orders].sort((a, b) => a - b),
  );
  assert.equal(new Set(orders).size, 8);
  assert.equal(typeof list[2].field_data, 'string', 'field_data is JSON text');
});

test('who may create, update, delete and reorder: administrators and owners only', async () => {
  const id = await create({ name: 'Team', field_type: 1 });
  const snapshot = await fields();
  for (const c of [guest, member, moderator]) {
    expectError(await c.post('/realm/profile_fields', { name: 'Nope', field_type: 1 }), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
    expectError(await c.patch(`/realm/profile_fields/${id}`, { name: 'Nope' }), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
    expectError(await c.delete(`/realm/profile_fields/${id}`), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
    expectError(await c.patch('/realm/profile_fields', { order: [id] }), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
  }
  assert.deepEqual(await fields(), snapshot, 'refused requests changed nothing');
  for (const c of [admin, server.owner]) {
    const other = await create({ name: `By ${c.id}`, field_type: 1 }, c);
    assert.equal((await c.patch(`/realm/profile_fields/${other}`, { hint: 'edited' })).status, 200);
    assert.equal((await c.patch('/realm/profile_fields', { order: [other, id] })).status, 200);
    assert.deepEqual(
      (await fields()).map((f) => f.id),
      [other, id],
    );
    assert.equal((await c.delete(`/realm/profile_fields/${other}`)).status, 200);
  }
  // Everyone may read the definitions.
  for (const c of [guest, member, moderator, admin])
    assert.deepEqual(
      (await fields(c)).map((f) => f.id),
      [id],
    );
  assert.equal((await server.anonymous.get('/realm/profile_fields')).status, 401);
});

test("creation errors, with Zulip's messages, change nothing", async () => {
  await create({ name: 'Taken', field_type: 1 });
  const cases: [Record<string, unknown>, string][] = [
    [{ name: '   ', field_type: 1 }, 'Label cannot be blank.'],
    [{ field_type: 1 }, 'Label cannot be blank.'],
    [{ name: 'n'.repeat(41), field_type: 1 }, 'name is too long (limit: 40 characters)'],
    [{ name: 'Hinted', hint: 'h'.repeat(81), field_type: 1 }, 'hint is too long (limit: 80 characters)'],
    [{ name: 'Odd', field_type: 9 }, 'Invalid field type.'],
    [{ name: 'Zero', field_type: 0 }, 'Invalid field type.'],
    [{ name: 'Taken', field_type: 2 }, 'A field with that label already exists.'],
    [{ name: 'Choice', field_type: 3 }, 'Field must have at least one choice.'],
    [{ name: 'Choice', field_type: 3, field_data: {} }, 'Field must have at least one choice.'],
    [{ name: 'Choice', field_type: 3, field_data: { a: { text: 'A', order: '1' }, b: { text: 'A', order: '2' } } }, 'Field must not have duplicate choices.'],
    [{ name: 'Choice', field_type: 3, field_data: { ' ': { text: 'A', order: '1' } } }, "'value' cannot be blank."],
    [{ name: 'Choice', field_type: 3, field_data: { a: { order: '1' } } }, 'text key is missing from field_data'],
    [{ name: 'Choice', field_type: 3, field_data: { a: { text: ' ', order: '1' } } }, 'field_data["text"] cannot be blank.'],
    [{ name: 'Choice', field_type: 3, field_data: { a: { text: 'A', order: '1', color: 'red' } } }, 'Unexpected arguments: color'],
    [{ name: 'Choice', field_type: 3, field_data: { a: 'A' } }, 'field_data is not a dict'],
    [{ name: 'Choice', field_type: 3, field_data: [1] }, 'field_data is not a dict'],
    [{ name: 'Account', field_type: 7 }, 'subtype key is missing from field_data'],
    [{ name: 'Account', field_type: 7, field_data: { subtype: 'myspace' } }, 'Invalid external account type'],
    [{ name: 'Account', field_type: 7, field_data: { subtype: 'custom' } }, 'Custom external account must define URL pattern'],
    [{ name: 'Account', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://x.example/' } }, "URL pattern must contain '%(username)s'."],
    [{ name: 'Account', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'not a url/%(username)s' } }, 'field_data["url_pattern"] is not a URL'],
    [{ name: 'Account', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://x.example/', extra: 'x' } }, 'Unexpected arguments: extra'],
    [{ name: 'Summary', field_type: 2, display_in_profile_summary: true }, 'Field type not supported for display in profile summary.'],
    [{ name: 'Summary', field_type: 6, display_in_profile_summary: true }, 'Field type not supported for display in profile summary.'],
    [{ name: 'Typed', field_type: '"1"' }, 'field_type is not an integer'],
    [{ name: 'Typed', field_type: 1, required: 'yes' }, 'required is not valid JSON'],
  ];
  for (const [params, msg] of cases) expectError(await server.owner.post('/realm/profile_fields', params), msg);
  expectError(await server.owner.post('/realm/profile_fields', { name: 'x' }), "Missing 'field_type' argument", 'REQUEST_VARIABLE_MISSING', {
    var_name: 'field_type',
  });
  assert.deepEqual(
    (await fields()).map((f) => f.name),
    ['Taken'],
  );
});

test('at most 2 fields in the profile summary', async () => {
  const a = await create({ name: 'A', field_type: 1, display_in_profile_summary: true });
  await create({ name: 'B', field_type: 3, field_data: CHOICES, display_in_profile_summary: true });
  const msg = 'Only 2 custom profile fields can be displayed in the profile summary.';
  expectError(await server.owner.post('/realm/profile_fields', { name: 'C', field_type: 4, display_in_profile_summary: true }), msg);
  const c = await create({ name: 'C', field_type: 4 });
  expectError(await server.owner.patch(`/realm/profile_fields/${c}`, { display_in_profile_summary: true }), msg);
  // A field already in the summary does not count against itself.
  assert.equal((await server.owner.patch(`/realm/profile_fields/${a}`, { display_in_profile_summary: true, hint: 'still' })).status, 200);
  assert.equal((await server.owner.patch(`/realm/profile_fields/${a}`, { display_in_profile_summary: false })).status, 200);
  assert.equal((await server.owner.patch(`/realm/profile_fields/${c}`, { display_in_profile_summary: true })).status, 200);
  const list = await fields();
  assert.deepEqual(
    list.map((f) => 'display_in_profile_summary' in f),
    [false, true, true],
  );
});

test('built-in external accounts bring their label; only their flags can change', async () => {
  const github = await create({ name: 'ignored', hint: 'ignored', field_type: 7, field_data: { subtype: 'github' }, display_in_profile_summary: true });
  const [field] = await fields();
  assert.deepEqual(field, {
    id: github,
    name: 'GitHub username',
    type: 7,
    hint: '',
    field_data: '{"subtype":"github"}',
    order: field.order,
    required: false,
    editable_by_user: true,
    display_in_profile_summary: true,
  });
  await create({ field_type: 7, field_data: { subtype: 'twitter' } });
  expectError(
    await server.owner.post('/realm/profile_fields', { field_type: 7, field_data: { subtype: 'github' } }),
    'A field with that label already exists.',
  );
  for (const change of [{ name: 'Git' }, { hint: 'Your handle' }, { field_data: { subtype: 'custom', url_pattern: 'https://x.example/%(username)s' } }]) {
    expectError(await server.owner.patch(`/realm/profile_fields/${github}`, change), 'Default custom field cannot be updated.');
  }
  // The same label, hint and data again are no change.
  const same = await server.owner.patch(`/realm/profile_fields/${github}`, {
    name: 'GitHub username',
    hint: '',
    field_data: { subtype: 'github' },
    required: true,
    editable_by_user: false,
    display_in_profile_summary: false,
  });
  assert.equal(same.status, 200, JSON.stringify(same.body));
  const [updated] = await fields();
  assert.deepEqual(
    [updated.name, updated.required, updated.editable_by_user, 'display_in_profile_summary' in updated],
    ['GitHub username', true, false, false],
  );
});

test('update: label, hint, data and flags; errors change nothing', async () => {
  const id = await create({ name: 'Office', hint: 'Where', field_type: 1 });
  const other = await create({ name: 'Floor', field_type: 3, field_data: CHOICES });
  const changed = await admin.patch(`/realm/profile_fields/${id}`, { name: ' Location ', hint: 'City', required: true, editable_by_user: false });
  assert.deepEqual(changed.body, { result: 'success', msg: '' });
  let [f] = await fields();
  assert.deepEqual([f.name, f.hint, f.required, f.editable_by_user, f.field_data], ['Location', 'City', true, false, '']);
  // field_data is kept only for the types that have it.
  assert.equal((await admin.patch(`/realm/profile_fields/${id}`, { field_data: { a: 'b' } })).status, 200);
  [f] = await fields();
  assert.equal(f.field_data, '');
  const before = await fields();
  expectError(await admin.patch(`/realm/profile_fields/${id}`, { name: 'Floor' }), 'A field with that label already exists.');
  expectError(await admin.patch(`/realm/profile_fields/${id}`, { name: '  ' }), 'Label cannot be blank.');
  expectError(await admin.patch(`/realm/profile_fields/${id}`, { hint: 'h'.repeat(81) }), 'hint is too long (limit: 80 characters)');
  expectError(await admin.patch(`/realm/profile_fields/${other}`, { field_data: {} }), 'Field must have at least one choice.');
  expectError(await admin.patch(`/realm/profile_fields/${other}`, { name: 'x', field_data: { a: { text: 'A' } } }), 'order key is missing from field_data');
  expectError(await admin.patch('/realm/profile_fields/999999', { name: 'x' }), 'Field id 999999 not found.');
  assert.deepEqual(await fields(), before);
  const choices = { ...CHOICES, nano: { text: 'Nano', order: '3' } };
  assert.equal((await admin.patch(`/realm/profile_fields/${other}`, { field_data: choices })).status, 200);
  assert.equal((await fields())[1].field_data, JSON.stringify(choices));
});

test('delete: unknown ids are refused; the field goes', async () => {
  const id = await create({ name: 'Temporary', field_type: 1 });
  expectError(await server.owner.delete('/realm/profile_fields/999999'), 'Field id 999999 not found.');
  assert.equal((await server.owner.delete(`/realm/profile_fields/${id}`)).status, 200);
  assert.deepEqual(await fields(), []);
  expectError(await server.owner.delete(`/realm/profile_fields/${id}`), `Field id ${id} not found.`);
});

test('reorder: every field must be listed; positions follow the list', async () => {
  const a = await create({ name: 'A', field_type: 1 });
  const b = await create({ name: 'B', field_type: 1 });
  const c = await create({ name: 'C', field_type: 1 });
  const before = await fields();
  expectError(await admin.patch('/realm/profile_fields', { order: [c, a] }), 'Invalid order mapping.');
  expectError(await admin.patch('/realm/profile_fields', { order: 'c,a,b' }), 'order is not valid JSON');
  expectError(await admin.patch('/realm/profile_fields', {}), "Missing 'order' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'order' });
  assert.deepEqual(await fields(), before);
  assert.equal((await admin.patch('/realm/profile_fields', { order: [c, a, b] })).status, 200);
  assert.deepEqual(
    (await fields()).map((f) => [f.id, f.order]),
    [
      [c, 0],
      [a, 1],
      [b, 2],
    ],
  );
  // A field created afterwards goes last.
  const d = await create({ name: 'D', field_type: 1 });
  assert.deepEqual(
    (await fields()).map((f) => f.id),
    [c, a, b, d],
  );
});

test('every change sends the whole list to every user', async () => {
  const queues = new Map<Client, string>();
  for (const c of [guest, member, admin]) {
    const res = await c.post('/register', { event_types: ['custom_profile_fields'] });
    queues.set(c, res.body.queue_id);
  }
  const id = await create({ name: 'Evented', field_type: 1 });
  await server.owner.patch(`/realm/profile_fields/${id}`, { hint: 'now with a hint' });
  const second = await create({ name: 'Second', field_type: 4 });
  await server.owner.patch('/realm/profile_fields', { order: [second, id] });
  await server.owner.delete(`/realm/profile_fields/${id}`);
  // Refused changes send nothing.
  await member.post('/realm/profile_fields', { name: 'Refused', field_type: 1 });
  await server.owner.post('/realm/profile_fields', { name: '', field_type: 1 });
  for (const [c, queueId] of queues) {
    const res = await c.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
    const events = res.body.events;
    assert.deepEqual(
      events.map((e: any) => e.type),
      Array(5).fill('custom_profile_fields'),
    );
    assert.deepEqual(
      events.map((e: any) => e.fields.map((f: any) => f.id)),
      [[id], [id], [id, second], [second, id], [second]],
    );
    assert.equal(events[1].fields[0].hint, 'now with a hint');
    assert.deepEqual(events[4].fields, await fields());
  }
});

test('register: custom_profile_fields and the field types, kept in sync by the events', async () => {
  const state = (await member.post('/register', { fetch_event_types: ['custom_profile_fields'] })).body;
  assert.deepEqual(state.custom_profile_fields, []);
  assert.deepEqual(state.custom_profile_field_types, {
    SHORT_TEXT: { id: 1, name: 'Text (short)' },
    LONG_TEXT: { id: 2, name: 'Text (long)' },
    SELECT: { id: 3, name: 'List of options' },
    DATE: { id: 4, name: 'Date' },
    URL: { id: 5, name: 'Link' },
    USER: { id: 6, name: 'Users' },
    EXTERNAL_ACCOUNT: { id: 7, name: 'External account' },
    PRONOUNS: { id: 8, name: 'Pronouns' },
  });
  assert.equal('realm_users' in state, false);
  const viewers = [await registerViewer(server, member), await registerViewer(server, guest, { fetch_event_types: ['custom_profile_fields'] })];
  const id = await create({ name: 'Synced', field_type: 3, field_data: CHOICES });
  for (const v of viewers) await expectStateInSync(server, v, 'after create');
  assert.deepEqual(viewers[0].state.custom_profile_fields, await fields());
  await admin.patch(`/realm/profile_fields/${id}`, { name: 'Renamed', display_in_profile_summary: true });
  const other = await create({ name: 'Other', field_type: 8 });
  await admin.patch('/realm/profile_fields', { order: [other, id] });
  for (const v of viewers) await expectStateInSync(server, v, 'after update and reorder');
  await admin.delete(`/realm/profile_fields/${id}`);
  for (const v of viewers) await expectStateInSync(server, v, 'after delete');
});
