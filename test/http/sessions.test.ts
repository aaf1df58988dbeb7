// The web client's sessions (issue 16): login and logout under /accounts, the
// API under /json with the session cookie, cross-site request forgery checks,
// sessions in the database (they survive a restart), password reset through
// the outbox.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from '../support/server.ts';
import { Browser, type BrowserRequestOptions } from '../support/browser.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer({ rateLimit: { perUser: 100_000, perIp: 100_000, windowSeconds: 60, loginFailures: 3, loginWindowSeconds: 1800 } });
});
after(() => server.close());

const cookieLine = (b: Browser, name: string) => b.lastSetCookies.find((l) => l.startsWith(`${name}=`)) ?? '';

test('login: right password sets HttpOnly SameSite=Lax session and a readable csrftoken', async () => {
  const b = new Browser(server);
  const res = await b.post('/accounts/login', { username: OWNER_EMAIL, password: OWNER_PASSWORD });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { result: 'success', msg: '', user_id: server.owner.id });
  const session = cookieLine(b, 'sessionid');
  const csrf = cookieLine(b, 'csrftoken');
  assert.match(session, /; HttpOnly/);
  assert.match(session, /; SameSite=Lax/);
  assert.match(session, /; Path=\//);
  assert.doesNotMatch(session, /Secure/, 'plain http: no Secure flag');
  assert.doesNotMatch(csrf, /HttpOnly/, 'page scripts read the CSRF token');
  assert.match(csrf, /; SameSite=Lax/);
  // No API key reaches the page.
  assert.doesNotMatch(JSON.stringify(res.body), new RegExp(server.owner.apiKey!));
  // A JSON body works too.
  const j = new Browser(server);
  assert.equal((await j.post('/accounts/login', { username: OWNER_EMAIL, password: OWNER_PASSWORD }, { json: true })).status, 200);
  assert.ok(j.cookies.get('sessionid'));
});

test('login: wrong password, unknown user, deactivated user, rate limit', async () => {
  const user = await server.createUser({ password: 'member-password-1' });
  const b = new Browser(server);
  const wrong = await b.post('/accounts/login', { username: user.email, password: 'nope-nope-nope' });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.code, 'AUTHENTICATION_FAILED');
  assert.equal(b.cookies.size, 0, 'no cookie on failure');
  const unknown = await b.post('/accounts/login', { username: 'nobody@example.com', password: 'whatever-1' });
  assert.equal(unknown.body.code, 'AUTHENTICATION_FAILED');

  assert.equal((await server.owner.delete(`/users/${user.id}`)).status, 200);
  const deactivated = await b.post('/accounts/login', { username: user.email, password: 'member-password-1' });
  assert.equal(deactivated.status, 401);
  assert.equal(deactivated.body.code, 'USER_DEACTIVATED');

  const target = await server.createUser({ password: 'limited-password-1' });
  for (let i = 0; i < 3; i++) await b.post('/accounts/login', { username: target.email, password: 'wrong-wrong-1' });
  const limited = await b.post('/accounts/login', { username: target.email, password: 'limited-password-1' });
  assert.equal(limited.status, 429);
  assert.equal(limited.body.code, 'RATE_LIMIT_HIT');
  assert.equal(b.cookies.size, 0);
});

test('/json with the session is the API; without it 401 in the envelope, no Basic challenge', async () => {
  const anon = new Browser(server);
  const refused = await anon.get('/json/users/me');
  assert.equal(refused.status, 401);
  assert.deepEqual(refused.body, { result: 'error', msg: 'Not logged in: API authentication or user session required', code: 'UNAUTHORIZED' });
  assert.equal(refused.headers['www-authenticate'], 'Session realm="zulip"');
  // Basic auth does not open /json (the browser's API is the session's).
  const basic = await server.app.inject({
    method: 'GET',
    url: '/json/users/me',
    headers: { host: 'confab.test', authorization: `Basic ${Buffer.from(`${OWNER_EMAIL}:${server.owner.apiKey}`).toString('base64')}` },
  });
  assert.equal(basic.statusCode, 401);

  const b = new Browser(server);
  await b.login(OWNER_EMAIL, OWNER_PASSWORD);
  const me = await b.get('/json/users/me');
  assert.equal(me.status, 200);
  assert.equal(me.body.user_id, server.owner.id);
  const changed = await b.patch('/json/settings', { full_name: 'Browser Owner' });
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
  assert.equal((await server.owner.get('/users/me')).body.full_name, 'Browser Owner');
  // Unknown endpoints under /json answer like the API's.
  const missing = await b.get('/json/no/such/endpoint');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.result, 'error');
});

test('CSRF: a state change without X-CSRFToken, with a wrong one, or from another site is refused', async () => {
  const b = new Browser(server);
  await b.login(OWNER_EMAIL, OWNER_PASSWORD);
  const before = (await b.get('/json/users/me')).body.full_name;
  const attempts: { opts: BrowserRequestOptions; msg: string }[] = [
    { opts: { noCsrf: true }, msg: 'CSRF error: CSRF token missing.' },
    { opts: { headers: { 'x-csrftoken': 'x'.repeat(32) } }, msg: 'CSRF error: CSRF token incorrect.' },
    { opts: { headers: { origin: 'https://evil.example' } }, msg: 'CSRF error: request from another site.' },
    { opts: { noCsrf: true, headers: { origin: 'null' } }, msg: 'CSRF error: request from another site.' },
  ];
  for (const { opts, msg } of attempts) {
    const res = await b.patch('/json/settings', { full_name: 'Forged' }, opts);
    assert.equal(res.status, 403, msg);
    assert.deepEqual(res.body, { result: 'error', msg, code: 'CSRF_FAILED' });
  }
  assert.equal((await b.get('/json/users/me')).body.full_name, before, 'nothing changed');
  // Reads need no token.
  assert.equal((await b.get('/json/users/me', {}, { noCsrf: true })).status, 200);
  // Login from another site's page is refused too.
  const other = new Browser(server);
  const forgedLogin = await other.post('/accounts/login', { username: OWNER_EMAIL, password: OWNER_PASSWORD }, { headers: { origin: 'https://evil.example' } });
  assert.equal(forgedLogin.status, 403);
  assert.equal(other.cookies.size, 0);
});

test('logout ends the session: the old cookie no longer works', async () => {
  const b = new Browser(server);
  await b.login(OWNER_EMAIL, OWNER_PASSWORD);
  const stolen = b.cookieHeader();
  const noToken = await b.post('/accounts/logout', {}, { noCsrf: true });
  assert.equal(noToken.status, 403, 'logout is CSRF-checked');
  const out = await b.post('/accounts/logout');
  assert.equal(out.status, 200);
  assert.match(cookieLine(b, 'sessionid'), /Max-Age=0/);
  assert.equal(b.cookies.size, 0);
  const replay = await server.app.inject({ method: 'GET', url: '/json/users/me', headers: { host: 'confab.test', cookie: stolen } });
  assert.equal(replay.statusCode, 401);
  assert.equal((await b.post('/accounts/logout')).status, 401, 'no session left to end');
});

test('a session is for its own organization only', async () => {
  const other = await server.createOrganization('elsewhere');
  const b = new Browser(server, 'elsewhere.confab.test');
  await b.login(other.email!, 'elsewhere-password-1');
  assert.equal((await b.get('/json/users/me')).body.user_id, other.id);
  const res = await server.app.inject({ method: 'GET', url: '/json/users/me', headers: { host: 'confab.test', cookie: b.cookieHeader() } });
  assert.equal(res.statusCode, 401);
});

test('a deactivated account loses its session', async () => {
  const user = await server.createUser({ password: 'soon-gone-password-1' });
  const b = new Browser(server);
  await b.login(user.email!, 'soon-gone-password-1');
  assert.equal((await b.get('/json/users/me')).status, 200);
  await server.owner.delete(`/users/${user.id}`);
  assert.equal((await b.get('/json/users/me')).status, 401);
});

test('avatars are served to the session', async () => {
  const b = new Browser(server);
  assert.equal((await b.get(`/avatar/${server.owner.id}`)).status, 401);
  await b.login(OWNER_EMAIL, OWNER_PASSWORD);
  const res = await b.get(`/avatar/${server.owner.id}`);
  assert.equal(res.status, 302);
});

test('sessions live in the database: they survive a restart', async () => {
  // On PGlite the database lives in the data directory, as with `npm start`.
  const dataDir = mkdtempSync(join(tmpdir(), 'confab-sessions-'));
  const local = await startTestServer({ dataDir });
  const b = new Browser(local);
  await b.login(OWNER_EMAIL, OWNER_PASSWORD);
  const restarted = await local.restart();
  try {
    const again = new Browser(restarted);
    for (const [k, v] of b.cookies) again.cookies.set(k, v);
    const me = await again.get('/json/users/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.email, OWNER_EMAIL);
    assert.equal((await again.patch('/json/settings', { full_name: 'After Restart' })).status, 200);
  } finally {
    await restarted.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

const linkIn = (text: string): string => {
  const m = /(http:\/\/\S+\/accounts\/password\/reset\/([A-Za-z0-9]+))/.exec(text);
  assert.ok(m, `no reset link in ${text}`);
  return m[2];
};

test('password reset: always success; the emailed link works once, ends sessions, and expires', async () => {
  const user = await server.createUser({ email: 'forgetful@example.com', password: 'old-password-1' });
  const b = new Browser(server);
  await b.login('forgetful@example.com', 'old-password-1');
  const before = (await server.outbox()).length;
  const anon = new Browser(server);
  const unknown = await anon.post('/accounts/password/reset', { email: 'nobody-here@example.com' });
  assert.deepEqual(unknown.body, { result: 'success', msg: '' });
  assert.equal((await server.outbox()).length, before, 'no email for an unknown address');

  const asked = await anon.post('/accounts/password/reset', { email: 'Forgetful@example.com' });
  assert.deepEqual(asked.body, { result: 'success', msg: '' });
  const mails = (await server.outbox()).slice(before);
  assert.equal(mails.length, 1);
  assert.equal(mails[0].to, 'forgetful@example.com');
  const token = linkIn(mails[0].text);
  assert.ok(mails[0].text.includes(`http://confab.test/accounts/password/reset/${token}`));

  const weak = await anon.post(`/accounts/password/reset/${token}`, { new_password: 'a' });
  assert.equal(weak.status, 400);
  const done = await anon.post(`/accounts/password/reset/${token}`, { new_password: 'new-password-1' });
  assert.equal(done.status, 200, JSON.stringify(done.body));
  const again = await anon.post(`/accounts/password/reset/${token}`, { new_password: 'third-password-1' });
  assert.equal(again.status, 400);
  assert.equal(again.body.msg, 'This password reset link is invalid or has already been used.');
  assert.equal((await b.get('/json/users/me')).status, 401, 'sessions end with the reset');
  assert.equal((await new Browser(server).post('/accounts/login', { username: user.email, password: 'old-password-1' })).status, 401);
  await new Browser(server).login(user.email!, 'new-password-1');

  // Expired links say so.
  await anon.post('/accounts/password/reset', { email: 'forgetful@example.com' });
  const late = linkIn((await server.outbox()).at(-1)!.text);
  await server.svc.db
    .updateTable('password_reset_tokens')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('used_at', 'is', null)
    .execute();
  const expired = await anon.post(`/accounts/password/reset/${late}`, { new_password: 'late-password-1' });
  assert.equal(expired.status, 400);
  assert.equal(expired.body.msg, 'This password reset link has expired. Ask for a new one.');
  await new Browser(server).login(user.email!, 'new-password-1');
});
