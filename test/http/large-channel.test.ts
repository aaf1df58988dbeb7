// Very large channels (issue 12, point 6): a message to a channel with 20,000
// subscribers reaches all of them. Per-recipient bind parameters would exceed
// PostgreSQL's 65,535; lists travel as single array parameters instead. The users
// and subscriptions are made with direct SQL, to keep the setup fast.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { recountSubscribers } from '../../src/channels/subscriber-counts.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const SUBSCRIBERS = 20_000;
let server: TestServer;
let channelId: number;
before(async () => {
  server = await startTestServer();
  const created = await server.owner.post('/channels/create', { name: 'everyone at once', subscribers: [server.owner.id] });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  channelId = created.body.id;
  const db = server.svc.db;
  await sql`
    insert into users (realm_id, email, delivery_email, full_name, role, api_key)
    select 1, 'crowd' || g || '@example.com', 'crowd' || g || '@example.com', 'Crowd ' || g, 400, md5('crowd' || g)
    from generate_series(1, ${SUBSCRIBERS}) g`.execute(db);
  await sql`
    insert into subscriptions (realm_id, user_id, channel_id, color)
    select 1, id, ${channelId}, '#c2c2c2' from users where email like 'crowd%'`.execute(db);
  await recountSubscribers(db, 1);
});
after(() => server.close());

test('a message to a channel of 20,000 subscribers reaches every one', async () => {
  const sent = await server.owner.post('/messages', { type: 'stream', to: channelId, topic: 'hello', content: 'hello everyone' });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const copies = await server.svc.db
    .selectFrom('user_messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('message_id', '=', sent.body.id)
    .executeTakeFirstOrThrow();
  assert.equal(Number(copies.n), SUBSCRIBERS + 1);
  const crowd = await server.clientFor(
    (await server.svc.db.selectFrom('users').select('id').where('email', '=', 'crowd20000@example.com').executeTakeFirstOrThrow()).id,
  );
  const got = await crowd.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'channel', operand: channelId }] });
  assert.equal(got.status, 200, JSON.stringify(got.body));
  assert.equal(got.body.messages[0].id, sent.body.id);
  assert.deepEqual(got.body.messages[0].flags, []);
});

test('the crowd can be mentioned, and a newcomer joins the crowd', async () => {
  const mention = await server.owner.post('/messages', { type: 'stream', to: channelId, topic: 'hello', content: '@**all** listen' });
  assert.equal(mention.status, 200, JSON.stringify(mention.body));
  const joiner = await server.createUser();
  const joined = await joiner.post('/users/me/subscriptions', { subscriptions: [{ name: 'everyone at once' }] });
  assert.equal(joined.status, 200, JSON.stringify(joined.body));
  const members = await server.owner.get(`/streams/${channelId}/members`);
  assert.equal(members.status, 200);
  assert.equal(members.body.subscribers.length, SUBSCRIBERS + 2);
});
