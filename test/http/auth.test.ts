// Authentication, password login, server settings, organizations by subdomain,
// and rate limits (spec "Authentication", digest 1.8, 1.25, 5.3, 5.4).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from '../support/server.ts';
import { createRealm, setRealmDeactivated } from '../../src/realm/actions.ts';
import { SVC_FEATURE_LEVEL, SVC_VERSION } from '../../src/version.ts';

let server: TestServer;
let second: Client;
before(async () => {
  server = await startTestServer({ rateLimit: { perUser: 100_000, perIp: 100_000, windowSeconds: 60, loginFailures: 5, loginWindowSeconds: 1800 } });
  const { owner } = await createRealm(server.svc, {
    subdomain: 'second',
    name: 'Second Org',
    owner: { email: 'boss@second.example', fullName: 'Second Boss', password: 'second-pass-1' },
  });
  second = new Client(server, owner.id, owner.delivery_email, owner.api_key, 'second.confab.test');
});
after(() => server.close());

const basic = (s: string) => ({ authorization: `Basic ${Buffer.from(s).toString('base64')}` });

test('no credentials: 401 UNAUTHORIZED with the Basic challenge', async () => {
  const res = await server.anonymous.get('/users/me');
  assert.equal(res.status, 401);
  assert.deepEqual(res.body, {
    result: 'error',
    msg: 'Not logged in: API authentication or user session required',
    code: 'UNAUTHORIZED',
  });
  assert.equal(res.headers['www-authenticate'], 'Basic realm="zulip"');
});

test('bad credentials each get their 401', async () => {
  const cases: [Record<string, string>, number, string][] = [
    [{ authorization: 'Bearer abc' }, 400, 'This endpoint requires HTTP basic authentication.'],
    [basic('no-colon-here'), 401, 'Invalid authorization header for basic auth'],
    [basic(`${OWNER_EMAIL}:short`), 401, 'Malformed API key'],
    [basic(`${OWNER_EMAIL}:${'a'.repeat(32)}`), 401, 'Invalid API key'],
    [basic(`someone-else@example.com:${server.owner.apiKey}`), 401, 'Invalid API key'],
  ];
  for (const [headers, status, msg] of cases) {
    const res = await server.anonymous.get('/users/me', {}, headers);
    assert.equal(res.status, status, msg);
    assert.equal(res.body.msg, msg);
    assert.equal(res.body.code, status === 401 ? 'UNAUTHORIZED' : 'BAD_REQUEST');
    if (status === 401) assert.equal(res.headers['www-authenticate'], 'Basic realm="zulip"');
  }
  // The username is compared without regard to case, and the key's whitespace is ignored.
  const ok = await server.anonymous.get('/users/me', {}, basic(`${OWNER_EMAIL.toUpperCase()}: ${server.owner.apiKey} `));
  assert.equal(ok.status, 200);
});

test('a deactivated user cannot authenticate', async () => {
  const user = await server.createUser();
  assert.equal((await user.get('/users/me')).status, 200);
  assert.equal((await server.owner.delete(`/users/${user.id}`)).status, 200);
  const res = await user.get('/users/me');
  assert.equal(res.status, 401);
  assert.equal(res.body.code, 'UNAUTHORIZED');
  assert.equal(res.body.msg, 'Account is deactivated');
});

test('credentials work only at their own organization', async () => {
  const mine = await second.get('/users/me');
  assert.equal(mine.status, 200);
  assert.equal(mine.body.email, 'boss@second.example');
  const elsewhere = new Client(server, second.id, second.email, second.apiKey);
  const res = await elsewhere.get('/users/me');
  assert.equal(res.status, 401);
  assert.equal(res.body.msg, 'Account is not associated with this subdomain');
});

test('organizations never see each other', async () => {
  const users = await second.get('/users');
  assert.deepEqual(
    users.body.members.map((u: any) => u.email),
    ['boss@second.example'],
  );
  const other = await second.get(`/users/${server.owner.id}`);
  assert.equal(other.status, 400);
  assert.equal(other.body.msg, 'No such user');
  const byEmail = await second.get(`/users/${OWNER_EMAIL}`);
  assert.equal(byEmail.body.msg, 'No such user');
  const patch = await second.patch(`/users/${server.owner.id}`, { full_name: 'Hijacked' });
  assert.equal(patch.status, 400);
  assert.notEqual((await server.owner.get('/users/me')).body.full_name, 'Hijacked');
});

test('fetch_api_key returns the key for the right password', async () => {
  const res = await server.anonymous.post('/fetch_api_key', { username: OWNER_EMAIL, password: OWNER_PASSWORD });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { result: 'success', msg: '', api_key: server.owner.apiKey, email: OWNER_EMAIL, user_id: server.owner.id });
  const key = res.body.api_key;
  assert.equal((await new Client(server, res.body.user_id, OWNER_EMAIL, key).get('/users/me')).status, 200);
});

test('fetch_api_key failures', async () => {
  const wrong = await server.anonymous.post('/fetch_api_key', { username: OWNER_EMAIL, password: 'nope-nope' });
  assert.equal(wrong.status, 401);
  assert.deepEqual(wrong.body, { result: 'error', msg: 'Your username or password is incorrect', code: 'AUTHENTICATION_FAILED' });
  assert.equal(wrong.headers['www-authenticate'], undefined);
  const unknown = await server.anonymous.post('/fetch_api_key', { username: 'ghost@example.com', password: 'whatever1' });
  assert.equal(unknown.status, 401);
  assert.equal(unknown.body.code, 'AUTHENTICATION_FAILED');
  const notEmail = await server.anonymous.post('/fetch_api_key', { username: 'ghost', password: 'whatever1' });
  assert.equal(notEmail.status, 400);
  assert.equal(notEmail.body.msg, 'Enter a valid email address.');
  const missing = await server.anonymous.post('/fetch_api_key', { username: OWNER_EMAIL });
  assert.equal(missing.body.code, 'REQUEST_VARIABLE_MISSING');
  assert.equal(missing.body.var_name, 'password');
  const nowhere = await new Client(server, 0, undefined, undefined, 'nowhere.confab.test').post('/fetch_api_key', {
    username: OWNER_EMAIL,
    password: OWNER_PASSWORD,
  });
  assert.equal(nowhere.status, 404);
  assert.equal(nowhere.body.code, 'NONEXISTENT_SUBDOMAIN');
  // The root organization's password does not open the second organization.
  const cross = await new Client(server, 0, undefined, undefined, 'second.confab.test').post('/fetch_api_key', {
    username: OWNER_EMAIL,
    password: OWNER_PASSWORD,
  });
  assert.equal(cross.status, 401);
});

test('fetch_api_key for a deactivated user, and in a deactivated organization', async () => {
  const user = await server.createUser({ email: 'leaving@example.com', password: 'leaving-pass-1' });
  await server.owner.delete(`/users/${user.id}`);
  const res = await server.anonymous.post('/fetch_api_key', { username: 'leaving@example.com', password: 'leaving-pass-1' });
  assert.equal(res.status, 401);
  assert.deepEqual(res.body, { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' });

  const { realm, owner } = await createRealm(server.svc, {
    subdomain: 'closing',
    name: 'Closing Org',
    owner: { email: 'boss@closing.example', fullName: 'Closing Boss', password: 'closing-pass-1' },
  });
  await setRealmDeactivated(server.svc, realm.id, true);
  const host = new Client(server, 0, undefined, undefined, 'closing.confab.test');
  const login = await host.post('/fetch_api_key', { username: 'boss@closing.example', password: 'closing-pass-1' });
  assert.equal(login.status, 401);
  assert.deepEqual(login.body, { result: 'error', msg: 'This organization has been deactivated', code: 'REALM_DEACTIVATED' });
  const api = await new Client(server, owner.id, owner.delivery_email, owner.api_key, 'closing.confab.test').get('/users/me');
  assert.equal(api.status, 401);
  assert.equal(api.body.msg, 'This organization has been deactivated');
});

test('five failed logins for a username lock it for the window, even with the right password', async () => {
  const user = await server.createUser({ email: 'guessed@example.com', password: 'right-pass-1' });
  for (let i = 0; i < 5; i++) {
    const res = await server.anonymous.post('/fetch_api_key', { username: 'guessed@example.com', password: `wrong-${i}` });
    assert.equal(res.status, 401);
  }
  const locked = await server.anonymous.post('/fetch_api_key', { username: 'Guessed@Example.com', password: 'right-pass-1' });
  assert.equal(locked.status, 429);
  assert.equal(locked.body.code, 'RATE_LIMIT_HIT');
  assert.equal(locked.body.msg, 'API usage exceeded rate limit');
  assert.ok(Number(locked.headers['retry-after']) > 1700);
  // Other usernames are unaffected.
  const other = await server.anonymous.post('/fetch_api_key', { username: OWNER_EMAIL, password: OWNER_PASSWORD });
  assert.equal(other.status, 200);
  assert.ok(user.id > 0);
});

test('server_settings describes the server and, for a known host, the organization', async () => {
  const res = await server.anonymous.get('/server_settings');
  assert.equal(res.status, 200);
  assert.equal(res.body.svc_feature_level, SVC_FEATURE_LEVEL);
  assert.equal(res.body.svc_version, SVC_VERSION);
  assert.equal(res.body.authentication_methods.password, true);
  assert.equal(res.body.push_notifications_enabled, false);
  assert.equal(res.body.is_incompatible, false);
  assert.equal(res.body.realm_name, 'Test Organization');
  assert.equal(res.body.realm_url, 'http://confab.test');
  assert.equal(res.body.realm_uri, 'http://confab.test');
  assert.equal(res.body.email_auth_enabled, true);
  assert.equal(res.body.require_email_format_usernames, true);
  assert.equal(res.body.realm_web_public_access_enabled, false);
  assert.deepEqual(res.body.external_authentication_methods, []);
  assert.equal(typeof res.body.realm_icon, 'string');
  // The reference's names beside the spec's (COMPAT_NAMES, on by default; docs/DECISIONS.md).
  assert.equal(res.body.zulip_feature_level, SVC_FEATURE_LEVEL);

  const other = await new Client(server, 0, undefined, undefined, 'second.confab.test').get('/server_settings');
  assert.equal(other.body.realm_name, 'Second Org');
  assert.equal(other.body.realm_url, 'http://second.confab.test');
  const nowhere = await new Client(server, 0, undefined, undefined, 'nowhere.confab.test').get('/server_settings');
  assert.equal(nowhere.status, 400);
  assert.equal(nowhere.body.msg, 'Invalid subdomain');
  const incompatible = await server.anonymous.get('/server_settings', {}, { 'user-agent': 'ZulipInvalid/1.0' });
  assert.equal(incompatible.body.is_incompatible, true);
  const head = await server.anonymous.request('HEAD', '/server_settings');
  assert.equal(head.status, 200);
  const post = await server.anonymous.post('/server_settings');
  assert.equal(post.status, 405);
});

test('per-user rate limit: 429 RATE_LIMIT_HIT with Retry-After and X-RateLimit headers', async () => {
  const limited = await startTestServer({ rateLimit: { perUser: 3, perIp: 100, windowSeconds: 60, loginFailures: 5, loginWindowSeconds: 1800 } });
  try {
    const first = await limited.owner.get('/users/me');
    assert.equal(first.headers['x-ratelimit-limit'], '3');
    assert.equal(first.headers['x-ratelimit-remaining'], '2');
    assert.ok(Number(first.headers['x-ratelimit-reset']) >= Math.floor(Date.now() / 1000));
    await limited.owner.get('/users/me');
    const third = await limited.owner.get('/users/me');
    assert.equal(third.headers['x-ratelimit-remaining'], '0');
    const refused = await limited.owner.get('/users/me');
    assert.equal(refused.status, 429);
    assert.equal(refused.body.result, 'error');
    assert.equal(refused.body.code, 'RATE_LIMIT_HIT');
    assert.equal(refused.body.msg, 'API usage exceeded rate limit');
    assert.equal(typeof refused.body['retry-after'], 'number');
    assert.ok(refused.body['retry-after'] > 0 && refused.body['retry-after'] <= 60);
    assert.equal(Number(refused.headers['retry-after']), refused.body['retry-after']);
    // The limit is per user: someone else is still served.
    const other = await limited.createUser();
    assert.equal((await other.get('/users/me')).status, 200);
  } finally {
    await limited.close();
  }
});
