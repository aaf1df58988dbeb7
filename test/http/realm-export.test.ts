// POST/GET /export/realm and DELETE /export/realm/{id}: administrators only,
// written in the background, realm_export events to administrators, public
// exports without private content, files at secret URLs until deleted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tar from 'tar';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { cleanUp, ok, scratchDir } from './ops.fixture.ts';

let server: TestServer;
let admin: Client;
let member: Client;
before(async () => {
  server = await startTestServer({ dataDir: scratchDir() });
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR });
  member = await server.createUser();
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'open' }], principals: [admin.id, member.id] }));
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'closed' }], invite_only: true }));
  ok(await admin.post('/messages', { type: 'stream', to: 'open', topic: 't', content: 'public words' }));
  ok(await admin.post('/messages', { type: 'stream', to: 'closed', topic: 't', content: 'private words' }));
  ok(await member.post('/messages', { type: 'direct', to: [admin.id], content: 'direct words' }));
});
after(async () => {
  await server.close();
  await cleanUp();
});

async function finished(id: number): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const e = ok(await admin.get('/export/realm')).exports.find((x: any) => x.id === id);
    if (!e.pending) return e;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('export never finished');
}

async function contents(url: string): Promise<string> {
  const res = await server.app.inject({ method: 'GET', url: new URL(url).pathname });
  assert.equal(res.statusCode, 200);
  const dir = scratchDir();
  writeFileSync(join(dir, 'x.tar.gz'), res.rawPayload);
  await tar.x({ file: join(dir, 'x.tar.gz'), cwd: dir });
  const inner = readdirSync(dir).find((f) => f.startsWith('confab-export-'))!;
  return readFileSync(join(dir, inner, 'messages-000001.json'), 'utf8');
}

test('only administrators may export, list or delete', async () => {
  for (const res of [await member.post('/export/realm'), await member.get('/export/realm'), await member.delete('/export/realm/1')]) {
    assert.deepEqual([res.status, res.body], [400, { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' }]);
  }
  const bad = await admin.post('/export/realm', { export_type: 3 });
  assert.equal(bad.status, 400);
  assert.equal(ok(await admin.get('/export/realm')).exports.length, 0, 'a refused request left nothing');
});

test('a standard export has everything, a public one no private content; administrators hear of both', async () => {
  const adminQueue = ok(await admin.post('/register', { event_types: ['realm_export'] }));
  const memberQueue = ok(await member.post('/register', { event_types: ['realm_export'] }));
  const standard = ok(await admin.post('/export/realm', { export_type: 2 })).id;
  const done = await finished(standard);
  assert.equal(done.acting_user_id, admin.id);
  assert.equal(done.export_type, 2);
  assert.equal(done.failed_timestamp, null);
  assert.match(done.export_url, /^http:\/\/confab\.test\/user_avatars\/exports\/\d+\/[0-9a-f]{32}\/confab-export-/);
  const all = await contents(done.export_url);
  for (const words of ['public words', 'private words', 'direct words']) assert.ok(all.includes(words), words);

  const publicId = ok(await admin.post('/export/realm')).id;
  const pub = await finished(publicId);
  assert.equal(pub.export_type, 1);
  const some = await contents(pub.export_url);
  assert.ok(some.includes('public words'));
  assert.ok(!some.includes('private words') && !some.includes('direct words'));

  const events = ok(await admin.get('/events', { queue_id: adminQueue.queue_id, last_event_id: adminQueue.last_event_id, dont_block: true })).events;
  const exportsEvents = events.filter((e: any) => e.type === 'realm_export');
  assert.ok(exportsEvents.length >= 4, 'requested and finished, twice');
  assert.equal(exportsEvents[0].exports[0].pending, true);
  assert.deepEqual(exportsEvents.at(-1).exports, ok(await admin.get('/export/realm')).exports);
  const memberEvents = ok(await member.get('/events', { queue_id: memberQueue.queue_id, last_event_id: memberQueue.last_event_id, dont_block: true })).events;
  assert.equal(memberEvents.filter((e: any) => e.type === 'realm_export').length, 0);
});

test('DELETE /export/realm/{id}: the file goes, the record says so', async () => {
  const id = ok(await admin.post('/export/realm')).id;
  const done = await finished(id);
  const missing = await admin.delete('/export/realm/99999');
  assert.deepEqual([missing.status, missing.body.msg], [400, 'Invalid data export ID']);
  ok(await admin.delete(`/export/realm/${id}`));
  const after = ok(await admin.get('/export/realm')).exports.find((e: any) => e.id === id);
  assert.equal(typeof after.deleted_timestamp, 'number');
  assert.equal(after.export_url, null);
  assert.equal((await server.app.inject({ method: 'GET', url: new URL(done.export_url).pathname })).statusCode, 404);
  const again = await admin.delete(`/export/realm/${id}`);
  assert.deepEqual([again.status, again.body.msg], [400, 'Export already deleted']);
  // Another organization's administrators see none of it.
  const other = await server.createOrganization('elsewhere');
  assert.deepEqual(ok(await other.get('/export/realm')).exports, []);
  assert.equal((await other.delete(`/export/realm/${id}`)).body.msg, 'Invalid data export ID');
});
