// Concurrent identical writes (issue 12, point 2): eight copies of one request sent
// at once end as if they had run one after another — each answers success, or the
// error a later copy gets — never 500. Every unique index an action can hit is
// listed here with the write that hits it (src/db/migrations/):
//
//   users (realm, lower(email)/lower(delivery_email))   POST /users
//   user_groups (realm, lower(name))                     POST /user_groups/create, PATCH /user_groups/{id}
//   user_group_members (group, user)                     POST /user_groups/{id}/members
//   user_group_subgroups (supergroup, subgroup)          POST /user_groups/{id}/subgroups
//   channel_folders (realm, lower(name))                 POST /channel_folders/create, PATCH /channel_folders/{id}
//   channels (realm, lower(name))                        POST /channels/create, POST /users/me/subscriptions (new
//                                                        channel), PATCH /streams/{id} (rename)
//   subscriptions (user, channel)                        POST /users/me/subscriptions (existing channel, principals)
//   default_channels (channel)                           POST /default_streams
//   recipients (channel), (realm, dm_key)                POST /messages (first message of a conversation)
//   channel_daily_messages (channel, day, shard)         POST /messages (first message of the day)
//   user_messages (user, message)                        POST /messages
//   reactions (message, user, type, code)                POST /messages/{id}/reactions
//   user_topics (user, channel, lower(topic))            POST /user_topics, PATCH /users/me/subscriptions/muted_topics
//   user_presence (user), presence_sequences (realm)     POST /users/me/presence
//   navigation_views (user, fragment), (user, name)      POST /navigation_views
//   custom_profile_fields (realm, name)                  POST /realm/profile_fields
//   custom_profile_field_values (field, user)            PATCH /users/me/profile_data
//   linkifiers (realm, pattern)                          POST /realm/filters, PATCH /realm/filters/{id}
//   push_devices (user, push_account_id)                 POST /mobile_push/register (needs a push service: not here)
//   realm_emoji (realm, name) where active               POST /realm/emoji/{name} (multipart: custom-emoji tests)
//   realms (string_id), users (api_key), invitations (token)   generated or operator-only values
//
// On PGlite requests are serialized, so this bites on PostgreSQL; it runs on both.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startTestServer, type Client, type Response, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';

let server: TestServer;
let member: Client;
let other: Client;
before(async () => {
  server = await startTestServer();
  member = await server.createUser({ role: ROLE.MEMBER });
  other = await server.createUser({ role: ROLE.MEMBER });
});
after(() => server.close());

const COPIES = 8;

interface Write {
  client: Client;
  method: 'POST' | 'PATCH';
  path: string;
  params: Record<string, unknown>;
}

const outcome = (r: Response) => JSON.stringify({ status: r.status, code: r.body?.code, msg: r.body?.msg });

/** Sends COPIES of the write at once, then once more: each copy succeeded or failed as that later one. */
async function race(label: string, write: Write): Promise<Response[]> {
  const send = () => write.client.request(write.method, write.path, write.params);
  const burst = await Promise.all(Array.from({ length: COPIES }, send));
  const later = await send();
  for (const r of [...burst, later]) {
    assert.ok(r.status < 500, `${label}: ${r.status} ${JSON.stringify(r.body)}`);
    assert.ok(r.body && (r.body.result === 'success' || r.body.result === 'error') && typeof r.body.msg === 'string', `${label}: envelope`);
  }
  const successes = burst.filter((r) => r.status === 200);
  assert.ok(successes.length >= 1, `${label}: the first copy succeeds: ${burst.map(outcome).join(' ')}`);
  for (const r of burst.filter((r) => r.status !== 200)) {
    assert.equal(outcome(r), outcome(later), `${label}: a refused copy answers as the later request`);
  }
  return burst;
}

async function channelId(name: string): Promise<number> {
  const row = await server.svc.db.selectFrom('channels').select('id').where('name', '=', name).executeTakeFirstOrThrow();
  return row.id;
}

async function newChannel(name: string, subscribers: number[] = [server.owner.id]): Promise<number> {
  const res = await server.owner.post('/channels/create', { name, subscribers });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

async function newGroup(name: string): Promise<number> {
  const res = await server.owner.post('/user_groups/create', { name, description: '', members: [server.owner.id] });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.group_id;
}

test('creations by name: one copy creates, the others are told it exists', async () => {
  const cases: [string, Write][] = [
    [
      'POST /channels/create',
      { client: server.owner, method: 'POST', path: '/channels/create', params: { name: 'race create', subscribers: [server.owner.id] } },
    ],
    [
      'POST /channel_folders/create',
      { client: server.owner, method: 'POST', path: '/channel_folders/create', params: { name: 'race folder', description: '' } },
    ],
    [
      'POST /user_groups/create',
      { client: server.owner, method: 'POST', path: '/user_groups/create', params: { name: 'race group', description: '', members: [] } },
    ],
    ['POST /realm/profile_fields', { client: server.owner, method: 'POST', path: '/realm/profile_fields', params: { name: 'race field', field_type: 1 } }],
    [
      'POST /realm/filters',
      { client: server.owner, method: 'POST', path: '/realm/filters', params: { pattern: 'RACE-(?P<id>[0-9]+)', url_template: 'https://race.example/{id}' } },
    ],
    [
      'POST /users',
      { client: server.owner, method: 'POST', path: '/users', params: { email: 'race-user@example.com', password: 'pw-race-1234', full_name: 'Race User' } },
    ],
    [
      'POST /navigation_views',
      { client: member, method: 'POST', path: '/navigation_views', params: { fragment: 'narrow/channel/1-race', is_pinned: true, name: 'Race view' } },
    ],
  ];
  for (const [label, write] of cases) {
    const burst = await race(label, write);
    assert.equal(burst.filter((r) => r.status === 200).length, 1, `${label}: exactly one copy creates`);
  }
  assert.equal((await server.svc.db.selectFrom('channels').select('id').where('name', '=', 'race create').execute()).length, 1);
});

test('idempotent writes: every copy succeeds and the result is one row', async () => {
  const existing = await newChannel('race existing');
  const defaultable = await newChannel('race default');
  const topics = await newChannel('race topics', [server.owner.id, member.id]);
  const group = await newGroup('race members');
  const subgroup = await newGroup('race subgroup');
  const fresh = await server.createUser({ role: ROLE.MEMBER });
  const field = await server.owner.post('/realm/profile_fields', { name: 'race value', field_type: 1 });
  assert.equal(field.status, 200, JSON.stringify(field.body));
  const message = await server.owner.post('/messages', { type: 'stream', to: topics, topic: 'react', content: 'react here' });
  assert.equal(message.status, 200, JSON.stringify(message.body));

  const cases: [string, Write][] = [
    ['POST /users/me/presence', { client: fresh, method: 'POST', path: '/users/me/presence', params: { status: 'active' } }],
    [
      'POST /users/me/subscriptions (new channel)',
      { client: member, method: 'POST', path: '/users/me/subscriptions', params: { subscriptions: [{ name: 'race subscribe new' }] } },
    ],
    [
      'POST /users/me/subscriptions (existing)',
      { client: member, method: 'POST', path: '/users/me/subscriptions', params: { subscriptions: [{ name: 'race existing' }] } },
    ],
    [
      'POST /users/me/subscriptions (principals)',
      { client: server.owner, method: 'POST', path: '/users/me/subscriptions', params: { subscriptions: [{ name: 'race existing' }], principals: [other.id] } },
    ],
    [
      'PATCH /users/me/subscriptions/muted_topics',
      { client: member, method: 'PATCH', path: '/users/me/subscriptions/muted_topics', params: { stream_id: topics, topic: 'muted race', op: 'add' } },
    ],
    [
      'POST /user_topics',
      { client: member, method: 'POST', path: '/user_topics', params: { stream_id: topics, topic: 'followed race', visibility_policy: 3 } },
    ],
    ['POST /default_streams', { client: server.owner, method: 'POST', path: '/default_streams', params: { stream_id: defaultable } }],
    ['POST /user_groups/{id}/members', { client: server.owner, method: 'POST', path: `/user_groups/${group}/members`, params: { add: [member.id] } }],
    ['POST /user_groups/{id}/subgroups', { client: server.owner, method: 'POST', path: `/user_groups/${group}/subgroups`, params: { add: [subgroup] } }],
    [
      'PATCH /users/me/profile_data',
      { client: member, method: 'PATCH', path: '/users/me/profile_data', params: { data: [{ id: field.body.id, value: 'raced' }] } },
    ],
    ['POST /messages/{id}/reactions', { client: member, method: 'POST', path: `/messages/${message.body.id}/reactions`, params: { emoji_name: 'smile' } }],
  ];
  for (const [label, write] of cases) await race(label, write);

  const db = server.svc.db;
  assert.equal((await db.selectFrom('channels').select('id').where('name', '=', 'race subscribe new').execute()).length, 1);
  const subs = await db.selectFrom('subscriptions').select('user_id').where('channel_id', '=', existing).execute();
  assert.deepEqual(
    subs.map((s) => s.user_id).sort((a, b) => a - b),
    [server.owner.id, member.id, other.id].sort((a, b) => a - b),
  );
  assert.equal((await db.selectFrom('default_channels').select('channel_id').where('channel_id', '=', defaultable).execute()).length, 1);
  assert.equal((await db.selectFrom('user_topics').select('topic').where('user_id', '=', member.id).execute()).length, 2);
  assert.equal((await db.selectFrom('user_presence').select('user_id').where('user_id', '=', fresh.id).execute()).length, 1);
});

test('renames to one new name, and messages opening a conversation', async () => {
  const channel = await newChannel('race rename me');
  const group = await newGroup('race group rename me');
  const folder = await server.owner.post('/channel_folders/create', { name: 'race folder rename me', description: '' });
  const filter = await server.owner.post('/realm/filters', { pattern: 'RENAME-(?P<id>[0-9]+)', url_template: 'https://rename.example/{id}' });
  const fresh = await server.createUser({ role: ROLE.MEMBER });
  const cases: [string, Write][] = [
    ['PATCH /streams/{id}', { client: server.owner, method: 'PATCH', path: `/streams/${channel}`, params: { new_name: 'race renamed' } }],
    ['PATCH /user_groups/{id}', { client: server.owner, method: 'PATCH', path: `/user_groups/${group}`, params: { name: 'race group renamed' } }],
    [
      'PATCH /channel_folders/{id}',
      { client: server.owner, method: 'PATCH', path: `/channel_folders/${folder.body.channel_folder_id}`, params: { name: 'race folder renamed' } },
    ],
    [
      'PATCH /realm/filters/{id}',
      {
        client: server.owner,
        method: 'PATCH',
        path: `/realm/filters/${filter.body.id}`,
        params: { pattern: 'RENAMED-(?P<id>[0-9]+)', url_template: 'https://rename.example/{id}' },
      },
    ],
    [
      'POST /messages (new direct conversation)',
      { client: fresh, method: 'POST', path: '/messages', params: { type: 'private', to: [other.id], content: 'hello at once' } },
    ],
    [
      'POST /messages (first of a channel)',
      {
        client: server.owner,
        method: 'POST',
        path: '/messages',
        params: { type: 'stream', to: await newChannel('race first message'), topic: 't', content: 'first' },
      },
    ],
  ];
  for (const [label, write] of cases) await race(label, write);
  assert.equal(await channelId('race renamed'), channel);
  const dms = await sql`select id from recipients where dm_user_ids @> array[${fresh.id}]::int[]`.execute(server.svc.db);
  assert.equal(dms.rows.length, 1, 'one conversation');
});
