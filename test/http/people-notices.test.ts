// What the system bots say about people and groups, as the reference says it:
// Notification Bot's signup announcement ("joined this organization.") in the
// organization's signups channel, its "accepted your invitation" to the
// inviter, Welcome Bot's quote of the administrators' welcome text to a new
// user, and Notification Bot's "added you to"/"removed you from the group".
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, Client, type Response, ok } from '../support/server.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { ROLE } from '../../src/users/roles.ts';
import { createUserAsOperator, setActive } from '../../src/users/actions.ts';
import { getUser } from '../../src/users/queries.ts';
import { transactAs } from '../../src/db/transact.ts';

// Organization settings are changed in the database here: no cached organization rows.
const server = await startTestServer({ credentialCacheMs: 0 });
after(() => server.close());
const owner = server.owner;
const admin = await server.createUser({ role: ROLE.ADMINISTRATOR, fullName: 'Ada Admin' });
const member = await server.createUser({ fullName: 'Mia Member' });
const other = await server.createUser({ fullName: 'Otto Other' });

function refused(res: Response, msg: string): void {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.msg, msg);
}

const bots = ok(await member.post('/register', { fetch_event_types: ['realm_user'] })).cross_realm_bots as any[];
const notificationBotId: number = bots.find((b) => b.full_name === 'Notification Bot').user_id;
const welcomeBotId: number = bots.find((b) => b.full_name === 'Welcome Bot').user_id;

let counter = 0;
const fresh = (prefix: string) => `${prefix}-${++counter}`;
const freshEmail = (prefix: string) => `${prefix}${++counter}@example.org`;
const mention = (id: number, name: string) => `@_**${name}|${id}**`;
const PASSWORD = 'a-good-password';

async function setRealmSettings(settings: Record<string, unknown>, realmId = 1): Promise<void> {
  const realm = await server.svc.db.selectFrom('realms').select('settings').where('id', '=', realmId).executeTakeFirstOrThrow();
  await server.svc.db
    .updateTable('realms')
    .set({ settings: JSON.stringify({ ...realm.settings, ...settings }) })
    .where('id', '=', realmId)
    .execute();
}

async function messageCount(): Promise<number> {
  const row = await server.svc.db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Messages `c` can read in a narrow, oldest first, raw Markdown, with the reader's flags. */
async function messages(c: Client, narrow: unknown[]): Promise<any[]> {
  const body = ok(await c.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 1000, apply_markdown: false, narrow: JSON.stringify(narrow) }));
  return body.messages;
}

/** What a system bot told `c` directly. */
async function dmsFrom(c: Client, botId: number): Promise<any[]> {
  return (await messages(c, [['dm', [botId]]])).filter((m) => m.sender_id === botId);
}

async function signups(c: Client, channel: string): Promise<any[]> {
  return messages(c, [
    ['channel', channel],
    ['topic', 'signups'],
  ]);
}

async function rendered(c: Client, id: number): Promise<string> {
  return ok(await c.get(`/messages/${id}`)).message.content;
}

/** A channel new users join (a default channel), named as the organization's signups channel. */
async function signupsChannel(): Promise<{ name: string; id: number }> {
  const name = fresh('hall');
  const id = ok(await owner.post('/channels/create', { name, subscribers: [owner.id, admin.id] })).id as number;
  ok(await owner.post('/default_streams', { stream_id: id }));
  await setRealmSettings({ signup_announcements_stream_id: id });
  return { name, id };
}

async function inviteAndToken(by: Client, email: string, params: Record<string, unknown> = {}): Promise<string> {
  ok(await by.post('/invites', { invitee_emails: email, stream_ids: [], ...params }));
  const row = await server.svc.db.selectFrom('invitations').select('token').where('email', '=', email).orderBy('id', 'desc').executeTakeFirstOrThrow();
  return row.token;
}

async function linkToken(by: Client, params: Record<string, unknown> = {}): Promise<string> {
  const link = ok(await by.post('/invites/multiuse', params)).invite_link as string;
  return /\/join\/([a-z2-7]{24})\/$/.exec(link)![1];
}

async function accept(key: string, fullName: string, email?: string): Promise<Client> {
  const res = ok(await server.anonymous.post('/invites/accept', { key, full_name: fullName, password: PASSWORD, ...(email ? { email } : {}) }));
  return new Client(server, res.user_id, res.email, res.api_key);
}

async function createByApi(fullName: string): Promise<Client> {
  const email = freshEmail('api');
  const res = ok(await owner.post('/users', { email, password: PASSWORD, full_name: fullName }));
  return server.clientFor(res.user_id);
}

test('Welcome Bot: a second system bot, in cross_realm_bots beside Notification Bot, never managed', async () => {
  assert.deepEqual(
    bots.map((b) => [b.full_name, b.email, b.is_system_bot, b.bot_owner_id]),
    [
      ['Notification Bot', 'notification-bot@confab.internal', true, null],
      ['Welcome Bot', 'welcome-bot@confab.internal', true, null],
    ],
  );
  assert.ok(!ok(await member.get('/users')).members.some((u: any) => u.user_id === welcomeBotId));
  assert.equal(ok(await member.get(`/users/${welcomeBotId}`)).user.full_name, 'Welcome Bot');
  refused(await owner.patch(`/users/${welcomeBotId}`, { full_name: 'Renamed' }), 'No such user');
  refused(await owner.delete(`/users/${welcomeBotId}`), 'No such user');
  // Every organization has its own, made at its creation.
  const boss = await server.createOrganization(fresh('elsewhere'));
  const theirs = ok(await boss.post('/register', { fetch_event_types: ['realm_user'] })).cross_realm_bots as any[];
  assert.deepEqual(
    theirs.map((b) => b.full_name),
    ['Notification Bot', 'Welcome Bot'],
  );
  assert.ok(!theirs.some((b) => b.user_id === welcomeBotId || b.user_id === notificationBotId));
});

test('signups: "joined this organization." in the signups channel for every way an account is made, unread for all', async () => {
  const hall = await signupsChannel();
  const viewer = await registerViewer(server, admin);

  // POST /users.
  let before = await messageCount();
  const byApi = await createByApi('Api Person');
  assert.equal(await messageCount(), before + 1);
  let [announcement] = (await signups(owner, hall.name)).slice(-1);
  assert.equal(announcement.sender_id, notificationBotId);
  assert.equal(announcement.sender_full_name, 'Notification Bot');
  assert.equal(announcement.subject, 'signups');
  assert.equal(announcement.content, `${mention(byApi.id, 'Api Person')} joined this organization.`);
  // Read for nobody, not even the administrator who made the account (as the reference).
  assert.ok(!announcement.flags.includes('read'));
  const mine = (await signups(byApi, hall.name)).find((m) => m.id === announcement.id);
  assert.ok(mine && !mine.flags.includes('read'), 'the new user (in the default channel) has it unread');
  assert.match(
    await rendered(owner, announcement.id),
    new RegExp(`<span class="user-mention silent" data-user-id="${byApi.id}">Api Person</span> joined this organization\\.`),
  );
  await expectStateInSync(server, viewer, 'after POST /users');

  // The operator's command (manage create-user).
  before = await messageCount();
  const byOperator = await server.createUser({ fullName: 'Operator Person' });
  assert.equal(await messageCount(), before + 1);
  [announcement] = (await signups(owner, hall.name)).slice(-1);
  assert.equal(announcement.content, `${mention(byOperator.id, 'Operator Person')} joined this organization.`);

  // An invitation (the inviter asked not to be told: the announcement alone).
  before = await messageCount();
  const invited = await accept(await inviteAndToken(admin, freshEmail('invited'), { notify_referrer_on_join: false }), 'Invited Person');
  assert.equal(await messageCount(), before + 1);
  [announcement] = (await signups(owner, hall.name)).slice(-1);
  assert.equal(announcement.content, `${mention(invited.id, 'Invited Person')} joined this organization.`);
  await expectStateInSync(server, viewer, 'after an acceptance');

  // A bot is no new member: nothing is said.
  before = await messageCount();
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  await createUserAsOperator(server.svc, realm, { email: freshEmail('bot'), fullName: 'Some Bot', password: null, role: ROLE.MEMBER, isBot: true, botType: 1 });
  assert.equal(await messageCount(), before);
  await setRealmSettings({ signup_announcements_stream_id: -1 });
});

test('signups: nothing when the setting is unset or names an archived channel, nor for the only active person', async () => {
  await setRealmSettings({ signup_announcements_stream_id: -1 });
  let before = await messageCount();
  await createByApi('Unannounced One');
  await server.createUser({ fullName: 'Unannounced Two' });
  assert.equal(await messageCount(), before, 'no signups channel');

  const hall = await signupsChannel();
  ok(await owner.delete(`/streams/${hall.id}`));
  before = await messageCount();
  await createByApi('Unannounced Three');
  assert.equal(await messageCount(), before, 'an archived signups channel');

  // The reference announces nobody to an organization with no other active human.
  const boss = await server.createOrganization(fresh('lonely'));
  const lobby = ok(await boss.post('/channels/create', { name: 'lobby', subscribers: [boss.id] })).id as number;
  await setRealmSettings({ signup_announcements_stream_id: lobby }, boss.realmId);
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', boss.realmId).executeTakeFirstOrThrow();
  // The API keeps an only owner; the action behind it, without that check, keeps the channels' counts right.
  await transactAs(server.svc, realm, null, async (ctx) => setActive(ctx, (await getUser(ctx.tx, realm.id, boss.id))!, false));
  assert.equal((await server.svc.db.selectFrom('channels').select('subscriber_count').where('id', '=', lobby).executeTakeFirstOrThrow()).subscriber_count, 0);
  before = await messageCount();
  await createUserAsOperator(server.svc, realm, { email: freshEmail('first'), fullName: 'First Alone', password: null, role: ROLE.OWNER });
  assert.equal(await messageCount(), before, 'the only active human');
  const second = await createUserAsOperator(server.svc, realm, { email: freshEmail('second'), fullName: 'Second One', password: null, role: ROLE.MEMBER });
  assert.equal(await messageCount(), before + 1);
  const last = await server.svc.db.selectFrom('messages').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
  assert.equal(last.content, `${mention(second.id, 'Second One')} joined this organization.`);
  assert.equal(last.topic, 'signups');
  assert.equal(last.realm_id, boss.realmId);
});

test('the inviter hears "accepted your invitation" when the invitation asked; links tell nobody', async () => {
  const viewer = await registerViewer(server, admin);
  const seen = (await dmsFrom(admin, notificationBotId)).length;

  const newcomer = await accept(await inviteAndToken(admin, freshEmail('asked')), 'Asked Person');
  const told = await dmsFrom(admin, notificationBotId);
  assert.equal(told.length, seen + 1);
  const dm = told.at(-1);
  assert.equal(dm.content, `${mention(newcomer.id, 'Asked Person')} accepted your invitation to join Confab!`);
  assert.equal(dm.sender_full_name, 'Notification Bot');
  assert.deepEqual(dm.display_recipient.map((r: any) => r.id).sort(), [admin.id, notificationBotId].sort());
  assert.ok(!dm.flags.includes('read'), 'unread for the inviter');
  await expectStateInSync(server, viewer, 'after the acceptance');

  // notify_referrer_on_join: false.
  await accept(await inviteAndToken(admin, freshEmail('quiet'), { notify_referrer_on_join: false }), 'Quiet Person');
  assert.equal((await dmsFrom(admin, notificationBotId)).length, seen + 1);
  // A reusable link has no referrer in the reference.
  await accept(await linkToken(admin), 'Link Person', freshEmail('link'));
  assert.equal((await dmsFrom(admin, notificationBotId)).length, seen + 1);
  // The new users themselves hear nothing from Notification Bot.
  assert.deepEqual(await dmsFrom(newcomer, notificationBotId), []);
});

test("Welcome Bot quotes the invitation's welcome text to the new user, starred and unread", async () => {
  const text = 'Glad you are here, **friend**.';
  const newcomer = await accept(await inviteAndToken(admin, freshEmail('welcomed'), { welcome_message_custom_text: text }), 'Welcomed Person');
  const [welcome, ...more] = await dmsFrom(newcomer, welcomeBotId);
  assert.equal(more.length, 0);
  assert.equal(welcome.sender_full_name, 'Welcome Bot');
  assert.equal(welcome.content, `A note from @_*role:administrators*:\n\`\`\`quote\n${text}\n\`\`\``);
  assert.ok(welcome.flags.includes('starred'), 'starred for the new user');
  assert.ok(!welcome.flags.includes('read'), 'and unread');
  const html = await rendered(newcomer, welcome.id);
  assert.match(html, /<span class="user-group-mention silent" data-user-group-id="\d+">role:administrators<\/span>/);
  assert.match(html, /<blockquote>\n<p>Glad you are here, <strong>friend<\/strong>\.<\/p>\n<\/blockquote>/);
  // The new user's register counts it among the starred and the unread.
  const reg = ok(await newcomer.post('/register', { fetch_event_types: ['starred_messages'] }));
  assert.ok(reg.starred_messages.includes(welcome.id));

  // A text with its own fences is quoted with a longer one.
  const fenced = 'Run this:\n```\nnpm start\n```';
  const coder = await accept(await inviteAndToken(admin, freshEmail('coder'), { welcome_message_custom_text: fenced }), 'Coder Person');
  assert.equal((await dmsFrom(coder, welcomeBotId))[0].content, `A note from @_*role:administrators*:\n\`\`\`\`quote\n${fenced}\n\`\`\`\``);

  // A link's text too.
  const linked = await accept(await linkToken(admin, { welcome_message_custom_text: 'Hi from a link' }), 'Linked Person', freshEmail('linked'));
  assert.equal((await dmsFrom(linked, welcomeBotId))[0].content, 'A note from @_*role:administrators*:\n```quote\nHi from a link\n```');

  // An empty text: no message at all.
  const plain = await accept(await inviteAndToken(admin, freshEmail('plain'), { welcome_message_custom_text: '' }), 'Plain Person');
  assert.deepEqual(await dmsFrom(plain, welcomeBotId), []);
});

test("no Welcome Bot message without an administrator's text: member invitations, POST /users, empty text", async () => {
  // A member's text is dropped (null), and the organization has no text of its own.
  const fromMember = await accept(await inviteAndToken(member, freshEmail('m'), { welcome_message_custom_text: 'Ignored' }), 'From Member');
  assert.deepEqual(await dmsFrom(fromMember, welcomeBotId), []);
  assert.deepEqual(await dmsFrom(await createByApi('No Text'), welcomeBotId), []);
  assert.deepEqual(await dmsFrom(await server.createUser({ fullName: 'No Text Operator' }), welcomeBotId), []);
  // An invitation's empty text says nothing; its own text is quoted.
  const silent = await accept(await inviteAndToken(admin, freshEmail('s'), { welcome_message_custom_text: '' }), 'Silent Invited');
  assert.deepEqual(await dmsFrom(silent, welcomeBotId), []);
  const own = await accept(await inviteAndToken(admin, freshEmail('o'), { welcome_message_custom_text: 'Own text' }), 'Own Text');
  assert.equal((await dmsFrom(own, welcomeBotId))[0].content, 'A note from @_*role:administrators*:\n```quote\nOwn text\n```');
});

test('the order of what a new account brings: the inviter, the signups channel, then Welcome Bot', async () => {
  const hall = await signupsChannel();
  const before = await messageCount();
  const newcomer = await accept(await inviteAndToken(admin, freshEmail('ordered'), { welcome_message_custom_text: 'Hello' }), 'Ordered Person');
  assert.equal(await messageCount(), before + 3);
  const toInviter = (await dmsFrom(admin, notificationBotId)).at(-1);
  const announcement = (await signups(owner, hall.name)).at(-1);
  const welcome = (await dmsFrom(newcomer, welcomeBotId)).at(-1);
  assert.ok(toInviter.id < announcement.id && announcement.id < welcome.id);
  await setRealmSettings({ signup_announcements_stream_id: -1 });
});

test('a refused request posts nothing', async () => {
  await signupsChannel();
  const before = await messageCount();
  refused(await owner.post('/users', { email: member.email, password: PASSWORD, full_name: 'Taken Address' }), 'Email is already in use.');
  const key = await inviteAndToken(admin, freshEmail('refused'), { welcome_message_custom_text: 'Hi' });
  const afterInvite = await messageCount();
  assert.equal(afterInvite, before, 'inviting says nothing');
  refused(
    await server.anonymous.post('/invites/accept', { key, full_name: 'Wrong Address', password: PASSWORD, email: 'someone-else@example.org' }),
    'This invitation was sent to another email address.',
  );
  assert.equal(await messageCount(), before);
  await setRealmSettings({ signup_announcements_stream_id: -1 });
});

test('user groups: those someone else adds or removes hear it from Notification Bot; oneself, bots and subgroups do not', async () => {
  const name = fresh('Crew');
  const before = await messageCount();
  // Creating a group with members says nothing (nor does the reference).
  const groupId = ok(await admin.post('/user_groups/create', { name, description: '', members: [other.id] })).group_id as number;
  assert.equal(await messageCount(), before);
  const viewer = await registerViewer(server, member);

  const seenMember = (await dmsFrom(member, notificationBotId)).length;
  const seenAdmin = (await dmsFrom(admin, notificationBotId)).length;
  ok(await admin.post(`/user_groups/${groupId}/members`, { add: JSON.stringify([member.id, admin.id]) }));
  const added = (await dmsFrom(member, notificationBotId)).slice(seenMember);
  assert.equal(added.length, 1);
  assert.equal(added[0].content, `${mention(admin.id, 'Ada Admin')} added you to the group @_*${name}*.`);
  assert.ok(!added[0].flags.includes('read'));
  assert.match(await rendered(member, added[0].id), new RegExp(`<span class="user-group-mention silent" data-user-group-id="${groupId}">${name}</span>`));
  assert.equal((await dmsFrom(admin, notificationBotId)).length, seenAdmin, 'the actor is not told');
  await expectStateInSync(server, viewer, 'after being added');

  ok(await admin.post(`/user_groups/${groupId}/members`, { delete: JSON.stringify([member.id, other.id]) }));
  const removedMember = (await dmsFrom(member, notificationBotId)).at(-1);
  assert.equal(removedMember.content, `${mention(admin.id, 'Ada Admin')} removed you from the group @_*${name}*.`);
  assert.equal((await dmsFrom(other, notificationBotId)).at(-1).content, `${mention(admin.id, 'Ada Admin')} removed you from the group @_*${name}*.`);
  await expectStateInSync(server, viewer, 'after being removed');

  // Adding and removing in one request: both are told, in that order.
  const both = await messageCount();
  ok(await admin.post(`/user_groups/${groupId}/members`, { add: JSON.stringify([member.id]), delete: JSON.stringify([admin.id]) }));
  assert.equal(await messageCount(), both + 1, 'only the member: the admin removed themself');

  // Oneself: leaving and joining say nothing.
  const quiet = await messageCount();
  ok(await admin.post(`/user_groups/${groupId}/members`, { add: JSON.stringify([admin.id]) }));
  ok(await admin.post(`/user_groups/${groupId}/members`, { delete: JSON.stringify([admin.id]) }));
  assert.equal(await messageCount(), quiet);

  // Bots are not told.
  const realm = await server.svc.db.selectFrom('realms').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const bot = await createUserAsOperator(server.svc, realm, {
    email: freshEmail('groupbot'),
    fullName: 'Group Bot',
    password: null,
    role: ROLE.MEMBER,
    isBot: true,
    botType: 1,
  });
  ok(await admin.post(`/user_groups/${groupId}/members`, { add: JSON.stringify([bot.id]) }));
  assert.equal(await messageCount(), quiet);

  // Subgroups: nothing.
  const sub = ok(await admin.post('/user_groups/create', { name: fresh('Sub'), description: '', members: [other.id] })).group_id as number;
  ok(await admin.post(`/user_groups/${groupId}/subgroups`, { add: JSON.stringify([sub]) }));
  ok(await admin.post(`/user_groups/${groupId}/members`, { delete_subgroups: JSON.stringify([sub]) }));
  assert.equal(await messageCount(), quiet);

  // A refused request posts nothing, even for the part that would have worked.
  refused(
    await admin.post(`/user_groups/${groupId}/members`, { add: JSON.stringify([other.id, member.id]) }),
    `User ${member.id} is already a member of this group`,
  );
  assert.equal(await messageCount(), quiet);
});
