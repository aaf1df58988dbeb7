// manage export: one organization in the reference's export layout, read back
// and compared with what the API shows of it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as tar from 'tar';
import { startTestServer, type TestServer } from '../support/server.ts';
import { exportRealm, referenceFlags } from '../../src/export/export.ts';
import { silentProgress } from '../../src/backup/progress.ts';
import { cleanUp, GIF, ok, ownersOn, populate, scratchDir, type Populated } from './ops.fixture.ts';

let server: TestServer;
let populated: Populated;
before(async () => {
  server = await startTestServer({ dataDir: scratchDir() });
  populated = await populate(server);
});
after(async () => {
  await server.close();
  await cleanUp();
});

async function exported(subdomain: string): Promise<string> {
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('string_id', '=', subdomain).executeTakeFirstOrThrow();
  const file = join(scratchDir(), 'export.tar.gz');
  await exportRealm(server.svc.db, server.config, realm, file, silentProgress());
  const out = scratchDir();
  await tar.x({ file, cwd: out });
  const [dir] = readdirSync(out);
  return join(out, dir);
}

const json = (dir: string, name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8'));

test('realm.json, messages and emoji files in the reference layout', async () => {
  const [owner] = await ownersOn(server, populated);
  const dir = await exported('');
  assert.deepEqual(readdirSync(dir).sort(), ['attachment.json', 'avatars', 'emoji', 'messages-000001.json', 'realm.json', 'uploads']);
  const realm = json(dir, 'realm.json');
  assert.equal(realm.zerver_realm.length, 1);
  assert.equal(realm.zerver_realm[0].description, 'A backed-up organization');
  assert.equal(realm.zerver_realm[0].message_content_edit_limit_seconds, 1234);
  const members = ok(await owner.get('/users')).members.filter((m: any) => !m.is_system_bot);
  const humans = realm.zerver_userprofile.map((u: any) => u.email).sort();
  for (const m of members.filter((m: any) => !m.is_bot)) assert.ok(humans.includes(m.email), m.email);
  assert.ok(realm.zerver_userprofile_crossrealm.length >= 1, 'system bots are cross-realm');
  const channel = realm.zerver_stream.find((s: any) => s.name === 'backed');
  assert.equal(channel.description, 'about backed');
  const recipient = realm.zerver_recipient.find((r: any) => r.id === channel.recipient);
  assert.deepEqual([recipient.type, recipient.type_id], [2, channel.id]);
  // Every subscription points at a recipient, every user at their own.
  const recipientIds = new Set(realm.zerver_recipient.map((r: any) => r.id));
  assert.ok(realm.zerver_subscription.every((s: any) => recipientIds.has(s.recipient)));
  assert.ok(realm.zerver_userprofile.every((u: any) => realm.zerver_recipient.some((r: any) => r.id === u.recipient && r.type === 1 && r.type_id === u.id)));

  const messages = json(dir, 'messages-000001.json');
  const api = ok(await owner.get('/messages', { anchor: 'newest', num_before: 1000, num_after: 0 })).messages;
  const byId = new Map(messages.zerver_message.map((m: any) => [m.id, m]));
  for (const m of api) {
    const e: any = byId.get(m.id);
    assert.ok(e, `message ${m.id} exported`);
    assert.equal(e.subject, m.subject);
    assert.equal(Math.floor(e.date_sent), m.timestamp);
    assert.equal(e.sender, m.sender_id);
  }
  const first = api.find((m: any) => m.content.includes('hello'));
  const rawFirst = ok(await owner.get(`/messages/${first.id}`, { apply_markdown: false })).message;
  assert.equal((byId.get(first.id) as any).content, rawFirst.content);
  const reactions = realm.zerver_reaction.filter((r: any) => r.message === first.id).map((r: any) => r.emoji_name).sort();
  assert.deepEqual(reactions, first.reactions.map((r: any) => r.emoji_name).sort());
  const dm = api.find((m: any) => m.type === 'private');
  const um = messages.zerver_usermessage.find((u: any) => u.message === dm.id && u.user_profile === owner.id);
  assert.equal(um.flags_mask & (1 << 11), 1 << 11, 'is_private');
  assert.ok(realm.zerver_huddle.some((h: any) => h.recipient === (byId.get(dm.id) as any).recipient));
  // Client names as a table.
  assert.ok(realm.zerver_client.some((c: any) => c.id === (byId.get(dm.id) as any).sending_client));

  const emoji = json(dir, 'emoji/records.json');
  assert.deepEqual(emoji.map((e: any) => e.name), ['backed_emoji']);
  assert.deepEqual(readFileSync(join(dir, 'emoji', emoji[0].path)), GIF);
  assert.deepEqual(json(dir, 'uploads/records.json'), []);
});

test('an export holds one organization only', async () => {
  const dir = await exported('other');
  const realm = json(dir, 'realm.json');
  assert.deepEqual(realm.zerver_stream.map((s: any) => s.name).filter((n: string) => n === 'backed' || n === 'elsewhere'), ['elsewhere']);
  const messages = json(dir, 'messages-000001.json').zerver_message;
  assert.ok(messages.every((m: any) => m.realm === realm.zerver_realm[0].id));
  assert.ok(!messages.some((m: any) => m.content.includes('backed')));
});

test('flags translate by name to the reference bit order', () => {
  assert.equal(referenceFlags(1 | 2, false), 1 | 2);
  assert.equal(referenceFlags(4, true), (1 << 3) | (1 << 11));
  assert.equal(referenceFlags(256, false), 1 << 2);
});
