// Navigation views (feature level 390): GET/POST /navigation_views,
// PATCH/DELETE /navigation_views/{fragment}, the `navigation_view` events and
// register's `navigation_views` (spec "Navigation view", digest section 2 "Misc", 3.3).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE, type Role } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';

let server: TestServer;
let other: Client;
before(async () => {
  server = await startTestServer();
  other = await server.createUser({ fullName: 'Oth Er' });
});
after(() => server.close());

async function eventsOf(c: Client, queueId: string) {
  const res = await c.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body.events as Record<string, any>[]).filter((e) => e.type !== 'heartbeat').map(({ id: _id, ...e }) => e);
}

const views = async (c: Client) => (await c.get('/navigation_views')).body.navigation_views;
const path = (fragment: string) => `/navigation_views/${encodeURIComponent(fragment)}`;

test('every role manages its own views: built-in ones without a name, custom ones with one', async () => {
  for (const role of [ROLE.GUEST, ROLE.MEMBER, ROLE.MODERATOR, ROLE.ADMINISTRATOR, ROLE.OWNER] as Role[]) {
    const c = await server.createUser({ role });
    assert.deepEqual(await views(c), []);
    assert.deepEqual((await c.post('/navigation_views', { fragment: 'inbox', is_pinned: false })).body, { result: 'success', msg: '' });
    assert.deepEqual((await c.post('/navigation_views', { fragment: 'narrow/is/starred', is_pinned: true })).body, { result: 'success', msg: '' });
    assert.equal((await c.post('/navigation_views', { fragment: 'narrow/channel/9-design', is_pinned: true, name: ' Design ' })).status, 200);
    assert.deepEqual(await views(c), [
      { fragment: 'inbox', is_pinned: false },
      { fragment: 'narrow/is/starred', is_pinned: true },
      { fragment: 'narrow/channel/9-design', is_pinned: true, name: 'Design' },
    ]);
  }
  assert.deepEqual(await views(other), []);
  assert.equal((await server.anonymous.get('/navigation_views')).status, 401);
});

test('POST: names required for custom views and refused for built-in ones; no duplicates', async () => {
  const c = await server.createUser();
  await c.post('/navigation_views', { fragment: 'recent', is_pinned: true });
  await c.post('/navigation_views', { fragment: 'narrow/is/mentioned/x', is_pinned: true, name: 'Mine' });
  const cases: [Record<string, unknown>, string][] = [
    [{ fragment: 'feed', is_pinned: true, name: 'My feed' }, 'Built-in views cannot have a custom name.'],
    [{ fragment: 'narrow/is/dm', is_pinned: true }, 'Custom views must have a valid name.'],
    [{ fragment: 'recent', is_pinned: false }, 'Navigation view already exists.'],
    [{ fragment: 'narrow/is/dm', is_pinned: true, name: 'Mine' }, 'Navigation view already exists.'],
    [{ fragment: '  ', is_pinned: true, name: 'Blank' }, 'fragment cannot be blank'],
    [{ fragment: 'narrow/x', is_pinned: true, name: '  ' }, 'name cannot be blank'],
    [{ fragment: 'narrow/x', is_pinned: true, name: 'n'.repeat(101) }, 'name is too long (limit: 100 characters)'],
    [{ fragment: 'narrow/x', is_pinned: 'yes', name: 'X' }, 'is_pinned is not valid JSON'],
  ];
  for (const [params, msg] of cases) {
    const res = await c.post('/navigation_views', params);
    assert.equal(res.status, 400, msg);
    assert.deepEqual(res.body, { result: 'error', msg, code: 'BAD_REQUEST' });
  }
  assert.equal((await c.post('/navigation_views', { fragment: 'narrow/x', name: 'X' })).body.code, 'REQUEST_VARIABLE_MISSING');
  assert.equal((await views(c)).length, 2);
  // Another user may use the same fragment and name.
  assert.equal((await other.post('/navigation_views', { fragment: 'narrow/is/mentioned/x', is_pinned: false, name: 'Mine' })).status, 200);
});

test('PATCH and DELETE by fragment (slashes encoded in the path); own views only', async () => {
  const c = await server.createUser();
  await c.post('/navigation_views', { fragment: 'narrow/is/starred', is_pinned: false });
  await c.post('/navigation_views', { fragment: 'narrow/topic/plans', is_pinned: false, name: 'Plans' });
  await c.post('/navigation_views', { fragment: 'narrow/topic/other', is_pinned: false, name: 'Other' });

  assert.deepEqual((await c.patch(path('narrow/is/starred'), { is_pinned: true })).body, { result: 'success', msg: '' });
  assert.equal((await c.patch(path('narrow/topic/plans'), { name: 'Roadmap', is_pinned: true })).status, 200);
  // Keeping its own name is not a duplicate.
  assert.equal((await c.patch(path('narrow/topic/plans'), { name: 'Roadmap' })).status, 200);
  assert.deepEqual(await views(c), [
    { fragment: 'narrow/is/starred', is_pinned: true },
    { fragment: 'narrow/topic/plans', is_pinned: true, name: 'Roadmap' },
    { fragment: 'narrow/topic/other', is_pinned: false, name: 'Other' },
  ]);

  assert.equal((await c.patch(path('narrow/is/starred'), { name: 'Stars' })).body.msg, 'Built-in views cannot have a custom name.');
  assert.equal((await c.patch(path('narrow/topic/other'), { name: 'Roadmap' })).body.msg, 'Navigation view already exists.');
  const missing = { result: 'error', msg: 'Navigation view does not exist.', code: 'BAD_REQUEST' };
  for (const res of [
    await c.patch(path('narrow/nothing'), { is_pinned: true }),
    await c.delete(path('narrow/nothing')),
    await other.patch(path('narrow/topic/plans'), { is_pinned: false }),
    await other.delete(path('narrow/topic/plans')),
  ]) {
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, missing);
  }
  assert.deepEqual((await c.delete(path('narrow/topic/plans'))).body, { result: 'success', msg: '' });
  assert.deepEqual(
    (await views(c)).map((v: any) => v.fragment),
    ['narrow/is/starred', 'narrow/topic/other'],
  );
  // A single-segment fragment needs no encoding.
  await c.post('/navigation_views', { fragment: 'drafts', is_pinned: true });
  assert.equal((await c.delete('/navigation_views/drafts')).status, 200);
});

test("events reach the user's own clients and keep register state in sync", async () => {
  const c = await server.createUser({ fullName: 'Vi Ews' });
  const viewer = await registerViewer(server, c);
  const bystander = await registerViewer(server, other);
  const queue = (await c.post('/register', { event_types: ['navigation_view'] })).body.queue_id;
  const otherQueue = (await other.post('/register', { event_types: ['navigation_view'] })).body.queue_id;

  await c.post('/navigation_views', { fragment: 'inbox', is_pinned: false });
  await expectStateInSync(server, viewer, 'add built-in');
  await c.post('/navigation_views', { fragment: 'narrow/dm/5', is_pinned: true, name: 'Friend' });
  await expectStateInSync(server, viewer, 'add custom');
  await c.patch(path('narrow/dm/5'), { name: 'Best friend', is_pinned: false });
  await expectStateInSync(server, viewer, 'update');
  await c.patch(path('narrow/dm/5'), { is_pinned: false });
  await c.delete(path('inbox'));
  await expectStateInSync(server, viewer, 'remove');
  await expectStateInSync(server, bystander, 'bystander');
  assert.deepEqual(viewer.state.navigation_views, [{ fragment: 'narrow/dm/5', is_pinned: false, name: 'Best friend' }]);

  assert.deepEqual(await eventsOf(c, queue), [
    { type: 'navigation_view', op: 'add', navigation_view: { fragment: 'inbox', is_pinned: false } },
    { type: 'navigation_view', op: 'add', navigation_view: { fragment: 'narrow/dm/5', is_pinned: true, name: 'Friend' } },
    { type: 'navigation_view', op: 'update', fragment: 'narrow/dm/5', data: { name: 'Best friend', is_pinned: false } },
    // The update that changed nothing sent nothing.
    { type: 'navigation_view', op: 'remove', fragment: 'inbox' },
  ]);
  assert.deepEqual(await eventsOf(other, otherQueue), []);
});

test('concurrent requests for one fragment or one name: one is made, the others are told it exists', async () => {
  const c = await server.createUser();
  const same = await Promise.all(Array.from({ length: 5 }, () => c.post('/navigation_views', { fragment: 'narrow/is/dm', is_pinned: true, name: 'DMs' })));
  const sameName = await Promise.all(
    Array.from({ length: 5 }, (_, i) => c.post('/navigation_views', { fragment: `narrow/topic/t${i}`, is_pinned: true, name: 'Twin' })),
  );
  for (const results of [same, sameName]) {
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 400, 400, 400, 400], JSON.stringify(results.map((r) => r.body)));
    for (const r of results.filter((r) => r.status === 400)) assert.equal(r.body.msg, 'Navigation view already exists.');
  }
  assert.deepEqual((await views(c)).map((v: any) => v.name).sort(), ['DMs', 'Twin']);
});
