// Linkifiers (spec endpoint 20, "Linkifier"; digest 1.20, sections 2, 3, 4, 6):
// list, add, update, remove, reorder; validation; realm_linkifiers events and
// register state; use in rendering and topic links.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { topicLinker, topicLinksFor } from '../../src/linkifiers/rendering.ts';
import { renderMarkdown } from '../../src/rendering/index.ts';

let server: TestServer;
let admin: Client;
let moderator: Client;
let member: Client;
let guest: Client;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, fullName: 'Ada Admin' });
  moderator = await server.createUser({ role: ROLE.MODERATOR, fullName: 'Mo Derator' });
  member = await server.createUser({ role: ROLE.MEMBER, fullName: 'Mem Ber' });
  guest = await server.createUser({ role: ROLE.GUEST, fullName: 'Gue St' });
});
after(() => server.close());

const CAPABLE = { client_capabilities: { notification_settings_null: false, linkifier_url_template: true } };

async function list(client: Client = server.owner) {
  const res = await client.get('/realm/linkifiers');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.linkifiers as { id: number; pattern: string; url_template: string }[];
}

async function add(pattern: string, url_template: string, client: Client = server.owner): Promise<number> {
  const res = await client.post('/realm/filters', { pattern, url_template });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body).sort(), ['id', 'msg', 'result']);
  return res.body.id;
}

async function clear() {
  for (const l of await list()) assert.equal((await server.owner.delete(`/realm/filters/${l.id}`)).status, 200);
}

function expectError(res: { status: number; body: any }, msg: string, errors?: Record<string, string[]>) {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.result, 'error');
  assert.equal(res.body.code, 'BAD_REQUEST');
  assert.equal(res.body.msg, msg);
  if (errors) assert.deepEqual(res.body.errors, errors);
}

test('add and list: every user may list, in processing order, with id, pattern and url_template', async () => {
  await clear();
  assert.deepEqual(await list(), []);
  const id = await add('#(?P<id>[0-9]+)', 'https://github.com/zulip/zulip/issues/{id}');
  const second = await add('  ZUL-(?P<id>\\d+)  ', ' https://realm.com/my_realm_filter/#hashtag/{id} ');
  const expected = [
    { id, pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' },
    // Surrounding whitespace is not part of a linkifier.
    { id: second, pattern: 'ZUL-(?P<id>\\d+)', url_template: 'https://realm.com/my_realm_filter/#hashtag/{id}' },
  ];
  for (const client of [server.owner, admin, moderator, member, guest]) assert.deepEqual(await list(client), expected);
  const res = await guest.get('/realm/linkifiers');
  assert.deepEqual(Object.keys(res.body).sort(), ['linkifiers', 'msg', 'result']);
});

test('who may change linkifiers: administrators and owners only, and a refusal changes nothing', async () => {
  await clear();
  const id = await add('T-(?P<id>[0-9]+)', 'https://t.example/{id}');
  const before = await list();
  for (const client of [member, moderator, guest]) {
    const attempts = [
      await client.post('/realm/filters', { pattern: 'X-(?P<id>[0-9]+)', url_template: 'https://x.example/{id}' }),
      await client.patch(`/realm/filters/${id}`, { pattern: 'Y-(?P<id>[0-9]+)', url_template: 'https://y.example/{id}' }),
      await client.delete(`/realm/filters/${id}`),
      await client.patch('/realm/linkifiers', { ordered_linkifier_ids: [id] }),
    ];
    for (const res of attempts) {
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' });
    }
  }
  assert.deepEqual(await list(), before);

  for (const client of [admin, server.owner]) {
    const created = await add('Z-(?P<id>[0-9]+)', 'https://z.example/{id}', client);
    const updated = await client.patch(`/realm/filters/${created}`, { pattern: 'W-(?P<id>[0-9]+)', url_template: 'https://w.example/{id}' });
    assert.equal(updated.status, 200);
    assert.deepEqual(updated.body, { result: 'success', msg: '' });
    const reordered = await client.patch('/realm/linkifiers', { ordered_linkifier_ids: [created, id] });
    assert.deepEqual(reordered.body, { result: 'success', msg: '' });
    assert.deepEqual(
      (await list()).map((l) => l.id),
      [created, id],
    );
    const removed = await client.delete(`/realm/filters/${created}`);
    assert.deepEqual(removed.body, { result: 'success', msg: '' });
  }
  assert.deepEqual(await list(), before);
});

test('validation: the reference messages, the errors dict, and nothing stored', async () => {
  await clear();
  const template = 'https://realm.com/my_realm_filter/{id}';
  const post = (pattern: string, url_template: string) => server.owner.post('/realm/filters', { pattern, url_template });

  expectError(await post('', template), 'This field cannot be blank.', {
    pattern: ['This field cannot be blank.'],
    __all__: ["Group 'id' in URL template is not present in linkifier pattern."],
  });
  expectError(await post('#(?P<id>[0-9]+)', '   '), 'This field cannot be blank.', {
    url_template: ['This field cannot be blank.'],
    __all__: ["Group 'id' in linkifier pattern is not present in URL template."],
  });
  expectError(await post('(foo', template), 'Bad regular expression: missing ): (foo', {
    __all__: ['Bad regular expression: missing ): (foo'],
  });
  expectError(await post('ZUL-(?P<id>\\d????)', template), 'Bad regular expression: bad repetition operator: ????');
  // The renderer's engine (RE2) has no lookaround: such a pattern could never link anything.
  expectError(await post('x(?=(?P<id>y))', template), 'Bad regular expression: invalid perl operator: (?=');
  expectError(await post('a{1001}(?P<id>b)', template), 'Bad regular expression: invalid repetition size: {1001}');
  // "$fgfg" is a valid template (without variables).
  expectError(await post('ZUL-(?P<id>\\d+)', '$fgfg'), "Group 'id' in linkifier pattern is not present in URL template.", {
    __all__: ["Group 'id' in linkifier pattern is not present in URL template."],
  });
  for (const bad of [
    'https://example.com/{foo',
    'https://example.com/{{}',
    'https://example.com/{//foo}',
    'https://example.com/{bar++}',
    '{id',
    'a}{id}',
    '{}',
    '{=id}',
    '{id:0}',
  ]) {
    expectError(await post('(?P<id>[0-9]+)', bad), 'Invalid URL template.', { url_template: ['Invalid URL template.'] });
  }
  // Both fields wrong: the field's error comes first, the pattern's in __all__.
  expectError(await post('(foo', '{id'), 'Invalid URL template.', {
    url_template: ['Invalid URL template.'],
    __all__: ['Bad regular expression: missing ): (foo'],
  });
  expectError(
    await post('ZUL-(?P<id>\\d+)', 'https://realm.com/my_realm_filter/{hello}'),
    "Group 'hello' in URL template is not present in linkifier pattern.",
  );
  expectError(await post('ZUL-(?P<id>\\d+)-(?P<hello>\\d+)', 'https://realm.com/{hello}'), "Group 'id' in linkifier pattern is not present in URL template.");
  expectError(await post('(?P<b>x)(?P<a>y)', 'https://e.com/'), "Group 'a' in linkifier pattern is not present in URL template.");
  expectError(
    await post('(?P<linkifier_actual_match>x)', 'https://e.com/{linkifier_actual_match}'),
    'Bad regular expression: invalid named capture group: linkifier_actual_match',
  );
  assert.deepEqual(await list(), []);

  // What the reference server accepts.
  const valid: [string, string][] = [
    ['ZUL2-(?P<id>\\d+)', 'https://realm.com/my_realm_filter/?value={id}'],
    ['PR (?P<id>[0-9]+)', 'https://example.com/~user/web#view_type=type&model=model&action=12345&id={id}'],
    ['!(?P<id>[0-9]+)', 'https://realm.com/index.pl?Action=AgentTicketZoom;TicketNumber={id}'],
    ['ZULZ-(?P<hello>\\d+)-(?P<world>\\d+)', 'https://realm.com/my_realm_filter/{hello}/{world}'],
    ['ZUL-URL-(?P<id>\\d+)', 'https://example.com/%ba/{id}'],
    ['(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)', 'https://github.com/{org}/{repo}/issue/{id}'],
    [
      'FOO_(?P<id>[a-f]{5});(?P<zone>[a-f]);(?P<domain>[a-z]+);(?P<location>[a-z]+);(?P<name>[a-z]{2,8});(?P<chapter>[0-9]{2,3});(?P<fragment>[a-z]{2,8})',
      'https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name,chapter}{#fragment:5}',
    ],
    ['(?P<foo>a)(?P<bar>b)(?P<baz>c)', 'https://example.com{/foo,bar,baz}{?foo*}{+bar}'],
    ['no-groups', 'https://example.com/%%(foo)s'],
  ];
  for (const [pattern, url_template] of valid) await add(pattern, url_template);
  assert.equal((await list()).length, valid.length);
});

test('a pattern is used once per organization', async () => {
  await clear();
  const id = await add('#(?P<id>[0-9]+)', 'https://a.example/{id}');
  expectError(
    await server.owner.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://b.example/{id}' }),
    'Realm filter with this Realm and Pattern already exists.',
    {
      __all__: ['Realm filter with this Realm and Pattern already exists.'],
    },
  );
  const other = await add('!(?P<id>[0-9]+)', 'https://b.example/{id}');
  // Updating a linkifier to its own pattern is no conflict; to another's is.
  assert.equal((await server.owner.patch(`/realm/filters/${id}`, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://c.example/{id}' })).status, 200);
  expectError(
    await server.owner.patch(`/realm/filters/${other}`, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://d.example/{id}' }),
    'Realm filter with this Realm and Pattern already exists.',
  );
  assert.deepEqual(await list(), [
    { id, pattern: '#(?P<id>[0-9]+)', url_template: 'https://c.example/{id}' },
    { id: other, pattern: '!(?P<id>[0-9]+)', url_template: 'https://b.example/{id}' },
  ]);
});

test('update and remove: unknown ids, validation on update, parameters required', async () => {
  await clear();
  const id = await add('#(?P<id>[123])', 'https://realm.com/my_realm_filter/{id}');
  const ok = await server.owner.patch(`/realm/filters/${id}`, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://realm.com/my_realm_filter/issues/{id}' });
  assert.equal(ok.status, 200);
  assert.deepEqual(await list(), [{ id, pattern: '#(?P<id>[0-9]+)', url_template: 'https://realm.com/my_realm_filter/issues/{id}' }]);

  expectError(
    await server.owner.patch(`/realm/filters/${id}`, { pattern: 'ZUL-(?P<id>\\d????)', url_template: 'https://realm.com/{id}' }),
    'Bad regular expression: bad repetition operator: ????',
  );
  expectError(
    await server.owner.patch(`/realm/filters/${id}`, { pattern: 'ZUL-(?P<id>\\d+)', url_template: '$fgfg' }),
    "Group 'id' in linkifier pattern is not present in URL template.",
  );
  expectError(await server.owner.patch(`/realm/filters/${id}`, { pattern: '#(?P<id>[123])', url_template: '{id' }), 'Invalid URL template.');
  expectError(
    await server.owner.patch(`/realm/filters/${id + 1000}`, { pattern: '#(?P<id>[123])', url_template: 'https://e.com/{id}' }),
    'Linkifier not found.',
  );
  const missing = await server.owner.patch(`/realm/filters/${id}`, { pattern: '#(?P<id>[123])' });
  assert.equal(missing.status, 400);
  assert.deepEqual(missing.body, { result: 'error', msg: "Missing 'url_template' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'url_template' });
  assert.deepEqual(await list(), [{ id, pattern: '#(?P<id>[0-9]+)', url_template: 'https://realm.com/my_realm_filter/issues/{id}' }]);

  expectError(await server.owner.delete(`/realm/filters/${id + 1000}`), 'Linkifier not found.');
  assert.equal((await server.owner.delete(`/realm/filters/${id}`)).status, 200);
  expectError(await server.owner.delete(`/realm/filters/${id}`), 'Linkifier not found.');
  assert.deepEqual(await list(), []);
});

test('reorder: all ids exactly once; new linkifiers go last; removing keeps the order', async () => {
  await clear();
  const empty = await server.owner.patch('/realm/linkifiers', { ordered_linkifier_ids: [] });
  assert.deepEqual(empty.body, { result: 'success', msg: '' });
  const ids = [
    await add('1#(?P<id>[123])', 'https://filter.com/foo/{id}'),
    await add('2#(?P<id>[123])', 'https://filter.com/bar/{id}'),
    await add('3#(?P<id>[123])', 'https://filter.com/baz/{id}'),
  ];
  assert.deepEqual(
    (await list()).map((l) => l.id),
    ids,
  );
  let order = [ids[2]!, ids[1]!, ids[0]!];
  assert.equal((await server.owner.patch('/realm/linkifiers', { ordered_linkifier_ids: order })).status, 200);
  assert.deepEqual(
    (await list()).map((l) => l.id),
    order,
  );

  const newest = await add('3#123', 'https://example.com');
  order = [...order, newest];
  assert.deepEqual(
    (await list()).map((l) => l.id),
    order,
  );
  assert.equal((await server.owner.delete(`/realm/filters/${order[2]}`)).status, 200);
  const deleted = order[2]!;
  order = [order[0]!, order[1]!, newest];
  assert.deepEqual(
    (await list()).map((l) => l.id),
    order,
  );

  const reorder = (ids: unknown) => server.owner.patch('/realm/linkifiers', { ordered_linkifier_ids: ids });
  expectError(await reorder([deleted, order[2], order[0], order[1]]), 'The ordered list must enumerate all existing linkifiers exactly once');
  expectError(await reorder([...order, order[0]]), 'The ordered list must not contain duplicated linkifiers');
  expectError(await reorder(order.slice(0, 2)), 'The ordered list must enumerate all existing linkifiers exactly once');
  expectError(await reorder(['a']), 'ordered_linkifier_ids[0] is not an integer');
  const missing = await server.owner.patch('/realm/linkifiers', {});
  assert.equal(missing.body.code, 'REQUEST_VARIABLE_MISSING');
  assert.deepEqual(
    (await list()).map((l) => l.id),
    order,
  );
});

test('events: realm_linkifiers with the whole list after every change, for clients with linkifier_url_template', async () => {
  await clear();
  const viewers = [await registerViewer(server, member, CAPABLE), await registerViewer(server, guest, CAPABLE)];
  const legacy = await registerViewer(server, member);
  assert.deepEqual(viewers[0]!.state.realm_linkifiers, []);
  assert.deepEqual(viewers[0]!.state.realm_filters, []);

  const a = await add('A-(?P<id>[0-9]+)', 'https://a.example/{id}');
  for (const v of viewers) await expectStateInSync(server, v, 'after adding');
  const events = await member.get('/events', { queue_id: viewers[0]!.queueId, last_event_id: -1, dont_block: true });
  const linkifierEvents = events.body.events.filter((e: any) => e.type === 'realm_linkifiers');
  assert.deepEqual(linkifierEvents.at(-1), {
    type: 'realm_linkifiers',
    realm_linkifiers: [{ id: a, pattern: 'A-(?P<id>[0-9]+)', url_template: 'https://a.example/{id}' }],
    id: linkifierEvents.at(-1).id,
  });

  const b = await add('B-(?P<id>[0-9]+)', 'https://b.example/{id}');
  for (const v of viewers) await expectStateInSync(server, v, 'after adding a second');
  await server.owner.patch(`/realm/filters/${a}`, { pattern: 'AA-(?P<id>[0-9]+)', url_template: 'https://aa.example/{id}' });
  for (const v of viewers) await expectStateInSync(server, v, 'after updating');
  await server.owner.patch('/realm/linkifiers', { ordered_linkifier_ids: [b, a] });
  for (const v of viewers) await expectStateInSync(server, v, 'after reordering');
  assert.deepEqual(
    viewers[0]!.state.realm_linkifiers.map((l: any) => l.id),
    [b, a],
  );
  await server.owner.delete(`/realm/filters/${b}`);
  for (const v of viewers) await expectStateInSync(server, v, 'after removing');
  // Refused changes send nothing.
  await member.post('/realm/filters', { pattern: 'C-(?P<id>[0-9]+)', url_template: 'https://c.example/{id}' });
  await server.owner.post('/realm/filters', { pattern: '(', url_template: 'https://c.example/' });
  for (const v of viewers) await expectStateInSync(server, v, 'after refusals');

  // Without the capability: an empty list in register and no events at all.
  await expectStateInSync(server, legacy, 'legacy client');
  assert.deepEqual(legacy.state.realm_linkifiers, []);
  assert.deepEqual(legacy.state.realm_filters, []);
  const legacyEvents = await member.get('/events', { queue_id: legacy.queueId, last_event_id: -1, dont_block: true });
  assert.deepEqual(
    legacyEvents.body.events.filter((e: any) => e.type.startsWith('realm_filter') || e.type === 'realm_linkifiers'),
    [],
  );
  for (const v of [...viewers, legacy]) await v.client.delete('/events', { queue_id: v.queueId });
});

test('register: realm_linkifiers and realm_filters are separate fetch_event_types', async () => {
  await clear();
  const id = await add('#(?P<id>[0-9]+)', 'https://a.example/{id}');
  const both = await member.post('/register', { ...CAPABLE, fetch_event_types: ['realm_linkifiers', 'realm_filters'] });
  assert.deepEqual(both.body.realm_linkifiers, [{ id, pattern: '#(?P<id>[0-9]+)', url_template: 'https://a.example/{id}' }]);
  assert.deepEqual(both.body.realm_filters, []);
  const filtersOnly = await member.post('/register', { ...CAPABLE, fetch_event_types: ['realm_filters'] });
  assert.deepEqual(filtersOnly.body.realm_filters, []);
  assert.equal('realm_linkifiers' in filtersOnly.body, false);
  const linkifiersOnly = await member.post('/register', { ...CAPABLE, fetch_event_types: ['realm_linkifiers'] });
  assert.equal('realm_filters' in linkifiersOnly.body, false);
  assert.equal(linkifiersOnly.body.realm_linkifiers.length, 1);
  const unrelated = await member.post('/register', { ...CAPABLE, fetch_event_types: ['realm_user'] });
  assert.equal('realm_linkifiers' in unrelated.body, false);
  for (const res of [both, filtersOnly, linkifiersOnly, unrelated]) await member.delete('/events', { queue_id: res.body.queue_id });
});

test("the renderer links matches of the organization's linkifiers, in their order", async () => {
  await clear();
  await add('#(?P<id>[0-9]+)', 'https://trac.example.com/ticket/{id}');
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const html = async (content: string) => (await renderMarkdown(server.svc, { realm, content })).html;
  assert.equal(await html('fix #224'), '<p>fix <a href="https://trac.example.com/ticket/224">#224</a></p>');
  assert.equal(await html('issue#124 and #1124z'), '<p>issue#124 and #1124z</p>');

  // Through HTTP: the organization's description is rendered with them.
  await server.svc.db.updateTable('realms').set({ description: 'See #42.' }).where('id', '=', 1).execute();
  const settings = await server.anonymous.get('/server_settings');
  assert.equal(settings.body.realm_description, '<p>See <a href="https://trac.example.com/ticket/42">#42</a>.</p>');
  await server.svc.db.updateTable('realms').set({ description: '' }).where('id', '=', 1).execute();

  // Order decides between overlapping patterns.
  const specific = await add('#(?P<id>[0-9]+)!', 'https://urgent.example/{id}');
  const general = (await list())[0]!.id;
  assert.equal(await html('#7!'), '<p><a href="https://trac.example.com/ticket/7">#7</a>!</p>');
  await server.owner.patch('/realm/linkifiers', { ordered_linkifier_ids: [specific, general] });
  assert.equal(await html('#7!'), '<p><a href="https://urgent.example/7">#7!</a></p>');
});

test('topic links: linkifier matches and bare URLs of a topic', async () => {
  await clear();
  await add('#(?P<id>[0-9]+)', 'https://trac.example.com/ticket/{id}');
  assert.deepEqual(await topicLinksFor(server.svc.db, 1, 'fix #224 see https://example.com/x'), [
    { text: '#224', url: 'https://trac.example.com/ticket/224' },
    { text: 'https://example.com/x', url: 'https://example.com/x' },
  ]);
  assert.deepEqual(await topicLinksFor(server.svc.db, 1, 'nothing here'), []);
  const linker = await topicLinker(server.svc.db, 1);
  assert.deepEqual(linker('#1 and #2'), [
    { text: '#1', url: 'https://trac.example.com/ticket/1' },
    { text: '#2', url: 'https://trac.example.com/ticket/2' },
  ]);
  await clear();
  // Bare URLs link without any linkifier.
  assert.deepEqual(await topicLinksFor(server.svc.db, 1, 'see example.com'), [{ text: 'example.com', url: 'https://example.com' }]);
});

test('organizations do not share linkifiers', async () => {
  await clear();
  const outsider = await server.createOrganization('elsewhere');
  const ours = await add('#(?P<id>[0-9]+)', 'https://ours.example/{id}');
  assert.deepEqual((await outsider.get('/realm/linkifiers')).body.linkifiers, []);
  expectError(await outsider.delete(`/realm/filters/${ours}`), 'Linkifier not found.');
  expectError(await outsider.patch(`/realm/filters/${ours}`, { pattern: 'x', url_template: 'https://x.example' }), 'Linkifier not found.');
  expectError(
    await outsider.patch('/realm/linkifiers', { ordered_linkifier_ids: [ours] }),
    'The ordered list must enumerate all existing linkifiers exactly once',
  );
  // The same pattern is free there, and theirs stays out of our list and our renders.
  const res = await outsider.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://theirs.example/{id}' });
  assert.equal(res.status, 200);
  assert.deepEqual(
    (await list()).map((l) => l.id),
    [ours],
  );
  assert.deepEqual(await topicLinksFor(server.svc.db, 1, '#5'), [{ text: '#5', url: 'https://ours.example/5' }]);
  assert.deepEqual(await topicLinksFor(server.svc.db, outsider.realmId, '#5'), [{ text: '#5', url: 'https://theirs.example/5' }]);
});

test('messages sent through the API: linkified content, topic_links in GET /messages and in message events', async () => {
  await clear();
  await add('#(?P<id>[0-9]+)', 'https://trac.example.com/ticket/{id}');
  const success = (res: { status: number; body: any }) => {
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  success(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'Tickets' }], principals: [admin.id, member.id] }));
  const queue = success(await member.post('/register', { event_types: ['message'], apply_markdown: true })).queue_id;
  const id = success(await admin.post('/messages', { type: 'stream', to: 'Tickets', topic: 'fix #12', content: 'see #34' })).id;
  const links = [{ text: '#12', url: 'https://trac.example.com/ticket/12' }];
  const [fetched] = success(await member.get('/messages', { anchor: id, num_before: 0, num_after: 0 })).messages;
  assert.deepEqual(fetched.topic_links, links);
  assert.equal(fetched.content, '<p>see <a href="https://trac.example.com/ticket/34">#34</a></p>');
  const [event] = success(await member.get('/events', { queue_id: queue, last_event_id: -1, dont_block: true })).events.filter(
    (e: any) => e.type === 'message',
  );
  assert.deepEqual(event.message.topic_links, links);
  assert.equal(event.message.content, fetched.content);
  // Direct messages have no topic and no topic links.
  const dm = success(await admin.post('/messages', { type: 'direct', to: JSON.stringify([member.id]), content: '#56' })).id;
  const direct = success(await member.get(`/messages/${dm}`)).message;
  assert.deepEqual(direct.topic_links, []);
  assert.equal(direct.content, '<p><a href="https://trac.example.com/ticket/56">#56</a></p>');
  await member.delete('/events', { queue_id: queue });
  await clear();
});

test('a message sent after a change renders with the changed linkifiers (the process keeps them between changes)', async () => {
  await clear();
  const send = async (content: string) => {
    const res = await admin.post('/messages', { type: 'direct', to: JSON.stringify([member.id]), content });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return (await member.get(`/messages/${res.body.id}`)).body.message.content as string;
  };
  assert.equal(await send('#7'), '<p>#7</p>');
  const id = await add('#(?P<id>[0-9]+)', 'https://one.example.com/{id}');
  assert.equal(await send('#7'), '<p><a href="https://one.example.com/7">#7</a></p>');
  assert.equal((await server.owner.patch(`/realm/filters/${id}`, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://two.example.com/{id}' })).status, 200);
  assert.equal(await send('#7'), '<p><a href="https://two.example.com/7">#7</a></p>');
  await clear();
  assert.equal(await send('#7'), '<p>#7</p>');
});
