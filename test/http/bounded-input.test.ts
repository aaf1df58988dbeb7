// Bounded input (issue 12, point 3): every stored text has a length bound answered
// with a 400 (never the database's "index row too large"), JSON parameters have a
// depth limit, and linkifier URL templates take only http(s) URLs.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';

let server: TestServer;
let member: Client;
before(async () => {
  server = await startTestServer();
  member = await server.createUser({ role: ROLE.MEMBER });
});
after(() => server.close());

// Incompressible, as a real pattern would be: 'a' x 3000 compresses into an index row.
const LONG = randomBytes(1_500).toString('hex');
const HUGE = 'b'.repeat(200_000);

function assertRefused(label: string, res: { status: number; body: any }) {
  assert.equal(res.status, 400, `${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  assert.equal(res.body.result, 'error', label);
  assert.equal(typeof res.body.code, 'string', label);
}

test('every stored text refuses an oversized value with a 400', async () => {
  const channel = await server.owner.post('/channels/create', { name: 'bounds', subscribers: [server.owner.id, member.id] });
  assert.equal(channel.status, 200);
  const field = await server.owner.post('/realm/profile_fields', { name: 'bounds field', field_type: 1 });
  assert.equal(field.status, 200);
  const owner = server.owner;
  const cases: [string, Client, string, string, Record<string, unknown>][] = [
    ['linkifier pattern', owner, 'POST', '/realm/filters', { pattern: `(?P<id>${LONG})`, url_template: 'https://x.example/{id}' }],
    ['linkifier url_template', owner, 'POST', '/realm/filters', { pattern: '(?P<id>[0-9]+)', url_template: `https://x.example/${LONG}/{id}` }],
    ['channel name', owner, 'POST', '/channels/create', { name: LONG, subscribers: [] }],
    ['channel description', owner, 'POST', '/channels/create', { name: 'long description', description: HUGE, subscribers: [] }],
    ['folder name', owner, 'POST', '/channel_folders/create', { name: LONG, description: '' }],
    ['folder description', owner, 'POST', '/channel_folders/create', { name: 'f', description: HUGE }],
    ['group name', owner, 'POST', '/user_groups/create', { name: LONG, description: '', members: [] }],
    ['group description', owner, 'POST', '/user_groups/create', { name: 'g', description: HUGE, members: [] }],
    ['profile field name', owner, 'POST', '/realm/profile_fields', { name: LONG, field_type: 1 }],
    ['profile field hint', owner, 'POST', '/realm/profile_fields', { name: 'h', hint: HUGE, field_type: 1 }],
    ['profile value', member, 'PATCH', '/users/me/profile_data', { data: [{ id: field.body.id, value: HUGE }] }],
    ['navigation view fragment', member, 'POST', '/navigation_views', { fragment: LONG, is_pinned: true }],
    ['navigation view name', member, 'POST', '/navigation_views', { fragment: 'narrow/x', is_pinned: true, name: LONG }],
    ['snippet title', member, 'POST', '/saved_snippets', { title: LONG, content: 'c' }],
    ['snippet content', member, 'POST', '/saved_snippets', { title: 't', content: HUGE }],
    ['user email', owner, 'POST', '/users', { email: `${LONG}@example.com`, password: 'pw-12345678', full_name: 'Long' }],
    ['user full name', owner, 'POST', '/users', { email: 'long-name@example.com', password: 'pw-12345678', full_name: LONG }],
    ['user password', owner, 'POST', '/users', { email: 'long-password@example.com', password: HUGE, full_name: 'Long' }],
    ['own full name', member, 'PATCH', '/settings', { full_name: LONG }],
    ['organization name', owner, 'PATCH', '/realm', { name: LONG }],
    ['organization description', owner, 'PATCH', '/realm', { description: HUGE }],
    ['topic policy', member, 'POST', '/user_topics', { stream_id: channel.body.id, topic: LONG, visibility_policy: 1 }],
    ['invitation emails', owner, 'POST', '/invites', { invitee_emails: HUGE, stream_ids: [] }],
    [
      'subscription color',
      member,
      'POST',
      '/users/me/subscriptions/properties',
      { subscription_data: [{ stream_id: channel.body.id, property: 'color', value: LONG }] },
    ],
  ];
  const accepted: string[] = [];
  for (const [label, client, method, path, params] of cases) {
    const res = await client.request(method, path, params);
    if (res.status !== 400) accepted.push(`${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    else assertRefused(label, res);
  }
  assert.deepEqual(accepted, []);
  // Messages (and drafts, drafts.test.ts) are truncated instead, as the reference does.
  const sent = await member.post('/messages', { type: 'stream', to: channel.body.id, topic: LONG, content: HUGE });
  assert.equal(sent.status, 200);
  const row = await server.svc.db.selectFrom('messages').select(['topic', 'content']).where('id', '=', sent.body.id).executeTakeFirstOrThrow();
  assert.ok(row.topic.length <= 60 && row.content.length <= 10_000, 'truncated');
  // Nothing was stored.
  const db = server.svc.db;
  assert.equal((await db.selectFrom('linkifiers').select('id').execute()).length, 0);
  assert.equal((await db.selectFrom('saved_snippets').select('id').execute()).length, 0);
  assert.equal((await db.selectFrom('navigation_views').select('id').execute()).length, 0);
});

test('JSON parameters nested thousands deep answer 400', async () => {
  const deep = '['.repeat(5_000) + ']'.repeat(5_000);
  const deepObject = '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000);
  for (const [path, params] of [
    ['/users/me/subscriptions', { subscriptions: deep }],
    ['/drafts', { drafts: deepObject }],
    ['/messages/flags', { messages: deep, op: 'add', flag: 'read' }],
  ] as const) {
    const res = await member.post(path, params);
    assertRefused(path, res);
    assert.match(res.body.msg, /nested too deeply/);
  }
  // In a query string, as deep as a URL may be long (8 KiB).
  const res = await member.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: '['.repeat(1_000) + ']'.repeat(1_000) });
  assertRefused('GET /messages narrow', res);
  // A JSON body, too.
  const body = await server.app.inject({
    method: 'POST',
    url: '/api/v1/users/me/subscriptions',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${member.email}:${member.apiKey}`).toString('base64')}` },
    payload: `{"subscriptions": ${deep}}`,
  });
  assert.equal(body.statusCode, 400, body.body.slice(0, 200));
  assert.equal(JSON.parse(body.body).result, 'error');
  // Ordinary nesting still works.
  assert.equal(
    (await member.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'is', operand: 'starred' }] })).status,
    200,
  );
});

test('linkifier URL templates refuse script and data schemes and scheme-relative forms', async () => {
  for (const template of [
    'javascript:alert({id})',
    'JavaScript:alert({id})',
    ' javascript:x/{id}',
    'data:text/html,{id}',
    'vbscript:msgbox({id})',
    '//evil.example/{id}',
    '\\\\evil.example/{id}',
    'java\tscript:alert({id})',
    '\x01javascript:x{id}',
  ]) {
    const res = await server.owner.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: template });
    assertRefused(template, res);
    assert.ok(res.body.errors?.url_template, `${template}: reported on url_template: ${JSON.stringify(res.body)}`);
  }
  const ok = await server.owner.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'HTTPS://tracker.example/{id}' });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  const patched = await server.owner.patch(`/realm/filters/${ok.body.id}`, { pattern: '#(?P<id>[0-9]+)', url_template: 'javascript:alert({id})' });
  assertRefused('PATCH', patched);
  const stored = await server.svc.db.selectFrom('linkifiers').select('url_template').where('id', '=', ok.body.id).executeTakeFirstOrThrow();
  assert.equal(stored.url_template, 'HTTPS://tracker.example/{id}');
});
