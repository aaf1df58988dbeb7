// E2EE push registration: POST /mobile_push/register (spec endpoint 15, digest
// 1.15), the `push_device` event and register's `push_devices`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE, type Role } from '../../src/users/roles.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { createUserAsOperator } from '../../src/users/actions.ts';

/** A server with a push service configured, and one without. */
let server: TestServer;
let unconfigured: TestServer;
before(async () => {
  [server, unconfigured] = await Promise.all([startTestServer({ pushServiceUrl: 'https://push.example.com' }), startTestServer()]);
});
after(() => Promise.all([server.close(), unconfigured.close()]));

const KEY = Buffer.alloc(32, 7).toString('base64');
const registration = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  token_kind: 'fcm',
  push_account_id: 2408,
  push_public_key: KEY,
  bouncer_public_key: Buffer.alloc(32, 9).toString('base64'),
  encrypted_push_registration: Buffer.from('{"token":"abc","token_kind":"fcm","timestamp":1}').toString('base64'),
  ...over,
});

async function eventsOf(c: Client, queueId: string) {
  const res = await c.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body.events as Record<string, any>[]).filter((e) => e.type !== 'heartbeat').map(({ id: _id, ...e }) => e);
}

const devices = async (s: TestServer, userId: number) =>
  s.svc.db.selectFrom('push_devices').selectAll().where('user_id', '=', userId).orderBy('push_account_id').execute();

test('without a push service: PUSH_SERVICE_NOT_CONFIGURED, nothing stored', async () => {
  const c = await unconfigured.createUser();
  const res = await c.post('/mobile_push/register', registration());
  assert.equal(res.status, 400);
  assert.deepEqual(res.body, {
    result: 'error',
    msg: 'Server is not configured to use push notification service.',
    code: 'PUSH_SERVICE_NOT_CONFIGURED',
  });
  assert.deepEqual(await devices(unconfigured, c.id), []);
  const state = (await c.post('/register', { fetch_event_types: ['push_device'] })).body;
  assert.deepEqual(state.push_devices, {});
});

test('every field is validated', async () => {
  const c = await server.createUser();
  const cases: [Record<string, unknown>, string][] = [
    [{ token_kind: 'gcm' }, 'Invalid token_kind'],
    [{ push_account_id: '"2408"' }, 'push_account_id is not an integer'],
    [{ push_account_id: 1.5 }, 'push_account_id is not an integer'],
    [{ push_account_id: 2 ** 60 }, 'push_account_id is too large'],
    [{ push_public_key: 'not base64!' }, 'Invalid push_public_key'],
    [{ push_public_key: 'YWJj' + '=' }, 'Invalid push_public_key'],
    [{ push_public_key: '' }, 'push_public_key cannot be blank'],
    [{ bouncer_public_key: 'a-b_c' }, 'Invalid bouncer_public_key'],
    [{ encrypted_push_registration: 'abc' }, 'Invalid encrypted_push_registration'],
    [{ encrypted_push_registration: 'A'.repeat(10004) }, 'encrypted_push_registration is too long (limit: 10000 characters)'],
    [{ push_public_key: 'A'.repeat(1004) }, 'push_public_key is too long (limit: 1000 characters)'],
  ];
  for (const [over, msg] of cases) {
    const res = await c.post('/mobile_push/register', registration(over));
    assert.equal(res.status, 400, msg);
    assert.deepEqual(res.body, { result: 'error', msg, code: 'BAD_REQUEST' });
  }
  for (const name of ['token_kind', 'push_account_id', 'push_public_key', 'bouncer_public_key', 'encrypted_push_registration']) {
    const { [name]: _dropped, ...rest } = registration();
    const res = await c.post('/mobile_push/register', rest);
    assert.deepEqual(res.body, { result: 'error', msg: `Missing '${name}' argument`, code: 'REQUEST_VARIABLE_MISSING', var_name: name });
  }
  assert.deepEqual(await devices(server, c.id), []);
});

test('every human role may register; bots and spectators may not', async () => {
  for (const role of [ROLE.GUEST, ROLE.MEMBER, ROLE.MODERATOR, ROLE.ADMINISTRATOR, ROLE.OWNER] as Role[]) {
    const c = await server.createUser({ role });
    const res = await c.post('/mobile_push/register', registration({ token_kind: 'apns' }));
    assert.deepEqual(res.body, { result: 'success', msg: '' }, `role ${role}`);
    const [row] = await devices(server, c.id);
    assert.equal(row.token_kind, 'apns');
    assert.equal(row.status, 'pending');
  }
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const bot = await createUserAsOperator(server.svc, realm, {
    email: 'push-bot@example.com',
    fullName: 'Push Bot',
    password: null,
    role: ROLE.MEMBER,
    isBot: true,
    botType: 1,
  });
  const res = await (await server.clientFor(bot.id)).post('/mobile_push/register', registration());
  assert.deepEqual(res.body, { result: 'error', msg: 'This endpoint does not accept bot requests.', code: 'BAD_REQUEST' });
  assert.equal((await server.anonymous.post('/mobile_push/register', registration())).status, 401);
});

test('a registration is stored, reported by a push_device event and in register; repeating it changes nothing', async () => {
  const c = await server.createUser({ fullName: 'Pho Ne' });
  const other = await server.createUser();
  const viewer = await registerViewer(server, c);
  const queue = (await c.post('/register', { event_types: ['push_device'] })).body.queue_id;
  const otherQueue = (await other.post('/register', { event_types: ['push_device'] })).body.queue_id;

  assert.equal((await c.post('/mobile_push/register', registration())).status, 200);
  await expectStateInSync(server, viewer, 'registered');
  assert.deepEqual(viewer.state.push_devices, { '2408': { status: 'pending', error_code: null } });
  assert.deepEqual(await eventsOf(c, queue), [{ type: 'push_device', push_account_id: '2408', status: 'pending', error_code: null }]);
  assert.deepEqual(await eventsOf(other, otherQueue), []);

  const [row] = await devices(server, c.id);
  assert.equal(row.push_account_id, 2408);
  assert.equal(row.push_public_key, KEY);
  assert.equal(row.token_kind, 'fcm');

  // The same push_account_id again: success, no change, no event.
  assert.equal((await c.post('/mobile_push/register', registration({ push_public_key: Buffer.alloc(32, 1).toString('base64') }))).status, 200);
  assert.equal((await devices(server, c.id))[0].push_public_key, KEY);
  assert.equal((await eventsOf(c, queue)).length, 1);

  // Another account id is another registration.
  assert.equal((await c.post('/mobile_push/register', registration({ push_account_id: 5555 }))).status, 200);
  await expectStateInSync(server, viewer, 'second');
  assert.deepEqual(Object.keys(viewer.state.push_devices).sort(), ['2408', '5555']);

  // A registration that failed at the push service may be tried again.
  await server.svc.db
    .updateTable('push_devices')
    .set({ status: 'failed', error_code: 'INVALID_BOUNCER_PUBLIC_KEY' })
    .where('user_id', '=', c.id)
    .where('push_account_id', '=', 5555)
    .execute();
  const retry = (await c.post('/register', { fetch_event_types: ['push_device'], event_types: ['push_device'] })).body;
  assert.deepEqual(retry.push_devices['5555'], { status: 'failed', error_code: 'INVALID_BOUNCER_PUBLIC_KEY' });
  assert.equal((await c.post('/mobile_push/register', registration({ push_account_id: 5555 }))).status, 200);
  assert.deepEqual(await eventsOf(c, retry.queue_id), [{ type: 'push_device', push_account_id: '5555', status: 'pending', error_code: null }]);
  assert.deepEqual((await c.post('/register', { fetch_event_types: ['push_device'] })).body.push_devices['5555'], { status: 'pending', error_code: null });
  // Others' registrations are not theirs.
  assert.deepEqual((await other.post('/register', { fetch_event_types: ['push_device'] })).body.push_devices, {});
});

test('concurrent requests for one registration: every one succeeds, one is stored and announced', async () => {
  const c = await server.createUser();
  const queue = (await c.post('/register', { event_types: ['push_device'] })).body.queue_id;
  const results = await Promise.all(Array.from({ length: 6 }, () => c.post('/mobile_push/register', registration({ push_account_id: 777 }))));
  for (const res of results) assert.deepEqual(res.body, { result: 'success', msg: '' });
  assert.equal((await devices(server, c.id)).length, 1);
  assert.deepEqual(await eventsOf(c, queue), [{ type: 'push_device', push_account_id: '777', status: 'pending', error_code: null }]);
});
