// Serving the web client (issue 16): its files with their types and cache
// headers, index.html for the app's pages, a clear page when it is not built;
// and the invitation link, followed from the outbox to a signed-in account.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { OWNER_EMAIL, OWNER_PASSWORD, ok, startTestServer, type TestServer } from '../support/server.ts';
import { Browser } from '../support/browser.ts';

const INDEX = '<!doctype html><html><head><script type="module" src="/assets/index-3f2a1b.js"></script></head><body></body></html>';
const SCRIPT = `console.log(${JSON.stringify('confab '.repeat(400))});\n`;

let server: TestServer;
let dist: string;
before(async () => {
  dist = mkdtempSync(join(tmpdir(), 'confab-dist-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), INDEX);
  writeFileSync(join(dist, 'assets', 'index-3f2a1b.js'), SCRIPT);
  writeFileSync(join(dist, 'assets', 'logo-99aa.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(dist, 'favicon.ico'), Buffer.from([0, 0, 1, 0]));
  server = await startTestServer({ webClientDir: dist });
});
after(async () => {
  await server.close();
  rmSync(dist, { recursive: true, force: true });
});

const get = (path: string, headers: Record<string, string> = {}) =>
  server.app.inject({ method: 'GET', url: path, headers: { host: 'confab.test', ...headers } });

test('index.html for the root and every page of the app, never cached stale', async () => {
  for (const path of ['/', '/login', '/join/abcdefghijklmnopqrstuvwx/', '/accounts/password/reset/Abc123', '/narrow/channel/1-general', '/settings?x=1']) {
    const res = await get(path);
    assert.equal(res.statusCode, 200, path);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8', path);
    assert.equal(res.headers['cache-control'], 'no-cache', path);
    assert.equal(res.body, INDEX, path);
  }
  const head = await server.app.inject({ method: 'HEAD', url: '/login', headers: { host: 'confab.test' } });
  assert.equal(head.statusCode, 200);
  assert.equal(head.body, '');
});

test('files with their content types; hashed assets cached for a year; gzip when asked', async () => {
  const js = await get('/assets/index-3f2a1b.js');
  assert.equal(js.statusCode, 200);
  assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
  assert.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.equal(js.headers['x-content-type-options'], 'nosniff');
  assert.equal(js.body, SCRIPT);
  const zipped = await get('/assets/index-3f2a1b.js', { 'accept-encoding': 'gzip, br' });
  assert.equal(zipped.headers['content-encoding'], 'gzip');
  assert.ok(zipped.rawPayload.length < SCRIPT.length / 4);
  assert.equal(gunzipSync(zipped.rawPayload).toString(), SCRIPT);
  assert.equal((await get('/assets/logo-99aa.svg')).headers['content-type'], 'image/svg+xml');
  const icon = await get('/favicon.ico');
  assert.equal(icon.headers['content-type'], 'image/x-icon');
  assert.equal(icon.headers['cache-control'], 'no-cache', 'an unhashed name is asked again');
});

test('misses: a missing asset is 404 (not the page); the server paths keep their JSON errors; no escape from the folder', async () => {
  const missing = await get('/assets/gone-000.js');
  assert.equal(missing.statusCode, 404);
  assert.doesNotMatch(missing.body, /<html/);
  const api = await get('/api/v1/no/such/thing');
  assert.equal(api.statusCode, 404);
  assert.equal(JSON.parse(api.body).result, 'error');
  const json = await get('/json/no/such/thing');
  assert.equal(json.statusCode, 404);
  assert.equal(JSON.parse(json.body).result, 'error');
  for (const path of ['/assets/..%2f..%2fpackage.json', '/%2e%2e/%2e%2e/etc/passwd', '/assets/%00.js']) {
    const res = await get(path);
    assert.ok(res.statusCode === 404 || res.body === INDEX, `${path}: ${res.statusCode}`);
    assert.doesNotMatch(res.body, /root:|"dependencies"/);
  }
  // The API's own methods on /accounts paths still answer as the API.
  const put = await server.app.inject({ method: 'PUT', url: '/accounts/login', headers: { host: 'confab.test' } });
  assert.equal(put.statusCode, 404);
  assert.equal(JSON.parse(put.body).result, 'error');
});

test("the emoji data register points to: every emoji's names, canonical first, without credentials", async () => {
  const url = ok(await server.owner.post('/register', { fetch_event_types: ['realm'] })).server_emoji_data_url;
  assert.equal(url, '/static/generated/emoji/emoji_api.json');
  const res = await get(url);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.match(String(res.headers['cache-control']), /^public, max-age=\d+$/);
  const table = res.json().code_to_names as Record<string, string[]>;
  assert.deepEqual(Object.keys(res.json()), ['code_to_names']);
  assert.deepEqual(table['1f600']!.slice(0, 2), ['grinning', 'happy']);
  assert.equal(table['1f384']![0], 'holiday_tree');
  assert.deepEqual(table['1f44d']!.slice(0, 2), ['+1', 'thumbs_up']);
  assert.deepEqual(table['1f642']!.slice(0, 2), ['smile', 'slight_smile']);
  assert.ok(Object.keys(table).length > 1800);
  // Compressed when asked; unchanged data is not sent again.
  const zipped = await get(url, { 'accept-encoding': 'gzip' });
  assert.equal(zipped.headers['content-encoding'], 'gzip');
  assert.deepEqual(JSON.parse(gunzipSync(zipped.rawPayload).toString()), res.json());
  const again = await get(url, { 'if-none-match': String(res.headers.etag) });
  assert.equal(again.statusCode, 304);
  assert.equal(again.payload, '');
});

test('without a built client: a clear page, and the API still works', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'confab-nodist-'));
  const bare = await startTestServer({ webClientDir: join(empty, 'dist') });
  try {
    const res = await bare.app.inject({ method: 'GET', url: '/', headers: { host: 'confab.test' } });
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(res.body, /web client is not built/);
    assert.match(res.body, /npm install/);
    assert.equal((await bare.owner.get('/users/me')).status, 200);
  } finally {
    await bare.close();
    rmSync(empty, { recursive: true, force: true });
  }
});

test('invitation link from the outbox: the page, then sign-up through /json signs in without an API key', async () => {
  const admin = new Browser(server);
  await admin.login(OWNER_EMAIL, OWNER_PASSWORD);
  const sent = await admin.post('/json/invites', { invitee_emails: 'newcomer@example.com', stream_ids: [], welcome_message_custom_text: 'Glad to have you!' });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const mail = (await server.outbox()).find((m) => m.to === 'newcomer@example.com');
  assert.ok(mail, 'the invitation was emailed');
  assert.match(mail.subject, /invited you to join Test Organization/);
  assert.match(mail.text, /Glad to have you!/);
  const link = /http:\/\/confab\.test\/join\/([a-z0-9]+)\//.exec(mail.text);
  assert.ok(link, mail.text);

  const page = await get(new URL(link[0]).pathname);
  assert.equal(page.statusCode, 200);
  assert.equal(page.body, INDEX);

  const guest = new Browser(server);
  const joined = await guest.post('/json/invites/accept', { key: link[1], full_name: 'New Comer', password: 'newcomer-password-1' });
  assert.equal(joined.status, 200, JSON.stringify(joined.body));
  assert.equal(joined.body.email, 'newcomer@example.com');
  assert.equal(joined.body.api_key, undefined, 'no API key for page scripts');
  const me = await guest.get('/json/users/me');
  assert.equal(me.status, 200);
  assert.equal(me.body.full_name, 'New Comer');
  // The same link is spent; the new account signs in with its password.
  assert.equal((await new Browser(server).post('/json/invites/accept', { key: link[1], full_name: 'Again', password: 'again-password-1' })).status, 400);
  await new Browser(server).login('newcomer@example.com', 'newcomer-password-1');
  // A cross-site page cannot sign someone up.
  const forged = await new Browser(server).post(
    '/json/invites/accept',
    { key: link[1], full_name: 'X', password: 'x-password-12' },
    { headers: { origin: 'https://evil.example' } },
  );
  assert.equal(forged.status, 403);
});
