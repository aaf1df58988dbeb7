// Every `npm run manage` command, run as an operator runs it (src/cli/manage.ts:
// its own services, no HTTP app) against an organization with every optional
// channel set: each succeeds and does what it says, with the same hooks the
// server runs (sign-up announcement, invitations spent, onboarding).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { manage } from '../../src/cli/manage.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/index.ts';
import { buildServices } from '../../src/server.ts';
import type { Services } from '../../src/services.ts';
import { getRealmBySubdomain } from '../../src/realm/queries.ts';
import { getUserByEmail } from '../../src/users/queries.ts';
import { createChannel } from '../../src/channels/actions.ts';
import { updateRealmSettings } from '../../src/realm/settings-actions.ts';
import { sendInvitations } from '../../src/invitations/actions.ts';
import { ROLE } from '../../src/users/roles.ts';
import { freshPostgresDatabase } from '../support/server.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'confab-manage-'));
const pgdb = process.env.CONFAB_TEST_DB === 'postgres' ? await freshPostgresDatabase() : undefined;
const saved = { DATA_DIR: process.env.DATA_DIR, DATABASE_URL: process.env.DATABASE_URL, BOOTSTRAP_EMAIL: process.env.BOOTSTRAP_EMAIL };
process.env.DATA_DIR = dataDir;
if (pgdb) process.env.DATABASE_URL = pgdb.url;
else delete process.env.DATABASE_URL;
delete process.env.BOOTSTRAP_EMAIL;
after(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await pgdb?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

let lines: string[] = [];
/** Runs one command as `npm run manage -- ...` does; returns its exit code and what it printed. */
async function run(...args: string[]): Promise<{ code: number; out: string }> {
  lines = [];
  const code = await manage(args, (line) => lines.push(line));
  return { code, out: lines.join('\n') };
}

/** Services of this test's own, between commands (the manage command holds the database while it runs). */
async function withServices<T>(fn: (svc: Services) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  const svc = await buildServices(config, database, pino({ level: 'silent' }));
  try {
    return await fn(svc);
  } finally {
    await svc.markdown.close();
    await database.close();
  }
}

const realmOf = async (svc: Services) => (await getRealmBySubdomain(svc.db, 'acme'))!;
const userOf = async (svc: Services, email: string) => (await getUserByEmail(svc.db, (await realmOf(svc)).id, email))!;
/** Whether the account's stored password is this one. */
const passwordIs = async (svc: Services, email: string, password: string) => {
  const { password_hash } = await svc.db
    .selectFrom('users')
    .select('password_hash')
    .where('id', '=', (await userOf(svc, email)).id)
    .executeTakeFirstOrThrow();
  return password_hash !== null && (await svc.passwords.verify(password_hash, password));
};

/** The messages of a channel, oldest first, with their senders' emails. */
const channelMessages = (svc: Services, channelId: number) =>
  svc.db
    .selectFrom('messages as m')
    .innerJoin('recipients as r', 'r.id', 'm.recipient_id')
    .innerJoin('users as u', 'u.id', 'm.sender_id')
    .select(['m.id', 'm.content', 'u.delivery_email as sender'])
    .where('r.channel_id', '=', channelId)
    .orderBy('m.id')
    .execute();

const CHANNELS = ['signups', 'new channels', 'updates'] as const;
let channelIds: Record<(typeof CHANNELS)[number] | 'moderation', number>;

test('help: the usage, exit 0; no command: the usage, exit 2', async () => {
  assert.deepEqual([(await run('help')).code, lines[0]?.startsWith('Usage: npm run manage')], [0, true]);
  assert.equal((await run()).code, 2);
  assert.equal((await run('no-such-command')).code, 2);
});

test('create-org: the organization, its owner, and what onboarding gives it', async () => {
  const { code, out } = await run(
    'create-org',
    '--subdomain',
    'acme',
    '--name',
    'Acme',
    '--owner-email',
    'boss@acme.example',
    '--owner-password',
    'boss-pass-1',
  );
  assert.equal(code, 0, out);
  assert.match(out, /created organization \d+ 'Acme' \(subdomain 'acme'\); owner boss@acme\.example is user \d+/);
  await withServices(async (svc) => {
    const realm = await realmOf(svc);
    const owner = await userOf(svc, 'boss@acme.example');
    assert.equal(owner.role, ROLE.OWNER);
    assert.ok(await passwordIs(svc, 'boss@acme.example', 'boss-pass-1'));
    // The realm-created hook ran: initial channels, and Welcome Bot's first words to the owner.
    const channels = await svc.db.selectFrom('channels').select('name').where('realm_id', '=', realm.id).execute();
    assert.ok(channels.length > 0);
    const welcomed = await svc.db.selectFrom('user_messages').select('message_id').where('user_id', '=', owner.id).execute();
    assert.ok(welcomed.length > 0, 'onboarding messages');

    // Every optional channel of the organization set, for the commands below.
    const make = async (name: string, invite_only = false) =>
      (await createChannel(svc, realm, owner, { name, description: '', subscribers: [owner.id], announce: false, invite_only })).id;
    channelIds = {
      signups: await make('signups'),
      'new channels': await make('new channels'),
      updates: await make('updates'),
      moderation: await make('moderation', true),
    };
    await updateRealmSettings(svc, realm, owner, {
      settings: {
        signup_announcements_stream_id: channelIds.signups,
        new_stream_announcements_stream_id: channelIds['new channels'],
        zulip_update_announcements_stream_id: channelIds.updates,
        moderation_request_channel_id: channelIds.moderation,
      },
      groups: {},
    });
    const settings = (await realmOf(svc)).settings as Record<string, unknown>;
    assert.equal(settings.signup_announcements_stream_id, channelIds.signups);
    assert.equal(settings.moderation_request_channel_id, channelIds.moderation);
    // An invitation waiting for the address the operator is about to create.
    await sendInvitations(svc, realm, owner, 'dev@acme.example', {
      expiresInMinutes: null,
      invitedAs: ROLE.MEMBER,
      channelIds: [],
      groupIds: [],
      includeRealmDefaultSubscriptions: true,
      welcomeMessageCustomText: null,
      notifyReferrerOnJoin: true,
    });
  });
  assert.equal((await run('create-org', '--subdomain', 'acme', '--name', 'Again', '--owner-email', 'x@acme.example')).code, 1);
});

test('list-orgs: every organization', async () => {
  const { code, out } = await run('list-orgs');
  assert.equal(code, 0, out);
  assert.match(out, /'acme'\tAcme/);
});

test('create-user: the account, announced in the sign-up channel; its pending invitations spent', async () => {
  const before = await withServices((svc) => channelMessages(svc, channelIds.signups));
  const { code, out } = await run('create-user', '--org', 'acme', '--email', 'dev@acme.example', '--name', 'Dev One', '--password', 'dev-pass-1');
  assert.equal(code, 0, out);
  assert.match(out, /created user \d+ dev@acme\.example with role 400/);
  await withServices(async (svc) => {
    const dev = await userOf(svc, 'dev@acme.example');
    assert.equal(dev.full_name, 'Dev One');
    assert.ok(await passwordIs(svc, 'dev@acme.example', 'dev-pass-1'));
    const announced = (await channelMessages(svc, channelIds.signups)).slice(before.length);
    assert.equal(announced.length, 1);
    assert.match(announced[0].content, /Dev One/);
    assert.match(announced[0].sender, /^notification-bot@/);
    const invitations = await svc.db.selectFrom('invitations').select('status').where('email', '=', 'dev@acme.example').execute();
    assert.deepEqual(invitations, [{ status: 'revoked' }]);
    // The onboarding hook gave the new account Welcome Bot's history too.
    const received = await svc.db.selectFrom('user_messages').select('message_id').where('user_id', '=', dev.id).execute();
    assert.ok(received.length > 1);
  });
  // A generated password is printed once.
  const generated = await run('create-user', '--org', 'acme', '--email', 'gen@acme.example', '--name', 'Gen Two');
  assert.equal(generated.code, 0, generated.out);
  assert.match(generated.out, /password \(shown only now\): \S+/);
  assert.equal((await run('create-user', '--org', 'nope', '--email', 'a@b.example', '--name', 'Aa Bb')).code, 2);
  assert.equal((await run('create-user', '--org', 'acme', '--email', 'dev@acme.example', '--name', 'Dev Again')).code, 1);
});

test('list-users: every account with its role', async () => {
  const { code, out } = await run('list-users', '--org', 'acme');
  assert.equal(code, 0, out);
  assert.match(out, /boss@acme\.example\tOrganization Owner\trole 100|boss@acme\.example\t.*\trole 100/);
  assert.match(out, /dev@acme\.example\tDev One\trole 400/);
});

test('change-role: the role changes; the last owner keeps theirs', async () => {
  const { code, out } = await run('change-role', '--org', 'acme', '--email', 'dev@acme.example', '--role', 'administrator');
  assert.equal(code, 0, out);
  assert.equal(await withServices(async (svc) => (await userOf(svc, 'dev@acme.example')).role), ROLE.ADMINISTRATOR);
  const demote = await run('change-role', '--org', 'acme', '--email', 'boss@acme.example', '--role', 'member');
  assert.equal(demote.code, 1);
  assert.match(demote.out, /only organization owner/);
  assert.equal((await run('change-role', '--org', 'acme', '--email', 'dev@acme.example', '--role', 'king')).code, 2);
});

test('reset-password: the new password works, the old one no longer', async () => {
  const { code, out } = await run('reset-password', '--org', 'acme', '--email', 'dev@acme.example');
  assert.equal(code, 0, out);
  const password = /new password \(shown only now\): (\S+)/.exec(out)?.[1];
  assert.ok(password);
  await withServices(async (svc) => {
    assert.ok(await passwordIs(svc, 'dev@acme.example', password));
    assert.equal(await passwordIs(svc, 'dev@acme.example', 'dev-pass-1'), false);
  });
  assert.equal((await run('reset-password', '--org', 'acme', '--email', 'nobody@acme.example')).code, 2);
});

test("set-invite-limit: the organization's own daily limit", async () => {
  const { code, out } = await run('set-invite-limit', '--org', 'acme', '--limit', '7');
  assert.equal(code, 0, out);
  const limits = () => withServices((svc) => svc.db.selectFrom('realm_invite_limits').select('daily_max').execute());
  assert.deepEqual(await limits(), [{ daily_max: 7 }]);
  assert.equal((await run('set-invite-limit', '--org', 'acme', '--limit', 'default')).code, 0);
  assert.deepEqual(await limits(), []);
});

test('deactivate-org and reactivate-org', async () => {
  const deactivated = () => withServices(async (svc) => (await realmOf(svc)).deactivated);
  const off = await run('deactivate-org', '--org', 'acme');
  assert.equal(off.code, 0, off.out);
  assert.equal(await deactivated(), true);
  const on = await run('reactivate-org', '--org', 'acme');
  assert.equal(on.code, 0, on.out);
  assert.equal(await deactivated(), false);
});
