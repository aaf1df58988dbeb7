// POST/GET /export/realm and DELETE /export/realm/{id}: administrators only,
// written in the background, realm_export events to administrators, public
// exports without private content, standard exports with only what consenting
// users allow, the reference's limits, files at secret URLs until deleted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tar from 'tar';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { ROLE } from '../../src/users/roles.ts';
import { cleanUp, ok, scratchDir, uploadFile } from './ops.fixture.ts';

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

/** Waits (generously: a loaded machine may take minutes) until the export is no longer pending. */
async function finished(id: number): Promise<any> {
  for (let i = 0; i < 3000; i++) {
    const e = ok(await admin.get('/export/realm')).exports.find((x: any) => x.id === id);
    if (!e.pending) return e;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('export never finished');
}

/** Exports of this organization requested so far are forgotten, so that limits start afresh. */
async function forgetExports(): Promise<void> {
  await server.svc.db.deleteFrom('realm_exports').execute();
}

async function unpacked(url: string): Promise<string> {
  const res = await server.app.inject({ method: 'GET', url: new URL(url).pathname });
  assert.equal(res.statusCode, 200);
  const dir = scratchDir();
  writeFileSync(join(dir, 'x.tar.gz'), res.rawPayload);
  await tar.x({ file: join(dir, 'x.tar.gz'), cwd: dir });
  return join(dir, readdirSync(dir).find((f) => f.startsWith('confab-export-'))!);
}

async function contents(url: string): Promise<string> {
  return readFileSync(join(await unpacked(url), 'messages-000001.json'), 'utf8');
}

test('only administrators may export, list or delete', async () => {
  for (const res of [await member.post('/export/realm'), await member.get('/export/realm'), await member.delete('/export/realm/1')]) {
    assert.deepEqual([res.status, res.body], [400, { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' }]);
  }
  const bad = await admin.post('/export/realm', { export_type: 3 });
  assert.equal(bad.status, 400);
  assert.equal(ok(await admin.get('/export/realm')).exports.length, 0, 'a refused request left nothing');
});

test('a standard export carries what consenting users allow, a public one no private content; administrators hear of both', async () => {
  const adminQueue = ok(await admin.post('/register', { event_types: ['realm_export', 'realm_export_consent'] }));
  const memberQueue = ok(await member.post('/register', { event_types: ['realm_export', 'realm_export_consent'] }));
  // Nobody consents yet: the reference refuses a standard export no owner consents to.
  const refused = await admin.post('/export/realm', { export_type: 2 });
  assert.deepEqual([refused.status, refused.body.code], [400, 'BAD_REQUEST']);
  assert.match(refused.body.msg, /^Make sure at least one Organization Owner is consenting to the export/);
  assert.equal(ok(await admin.get('/export/realm')).exports.length, 0, 'a refused request left nothing');

  // The owner consents; they are in no private channel and no direct message.
  ok(await server.owner.patch('/settings', { allow_private_data_export: true }));
  const first = await finished(ok(await admin.post('/export/realm', { export_type: 2 })).id);
  assert.equal(first.acting_user_id, admin.id);
  assert.equal(first.export_type, 2);
  assert.equal(first.failed_timestamp, null);
  assert.match(first.export_url, /^http:\/\/confab\.test\/user_avatars\/exports\/\d+\/[0-9a-f]{32}\/confab-export-/);
  const owners = await contents(first.export_url);
  assert.ok(owners.includes('public words'));
  assert.ok(!owners.includes('private words') && !owners.includes('direct words'), 'nothing of those who did not consent');
  // The owner has no copies of these messages; the others' flags stay out.
  assert.deepEqual(JSON.parse(owners).zerver_usermessage, [], 'personal data of consenting users only');
  const ownersRealm = JSON.parse(readFileSync(join(await unpacked(first.export_url), 'realm.json'), 'utf8'));
  assert.ok(!ownersRealm.zerver_stream.some((s: any) => s.name === 'closed'), 'the private channel is not listed');

  // The administrator consents too: their private channel and direct messages come along.
  ok(await admin.patch('/settings', { allow_private_data_export: true }));
  const consents = ok(await admin.get('/export/realm/consents')).export_consents;
  assert.deepEqual(
    consents.filter((c: any) => [server.owner.id, admin.id, member.id].includes(c.user_id)).sort((a: any, b: any) => a.user_id - b.user_id),
    [server.owner.id, admin.id, member.id].sort((a, b) => a - b).map((id) => ({ user_id: id, consented: id !== member.id })),
  );
  assert.equal((await member.get('/export/realm/consents')).body.code, 'UNAUTHORIZED_PRINCIPAL');
  const done = await finished(ok(await admin.post('/export/realm', { export_type: 2 })).id);
  const all = await contents(done.export_url);
  for (const words of ['public words', 'private words', 'direct words']) assert.ok(all.includes(words), words);
  const flagsOf = new Set(JSON.parse(all).zerver_usermessage.map((um: any) => um.user_profile));
  assert.deepEqual([...flagsOf], [admin.id], 'the member did not consent: none of their flags');

  // A file linked only in the private channel stays out of a public export.
  const secret = await uploadFile(admin, 'secret.txt', Buffer.from('private file'));
  ok(await admin.post('/messages', { type: 'stream', to: 'closed', topic: 't', content: `[secret](${secret})` }));
  const publicId = ok(await admin.post('/export/realm')).id;
  const pub = await finished(publicId);
  assert.equal(pub.export_type, 1);
  const some = await contents(pub.export_url);
  assert.ok(some.includes('public words'));
  assert.ok(!some.includes('private words') && !some.includes('direct words'));
  const pubDir = await unpacked(pub.export_url);
  assert.deepEqual(JSON.parse(readFileSync(join(pubDir, 'uploads', 'records.json'), 'utf8')), []);
  assert.deepEqual(JSON.parse(readFileSync(join(pubDir, 'attachment.json'), 'utf8')).zerver_attachment, []);

  const events = ok(await admin.get('/events', { queue_id: adminQueue.queue_id, last_event_id: adminQueue.last_event_id, dont_block: true })).events;
  const exportsEvents = events.filter((e: any) => e.type === 'realm_export');
  assert.ok(exportsEvents.length >= 6, 'requested and finished, three times');
  assert.equal(exportsEvents[0].exports[0].pending, true);
  assert.deepEqual(exportsEvents.at(-1).exports, ok(await admin.get('/export/realm')).exports);
  const consentEvents = events.filter((e: any) => e.type === 'realm_export_consent').map((e: any) => [e.user_id, e.consented]);
  assert.deepEqual(consentEvents, [
    [server.owner.id, true],
    [admin.id, true],
  ]);
  const memberEvents = ok(await member.get('/events', { queue_id: memberQueue.queue_id, last_event_id: memberQueue.last_event_id, dont_block: true })).events;
  assert.equal(memberEvents.filter((e: any) => e.type === 'realm_export' || e.type === 'realm_export_consent').length, 0);
  await forgetExports();
});

test('a public export needs an owner whose email address administrators may see', async () => {
  ok(await server.owner.patch('/settings', { email_address_visibility: 4 }));
  try {
    const refused = await admin.post('/export/realm', { export_type: 1 });
    assert.equal(refused.status, 400);
    assert.match(refused.body.msg, /^Make sure at least one Organization Owner allows other Administrators to see their email address/);
  } finally {
    ok(await server.owner.patch('/settings', { email_address_visibility: 1 }));
  }
  assert.equal(ok(await admin.get('/export/realm')).exports.length, 0);
});

test('one export at a time; five a week, as the reference', async () => {
  const realm = await server.svc.db.selectFrom('realms').select('id').where('string_id', '=', '').executeTakeFirstOrThrow();
  // Another request's export is still being written.
  const [pending] = await server.svc.db
    .insertInto('realm_exports')
    .values({ realm_id: realm.id, acting_user_id: admin.id, export_type: 1, path: null, failed_at: null, deleted_at: null })
    .returning('id')
    .execute();
  const busy = await admin.post('/export/realm');
  assert.deepEqual([busy.status, busy.body.msg], [400, 'An export is already in progress.']);
  // One left pending a day ago was lost with its process: marked failed, and no longer in the way.
  await server.svc.db
    .updateTable('realm_exports')
    .set({ created_at: new Date(Date.now() - 25 * 3600_000) })
    .where('id', '=', pending.id)
    .execute();
  const next = ok(await admin.post('/export/realm')).id;
  await finished(next);
  const lost = ok(await admin.get('/export/realm')).exports.find((e: any) => e.id === pending.id);
  assert.equal(lost.pending, false);
  assert.equal(typeof lost.failed_timestamp, 'number');

  // Failed and deleted ones count: five in seven days, then "Exceeded rate limit."
  for (let i = 0; i < 3; i++) await finished(ok(await admin.post('/export/realm')).id);
  const limited = await admin.post('/export/realm');
  assert.deepEqual([limited.status, limited.body.msg], [400, 'Exceeded rate limit.']);
  await server.svc.db
    .updateTable('realm_exports')
    .set({ created_at: new Date(Date.now() - 8 * 86_400_000) })
    .where('id', '=', next)
    .execute();
  await finished(ok(await admin.post('/export/realm')).id);
  await forgetExports();
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
