// manage export and import: one organization in the reference's export layout,
// read back and compared with what the API shows of it; imports of such an
// export (one this server wrote, and one the test builds by hand) and of a Slack
// export, read back through HTTP; an interrupted import resumes where it stopped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tar from 'tar';
import { Client, startTestServer, type TestServer } from '../support/server.ts';
import { channelRecipient, userRecipient, writeHandMadeExport } from '../support/export.ts';
import { exportRealm, referenceFlags } from '../../src/export/export.ts';
import { importRealm, readExportDir, ourFlags } from '../../src/export/import.ts';
import { importFrom } from '../../src/export/command.ts';
import { slackToMarkdown, SLACK_TOPIC } from '../../src/export/slack.ts';
import { silentProgress } from '../../src/backup/progress.ts';
import { cleanUp, GIF, ok, ownersOn, populate, scratchDir, uploadFile, type Populated } from './ops.fixture.ts';

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
  await exportRealm(server.svc, realm, file, silentProgress());
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
  const reactions = realm.zerver_reaction
    .filter((r: any) => r.message === first.id)
    .map((r: any) => r.emoji_name)
    .sort();
  assert.deepEqual(reactions, first.reactions.map((r: any) => r.emoji_name).sort());
  const dm = api.find((m: any) => m.type === 'private');
  const um = messages.zerver_usermessage.find((u: any) => u.message === dm.id && u.user_profile === owner.id);
  assert.equal(um.flags_mask & (1 << 11), 1 << 11, 'is_private');
  assert.ok(realm.zerver_huddle.some((h: any) => h.recipient === (byId.get(dm.id) as any).recipient));
  // Client names as a table.
  assert.ok(realm.zerver_client.some((c: any) => c.id === (byId.get(dm.id) as any).sending_client));

  const emoji = json(dir, 'emoji/records.json');
  assert.deepEqual(
    emoji.map((e: any) => e.name),
    ['backed_emoji'],
  );
  assert.deepEqual(readFileSync(join(dir, 'emoji', emoji[0].path)), GIF);
  assert.deepEqual(json(dir, 'uploads/records.json'), []);
});

test('an export holds one organization only', async () => {
  const dir = await exported('other');
  const realm = json(dir, 'realm.json');
  assert.deepEqual(
    realm.zerver_stream.map((s: any) => s.name).filter((n: string) => n === 'backed' || n === 'elsewhere'),
    ['elsewhere'],
  );
  const messages = json(dir, 'messages-000001.json').zerver_message;
  assert.ok(messages.every((m: any) => m.realm === realm.zerver_realm[0].id));
  assert.ok(!messages.some((m: any) => m.content.includes('backed')));
});

test('flags translate by name to the reference bit order', () => {
  assert.equal(referenceFlags(1 | 2, false), 1 | 2);
  assert.equal(referenceFlags(4, true), (1 << 3) | (1 << 11));
  assert.equal(referenceFlags(256, false), 1 << 2);
});

async function clientIn(subdomain: string, email: string): Promise<Client> {
  const u = await server.svc.db
    .selectFrom('users')
    .innerJoin('realms', 'realms.id', 'users.realm_id')
    .select(['users.id', 'users.api_key'])
    .where('realms.string_id', '=', subdomain)
    .where('users.delivery_email', '=', email)
    .executeTakeFirstOrThrow();
  return new Client(server, u.id, email, u.api_key, `${subdomain}.confab.test`);
}

/** Messages as the owner sees them, without ids (they change). */
async function conversation(c: Client) {
  const messages = ok(await c.get('/messages', { anchor: 'newest', num_before: 1000, num_after: 0, apply_markdown: false })).messages;
  return messages.map((m: any) => ({
    sender: m.sender_email,
    to: m.type === 'stream' ? m.display_recipient : m.display_recipient.map((r: any) => r.email).sort(),
    topic: m.subject,
    content: m.content,
    timestamp: m.timestamp,
    reactions: m.reactions.map((r: any) => `${r.emoji_name}:${r.user_id === c.id ? 'me' : 'other'}`).sort(),
    flags: m.flags.filter((f: string) => f === 'read' || f === 'starred').sort(),
  }));
}

test('an organization exported here imports as a new one with the same content', async () => {
  const [owner] = await ownersOn(server, populated);
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('string_id', '=', '').executeTakeFirstOrThrow();
  const file = join(scratchDir(), 'export.tar.gz');
  await exportRealm(server.svc, realm, file, silentProgress());
  const imported = await importFrom(server.svc, file, 'copied', silentProgress());
  assert.equal(imported.string_id, 'copied');
  const copy = await clientIn('copied', owner.email!);
  assert.deepEqual(await conversation(copy), await conversation(owner));
  const people = async (c: Client) =>
    ok(await c.get('/users'))
      .members.map((m: any) => [m.email, m.full_name, m.role, m.is_bot])
      .sort();
  assert.deepEqual(await people(copy), await people(owner));
  const channels = async (c: Client) =>
    ok(await c.get('/users/me/subscriptions'))
      .subscriptions.map((s: any) => [s.name, s.description, s.color])
      .sort();
  assert.deepEqual(await channels(copy), await channels(owner));
  const emoji = Object.values(ok(await copy.get('/realm/emoji')).emoji) as any[];
  assert.deepEqual(
    emoji.map((e) => e.name),
    ['backed_emoji'],
  );
  const image = await server.app.inject({ method: 'GET', url: emoji[0].source_url, headers: { host: 'copied.confab.test' } });
  assert.deepEqual(image.rawPayload, GIF);
  const settings = ok(await copy.post('/register', { fetch_event_types: ['realm'] }));
  assert.equal(settings.realm_description, 'A backed-up organization');
  assert.equal(settings.realm_message_content_edit_limit_seconds, 1234);
  // The subdomain is taken now: a second import there is refused, and nothing changes.
  await assert.rejects(importFrom(server.svc, file, 'copied', silentProgress()), /already in use/);
});

/** A two-file export in the reference's layout, written by hand. */
function handMadeExport(): string {
  const dir = scratchDir();
  const t = 1_700_000_000;
  const lab = channelRecipient(21);
  const message = (id: number, sender: number, recipient: number, content: string, i: number) => ({
    id,
    sender,
    recipient,
    subject: recipient === lab ? 'bench' : '',
    content,
    rendered_content: `<p>${content}</p>`,
    date_sent: t + i,
    sending_client: 1,
  });
  writeHandMadeExport(dir, {
    realm: { id: 7, name: 'Hand Made', string_id: 'hand' },
    users: [
      { id: 11, email: 'ada@hand.example', delivery_email: 'ada@hand.example', full_name: 'Ada', role: 100, is_active: true },
      { id: 12, email: 'bob@hand.example', delivery_email: 'bob@hand.example', full_name: 'Bob', role: 400, is_active: true },
    ],
    channels: [{ id: 21, name: 'lab', description: 'the lab' }],
    subscriptions: [
      [11, 21, true],
      [12, 21, true],
    ],
    tables: {
      zerver_realmemoji: [{ id: 31, name: 'handy', file_name: 'handy.gif', author: 11, deactivated: false }],
      zerver_reaction: [
        { id: 1, message: 41, user_profile: 12, emoji_name: 'handy', emoji_code: '31', reaction_type: 'realm_emoji' },
        { id: 2, message: 43, user_profile: 11, emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji' },
      ],
      zerver_client: [{ id: 1, name: 'website' }],
    },
    messageFiles: [
      {
        zerver_message: [message(41, 11, lab, 'first', 1), message(42, 12, userRecipient(11), 'a direct one', 2)],
        zerver_usermessage: [
          { id: 1, user_profile: 11, message: 41, flags_mask: 1 | 2 },
          { id: 2, user_profile: 12, message: 41, flags_mask: 0 },
          { id: 3, user_profile: 11, message: 42, flags_mask: 1 << 11 },
          { id: 4, user_profile: 12, message: 42, flags_mask: 1 | (1 << 11) },
        ],
      },
      {
        zerver_message: [message(43, 11, lab, 'third', 3)],
        zerver_usermessage: [
          { id: 5, user_profile: 11, message: 43, flags_mask: 1 },
          { id: 6, user_profile: 12, message: 43, flags_mask: 0 },
        ],
      },
    ],
  });
  mkdirSync(join(dir, 'emoji', '7', 'emoji', 'images'), { recursive: true });
  writeFileSync(join(dir, 'emoji', '7', 'emoji', 'images', 'handy.gif'), GIF);
  writeFileSync(join(dir, 'emoji', 'records.json'), JSON.stringify([{ realm_id: 7, file_name: 'handy.gif', path: '7/emoji/images/handy.gif' }]));
  return dir;
}

test('an interrupted import resumes from the next file, importing nothing twice', async () => {
  const dir = handMadeExport();
  const stateFile = join(scratchDir(), 'state.json');
  const data = readExportDir(dir);
  const broken = {
    ...data,
    readMessages: (name: string) => {
      if (name === 'messages-000002.json') throw new Error('interrupted');
      return data.readMessages(name);
    },
  };
  await assert.rejects(importRealm(server.svc, broken, 'hand', stateFile, silentProgress()), /interrupted/);
  const ada = await clientIn('hand', 'ada@hand.example');
  assert.equal((await conversation(ada)).length, 2);
  await importRealm(server.svc, data, 'hand', stateFile, silentProgress());
  const seen = await conversation(ada);
  assert.deepEqual(
    seen.map((m: any) => m.content),
    ['first', 'a direct one', 'third'],
  );
  assert.deepEqual(seen[0], {
    sender: 'ada@hand.example',
    to: 'lab',
    topic: 'bench',
    content: 'first',
    timestamp: 1_700_000_001,
    reactions: ['handy:other'],
    flags: ['read', 'starred'],
  });
  assert.deepEqual(seen[2].reactions, ['octopus:me']);
  assert.deepEqual(seen[1].to, ['ada@hand.example', 'bob@hand.example']);
  const bob = await clientIn('hand', 'bob@hand.example');
  const bobs = await conversation(bob);
  assert.deepEqual(
    bobs.map((m: any) => m.flags),
    [[], ['read'], []],
  );
  const emoji = Object.values(ok(await ada.get('/realm/emoji')).emoji) as any[];
  assert.deepEqual(
    emoji.map((e) => [e.name, e.author_id]),
    [['handy', ada.id]],
  );
  // Renamed to this server's file names, so it is served like any uploaded emoji.
  const served = await server.app.inject({ method: 'GET', url: emoji[0].source_url, headers: ada.host ? { host: ada.host } : {} });
  assert.deepEqual([served.statusCode, served.rawPayload], [200, GIF]);
});

test('a Slack export becomes an organization: users, channels, messages, reactions, files, custom emoji', async () => {
  const dir = scratchDir();
  const w = (name: string, value: unknown) => writeFileSync(join(dir, name), JSON.stringify(value));
  w('users.json', [
    { id: 'U1', name: 'cleo', real_name: 'Cleo Owner', is_owner: true, profile: { email: 'cleo@slack.example' } },
    { id: 'U2', name: 'dan', real_name: 'Dan Member', profile: { email: 'dan@slack.example' } },
  ]);
  w('channels.json', [{ id: 'C1', name: 'random', purpose: { value: 'anything' }, members: ['U1', 'U2'], created: 1_600_000_000 }]);
  w('dms.json', [{ id: 'D1', members: ['U1', 'U2'] }]);
  mkdirSync(join(dir, 'random'));
  w('random/2024-01-01.json', [
    {
      type: 'message',
      user: 'U1',
      text: 'hi <@U2>, see <https://example.com|the site> and *this*',
      ts: '1704103200.000100',
      reactions: [{ name: 'octopus', users: ['U2'], count: 1 }],
    },
    { type: 'message', subtype: 'channel_join', user: 'U2', text: '<@U2> has joined', ts: '1704103201.000100' },
    {
      type: 'message',
      user: 'U2',
      text: 'a file',
      ts: '1704103300.000100',
      files: [{ name: 'plan.pdf', url_private: 'https://files.slack.example/plan.pdf' }],
    },
    { type: 'message', user: 'U1', text: 'party :party-parrot:', ts: '1704103400.000100', reactions: [{ name: 'parrot', users: ['U2'], count: 1 }] },
  ]);
  // Slack's emoji.list answer, with the images an export tool saved beside it.
  w('emoji.json', {
    ok: true,
    emoji: {
      'party-parrot': 'https://emoji.slack-edge.com/T1/party-parrot/0123.gif',
      parrot: 'alias:party-parrot',
      'not-saved': 'https://emoji.slack-edge.com/T1/not-saved/4567.png',
      thumbs: 'alias:+1',
    },
  });
  mkdirSync(join(dir, 'emoji'));
  writeFileSync(join(dir, 'emoji', 'party-parrot.gif'), GIF);
  mkdirSync(join(dir, 'D1'));
  w('D1/2024-01-02.json', [{ type: 'message', user: 'U2', text: 'psst', ts: '1704189600.000100' }]);
  const realm = await importFrom(server.svc, dir, 'slacked', silentProgress());
  assert.equal(realm.string_id, 'slacked');
  const cleo = await clientIn('slacked', 'cleo@slack.example');
  const people = ok(await cleo.get('/users'))
    .members.filter((m: any) => !m.is_bot)
    .map((m: any) => [m.full_name, m.role])
    .sort();
  assert.deepEqual(people, [
    ['Cleo Owner', 100],
    ['Dan Member', 400],
  ]);
  const seen = await conversation(cleo);
  assert.deepEqual(
    seen.map((m: any) => [m.to, m.topic, m.content]),
    [
      ['random', SLACK_TOPIC, 'hi @**Dan Member**, see [the site](https://example.com) and **this**'],
      ['random', SLACK_TOPIC, 'a file\n[plan.pdf](https://files.slack.example/plan.pdf)'],
      ['random', SLACK_TOPIC, 'party :party-parrot:'],
      [['cleo@slack.example', 'dan@slack.example'], '', 'psst'],
    ],
  );
  // Custom emoji (an alias is the same image under another name), used by reactions and in messages.
  const custom = Object.values(ok(await cleo.get('/realm/emoji')).emoji) as any[];
  assert.deepEqual(custom.map((e) => e.name).sort(), ['parrot', 'party-parrot']);
  for (const e of custom) {
    const image = await server.app.inject({ method: 'GET', url: e.source_url, headers: { host: 'slacked.confab.test' } });
    assert.deepEqual([image.statusCode, image.rawPayload], [200, GIF]);
  }
  assert.deepEqual(seen[2].reactions, ['parrot:other']);
  const parrotId = custom.find((e) => e.name === 'parrot').id;
  const partyHtml = ok(await cleo.get('/messages', { anchor: 'newest', num_before: 5, num_after: 0 })).messages.find((m: any) => m.content.includes('party'));
  assert.equal(partyHtml.reactions[0].reaction_type, 'realm_emoji');
  assert.equal(partyHtml.reactions[0].emoji_code, parrotId);
  assert.match(partyHtml.content, /<img alt=":party-parrot:" class="emoji" src="\/user_avatars\/\d+\/emoji\/images\/[^"]+\.gif" title="party-parrot">/);
  assert.deepEqual(seen[0].reactions, ['octopus:other']);
  assert.equal(seen[0].timestamp, 1704103200);
  const html = ok(await cleo.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 1 })).messages[0].content;
  assert.match(html, /class="user-mention"[^>]*>@Dan Member</);
  const subs = ok(await cleo.get('/users/me/subscriptions')).subscriptions.map((s: any) => [s.name, s.description]);
  assert.deepEqual(subs, [['random', 'anything']]);
});

test("Slack's markup and the reference's flags translate", () => {
  const users = new Map([['U1', 'Ann']]);
  assert.equal(slackToMarkdown('<@U1> <#C9|ops> <!here> _it_ ~no~ &lt;b&gt;', users, new Map()), '@**Ann** #**ops** @**here** *it* ~~no~~ <b>');
  assert.equal(ourFlags(1 | 2 | (1 << 3) | (1 << 11)), 1 | 2 | 4);
});

test("message files go into the export's uploads/ with their records and links", async () => {
  const [owner] = await ownersOn(server, populated);
  const url = await uploadFile(owner, 'report.txt', Buffer.from('the quarterly report'));
  const pathId = url.replace(/^\/user_uploads\//, '');
  const id = ok(await owner.post('/messages', { type: 'stream', to: 'backed', topic: 'files', content: `[report](${url})` })).id;
  const dir = await exported('');
  assert.equal(readFileSync(join(dir, 'uploads', pathId), 'utf8'), 'the quarterly report');
  const records = json(dir, 'uploads/records.json');
  assert.deepEqual(
    records.map((r: any) => [r.path, r.size, r.content_type, r.user_profile_id]),
    [[pathId, 20, 'text/plain', owner.id]],
  );
  const { zerver_attachment, zerver_attachment_messages } = json(dir, 'attachment.json');
  assert.deepEqual(
    zerver_attachment.map((a: any) => [a.path_id, a.file_name, a.messages]),
    [[pathId, 'report.txt', [id]]],
  );
  assert.deepEqual(
    zerver_attachment_messages.map((l: any) => [l.attachment_id, l.message_id]),
    [[zerver_attachment[0].id, id]],
  );
  ok(await owner.delete(`/messages/${id}`));

  // Imported, the file lives at a path of the new organization, and the message links it there.
  await importFrom(server.svc, dir, 'filed', silentProgress());
  const copy = await clientIn('filed', owner.email!);
  const [file] = ok(await copy.get('/attachments')).attachments;
  assert.equal(file.name, 'report.txt');
  assert.notEqual(file.path_id, pathId);
  const [linking] = file.messages.map((m: any) => m.id);
  const message = ok(await copy.get(`/messages/${linking}`, { apply_markdown: false })).message;
  assert.equal(message.content, `[report](/user_uploads/${file.path_id})`);
  const download = await server.app.inject({
    method: 'GET',
    url: `/user_uploads/${file.path_id}`,
    headers: { host: copy.host!, authorization: `Basic ${Buffer.from(`${copy.email}:${copy.apiKey}`).toString('base64')}` },
  });
  assert.deepEqual([download.statusCode, download.body], [200, 'the quarterly report']);
});
