// The stored subscriber count of each channel (channels/subscriber-counts.ts) against
// a count of its subscriptions, after every request that changes who subscribes:
// subscribing (self, others, in bulk, creating channels, concurrently), unsubscribing,
// the legacy PATCH, accounts created (default channels, invitations, bots), users and
// their bots deactivated and reactivated, channels archived or made private, a new
// organization, an import. The API's `subscriber_count` is the stored one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { type Client, ok, startTestServer, type TestServer } from '../support/server.ts';
import { writeHandMadeExport } from '../support/export.ts';
import { importFrom } from '../../src/export/command.ts';
import { silentProgress } from '../../src/backup/progress.ts';
import { cleanUp, scratchDir } from './ops.fixture.ts';

let server: TestServer;
let owner: Client;
let alice: Client;
let bob: Client;
let carol: Client;

before(async () => {
  server = await startTestServer();
  owner = server.owner;
  alice = await server.createUser({ fullName: 'Alice Counted' });
  bob = await server.createUser({ fullName: 'Bob Counted' });
  carol = await server.createUser({ fullName: 'Carol Counted' });
});
after(async () => {
  await server.close();
  await cleanUp();
});

/** Every channel's stored count equals its active subscriptions of active users. */
async function countsTrue(after: string): Promise<void> {
  const { rows } = await sql<{ id: number; name: string; stored: number; live: number }>`
    select c.id, c.name, c.subscriber_count as stored,
      (select count(*)::integer from subscriptions s join users u on u.id = s.user_id where s.channel_id = c.id and s.active and u.is_active) as live
    from channels c order by c.id`.execute(server.svc.db);
  const wrong = rows.filter((r) => r.stored !== r.live);
  assert.deepEqual(wrong, [], `after ${after}`);
}

async function step(what: string, request: () => Promise<unknown>): Promise<void> {
  await request();
  await countsTrue(what);
}

const idOf = async (name: string) => ok(await owner.get('/get_stream_id', { stream: name })).stream_id as number;

test('subscribing and unsubscribing, by oneself, by others, in bulk', async () => {
  await countsTrue('the server started (the migration counted)');
  await step('a channel created with subscribers', async () =>
    ok(await owner.post('/channels/create', { name: 'counted one', subscribers: [owner.id, alice.id] })),
  );
  await step('subscribing oneself', async () => ok(await bob.post('/users/me/subscriptions', { subscriptions: [{ name: 'counted one' }] })));
  await step('subscribing others to new and existing channels', async () =>
    ok(
      await owner.post('/users/me/subscriptions', {
        subscriptions: [{ name: 'counted one' }, { name: 'counted two' }, { name: 'counted three' }],
        principals: [alice.id, bob.id, carol.id],
      }),
    ),
  );
  await step('unsubscribing oneself', async () => ok(await alice.delete('/users/me/subscriptions', { subscriptions: ['counted two'] })));
  await step('an administrator unsubscribing others in bulk', async () =>
    ok(await owner.delete('/users/me/subscriptions', { subscriptions: ['counted one', 'counted three'], principals: [bob.id, carol.id] })),
  );
  await step('subscribing again (an inactive subscription made active)', async () =>
    ok(await bob.post('/users/me/subscriptions', { subscriptions: [{ name: 'counted one' }, { name: 'counted three' }] })),
  );
  await step('the legacy PATCH, adding and removing', async () =>
    ok(await carol.patch('/users/me/subscriptions', { add: [{ name: 'counted one' }], delete: ['counted two'] })),
  );
  const stream = ok(await owner.get(`/streams/${await idOf('counted one')}`)).stream;
  assert.equal(stream.subscriber_count, 4, 'owner, alice, bob, carol');
  const listed = ok(await owner.get('/streams')).streams.find((s: any) => s.name === 'counted one');
  assert.equal(listed.subscriber_count, 4);
  const registered = ok(await alice.post('/register', { fetch_event_types: ['subscription'] }));
  assert.equal(registered.subscriptions.find((s: any) => s.name === 'counted one').subscriber_count, 4);
});

test('identical requests at once count once', async () => {
  const subscribe = () =>
    owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'counted four' }, { name: 'counted one' }], principals: [alice.id, bob.id] });
  const results = await Promise.all([subscribe(), subscribe(), subscribe()]);
  for (const r of results) ok(r);
  await countsTrue('three identical subscribe requests at once');
  const unsubscribe = () => owner.delete('/users/me/subscriptions', { subscriptions: ['counted four'], principals: [alice.id, bob.id] });
  for (const r of await Promise.all([unsubscribe(), unsubscribe()])) ok(r);
  await countsTrue('two identical unsubscribe requests at once');
  const resubscribe = () => alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'counted four' }] });
  for (const r of await Promise.all([resubscribe(), resubscribe()])) ok(r);
  await countsTrue('two identical resubscriptions at once');
  assert.equal(ok(await owner.get(`/streams/${await idOf('counted four')}`)).stream.subscriber_count, 1, 'alice (the owner subscribed others only)');
});

test('accounts created, deactivated and reactivated, with their bots', async () => {
  await step('a default channel set', async () => ok(await owner.post('/default_streams', { stream_id: await idOf('counted three') })));
  const created = await (async () => {
    const res = ok(await owner.post('/users', { email: 'dora@example.com', password: 'secret-password-1', full_name: 'Dora Counted' }));
    await countsTrue('an account created (default channels)');
    return server.clientFor(res.user_id);
  })();
  const invitedKey = /\/join\/([a-z2-7]{24})\/$/.exec(ok(await owner.post('/invites/multiuse', { stream_ids: [await idOf('counted two')] })).invite_link)![1];
  await step('an invitation accepted (its channels)', async () =>
    ok(await server.anonymous.post('/invites/accept', { key: invitedKey, email: 'eve@example.com', full_name: 'Eve Counted', password: 'secret-password-1' })),
  );
  const bot = ok(await created.post('/bots', { full_name: 'Dora Bot', short_name: 'dorabot' }));
  await countsTrue('a bot created');
  await step('a bot subscribed', async () =>
    ok(await created.post('/users/me/subscriptions', { subscriptions: [{ name: 'counted one' }], principals: [bot.user_id] })),
  );
  await step('a user deactivated (and their bot with them)', async () => ok(await owner.delete(`/users/${created.id}`)));
  await step('deactivating them again at once', async () => {
    const again = await Promise.all([owner.delete(`/users/${created.id}`), owner.delete(`/users/${created.id}`)]);
    assert.ok(again.every((r) => r.status === 400));
  });
  await step('a user reactivated', async () => ok(await owner.post(`/users/${created.id}/reactivate`)));
  await step('the bot reactivated', async () => ok(await owner.post(`/users/${bot.user_id}/reactivate`)));
  await step('a bot deactivated', async () => ok(await created.delete(`/bots/${bot.user_id}`)));
  await step('two reactivations at once', async () => {
    await owner.delete(`/users/${alice.id}`);
    await countsTrue('alice deactivated');
    const both = await Promise.all([owner.post(`/users/${alice.id}/reactivate`), owner.post(`/users/${alice.id}/reactivate`)]);
    assert.ok(both.some((r) => r.status === 200));
  });
  await step('leaving the organization (DELETE /users/me)', async () => ok(await carol.delete('/users/me')));
  await step('subscribing someone deactivated is refused', async () =>
    assert.equal((await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'counted two' }], principals: [carol.id] })).status, 400),
  );
});

test('channels archived, unarchived, made private', async () => {
  const id = await idOf('counted three');
  await step('archived', async () => ok(await owner.delete(`/streams/${id}`)));
  await step('unarchived', async () => ok(await owner.patch(`/streams/${id}`, { is_archived: false })));
  await step('made private (former subscribers forgotten)', async () => ok(await owner.patch(`/streams/${await idOf('counted two')}`, { is_private: true })));
});

test('a new organization, and one imported', async () => {
  await step('an organization created (its default channels)', async () => server.createOrganization('counted'));
  const dir = scratchDir();
  writeHandMadeExport(dir, {
    realm: { id: 7, name: 'Imported Counts', string_id: 'imported' },
    users: [
      { id: 11, email: 'ada@imported.example', full_name: 'Ada', role: 100, is_active: true },
      { id: 12, email: 'bo@imported.example', full_name: 'Bo', role: 400, is_active: true },
      { id: 13, email: 'cy@imported.example', full_name: 'Cy', role: 400, is_active: false },
    ],
    channels: [{ id: 21, name: 'lab' }],
    subscriptions: [
      [11, 21, true],
      [12, 21, false],
      [13, 21, true],
    ],
  });
  await step('an import (a deactivated subscriber, a former one)', async () => importFrom(server.svc, dir, 'imported', silentProgress()));
  const lab = await server.svc.db
    .selectFrom('channels')
    .innerJoin('realms', 'realms.id', 'channels.realm_id')
    .select('subscriber_count')
    .where('realms.string_id', '=', 'imported')
    .where('channels.name', '=', 'lab')
    .executeTakeFirstOrThrow();
  assert.equal(lab.subscriber_count, 1, 'Ada only');
});
