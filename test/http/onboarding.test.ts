// A new organization starts alive (issue 16, the reference's realm creation and
// onboarding): its default channels, Welcome Bot's first conversations, the
// owner and every new member subscribed and given them unread.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { Browser } from '../support/browser.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { ROLE } from '../../src/users/roles.ts';
import { INITIAL_MESSAGES } from '../../src/onboarding/messages.ts';
import { createUserAsOperator } from '../../src/users/actions.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer({ onboarding: true });
});
after(() => server.close());

const ok = (res: { status: number; body: any }) => {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
};
const subscribed = async (c: Client) =>
  ok(await c.get('/users/me/subscriptions'))
    .subscriptions.map((s: any) => s.name)
    .sort();
const all = async (c: Client) => ok(await c.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0 })).messages as any[];

test('the bootstrap organization has the default channels, announced in general', async () => {
  const owner = server.owner;
  assert.deepEqual(await subscribed(owner), ['Confab', 'general', 'sandbox']);
  const state = ok(await owner.post('/register', { fetch_event_types: ['realm', 'default_streams', 'subscription'] }));
  const byName = new Map<string, any>(state.subscriptions.map((s: any) => [s.name, s]));
  assert.deepEqual([...state.realm_default_streams].sort(), [...byName.values()].map((s: any) => s.stream_id).sort());
  assert.equal(state.realm_new_stream_announcements_stream_id, byName.get('general').stream_id);
  assert.equal(byName.get('sandbox').description, 'Experiment with Confab here. :test_tube:');
  assert.ok([...byName.values()].every((s: any) => !s.invite_only));
});

test("Welcome Bot's conversations: topics in the reference's order, unread, the first of each topic starred, a wave", async () => {
  const messages = await all(server.owner);
  assert.equal(messages.length, INITIAL_MESSAGES.length);
  assert.deepEqual(
    messages.map((m) => [m.display_recipient, m.subject]),
    INITIAL_MESSAGES.map((m) => [m.channel, m.topic]),
  );
  assert.ok(messages.every((m) => m.sender_full_name === 'Welcome Bot'));
  assert.ok(
    messages.every((m) => !m.flags.includes('read')),
    'all unread',
  );
  const starredTopics = messages.filter((m) => m.flags.includes('starred')).map((m) => m.subject);
  assert.deepEqual(starredTopics, ['moving messages', 'experiments', 'start a conversation', 'greetings', 'welcome to Confab!']);
  const greeting = messages.find((m) => m.subject === 'greetings')!;
  assert.deepEqual(
    greeting.reactions.map((r: any) => [r.emoji_name, r.user_id]),
    [['wave', messages[0].sender_id]],
  );
  // The spoiler's link and the mention of the channel render as links.
  assert.match(messages.find((m) => m.subject === 'experiments' && m.content.includes('spoiler'))!.content, /stream-topic|stream/);
  const state = ok(await server.owner.post('/register', { fetch_event_types: ['message', 'update_message_flags'] }));
  assert.equal(state.unread_msgs.count, INITIAL_MESSAGES.length);
});

test('every new member joins the default channels and gets the conversations; bots do not', async () => {
  const watching = await registerViewer(server, server.owner);
  const member = await server.createUser({ role: ROLE.MEMBER });
  await expectStateInSync(server, watching, 'a member arrives in a living organization');
  assert.deepEqual(await subscribed(member), ['Confab', 'general', 'sandbox']);
  const messages = await all(member);
  assert.equal(messages.length, INITIAL_MESSAGES.length);
  assert.ok(messages.every((m) => !m.flags.includes('read')));
  assert.equal(messages.filter((m) => m.flags.includes('starred')).length, 5);
  assert.equal(ok(await member.post('/register', { fetch_event_types: ['message', 'update_message_flags'] })).unread_msgs.count, INITIAL_MESSAGES.length);
  // Their stars and reads are their own: the owner's stay as they were.
  ok(await member.post('/messages/flags', { messages: [messages[0].id], op: 'add', flag: 'read' }));
  assert.ok(!(await all(server.owner))[0].flags.includes('read'));

  const realm = await server.svc.db.selectFrom('realms').selectAll().where('string_id', '=', '').executeTakeFirstOrThrow();
  const bot = await createUserAsOperator(server.svc, realm, {
    email: 'helper-bot@example.com',
    fullName: 'Helper',
    password: null,
    role: ROLE.MEMBER,
    isBot: true,
    botType: 1,
  });
  const rows = await server.svc.db.selectFrom('user_messages').select('message_id').where('user_id', '=', bot.id).execute();
  assert.equal(rows.length, 0);
});

test("an invitation's channels decide which conversations the newcomer gets", async () => {
  const admin = new Browser(server);
  const ownerEmail = (await server.svc.db.selectFrom('users').select('delivery_email').where('id', '=', server.owner.id).executeTakeFirstOrThrow())
    .delivery_email;
  await admin.login(ownerEmail, 'owner-password-1');
  const sandbox = (ok(await server.owner.get('/users/me/subscriptions')).subscriptions as any[]).find((s) => s.name === 'sandbox').stream_id;
  ok(await admin.post('/json/invites', { invitee_emails: 'sandboxer@example.com', stream_ids: [sandbox] }));
  const link = /\/join\/([a-z0-9]+)\//.exec((await server.outbox()).find((m) => m.to === 'sandboxer@example.com')!.text)!;
  const newcomer = new Browser(server);
  ok(await newcomer.post('/json/invites/accept', { key: link[1], full_name: 'Sandboxer', password: 'sandboxer-password-1' }));
  const messages = ok(await newcomer.get('/json/messages', { anchor: 'newest', num_before: 100, num_after: 0 })).messages as any[];
  assert.deepEqual([...new Set(messages.map((m) => m.display_recipient))], ['sandbox']);
  assert.equal(messages.length, INITIAL_MESSAGES.filter((m) => m.channel === 'sandbox').length);
});

test("another organization, created the operator's way, starts the same, with its own messages", async () => {
  const other = await server.createOrganization('fresh');
  assert.deepEqual(await subscribed(other), ['Confab', 'general', 'sandbox']);
  const messages = await all(other);
  assert.equal(messages.length, INITIAL_MESSAGES.length);
  const ours = new Set((await all(server.owner)).map((m) => m.id));
  assert.ok(messages.every((m) => !ours.has(m.id)));
});
