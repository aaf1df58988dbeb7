// Notification Bot (the reference's system bot): who it is, and what it says
// about channels — a new channel's first message, the announcement of new
// channels, and the direct message to someone another user subscribed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer, ok } from '../support/server.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { ROLE } from '../../src/users/roles.ts';

let server: TestServer;
let admin: Client;
let member: Client;
let other: Client;
let third: Client;
let botId: number;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com', fullName: 'Ada Admin' });
  member = await server.createUser({ email: 'member@example.com', fullName: 'Mia Member' });
  other = await server.createUser({ email: 'other@example.com', fullName: 'Otto Other' });
  third = await server.createUser({ email: 'third@example.com', fullName: 'Theo Third' });
  const reg = ok(await member.post('/register', { fetch_event_types: ['realm_user'] }));
  botId = reg.cross_realm_bots[0].user_id;
});
after(() => server.close());

const mention = (c: Client, name: string) => `@_**${name}|${c.id}**`;
let counter = 0;
const fresh = (prefix: string) => `${prefix}-${++counter}`;

/** Every message of a channel the client can read, oldest first, raw Markdown. */
async function channelMessages(c: Client, channel: string) {
  const body = ok(
    await c.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 100, apply_markdown: false, narrow: JSON.stringify([['channel', channel]]) }),
  );
  return body.messages as any[];
}

/** What Notification Bot told the client directly, oldest first. */
async function botMessagesTo(c: Client) {
  const body = ok(
    await c.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 100, apply_markdown: false, narrow: JSON.stringify([['dm', [botId]]]) }),
  );
  return (body.messages as any[]).filter((m) => m.sender_id === botId);
}

async function setRealmSettings(settings: Record<string, unknown>) {
  const realm = await server.svc.db.selectFrom('realms').select('settings').where('id', '=', 1).executeTakeFirstOrThrow();
  await server.svc.db
    .updateTable('realms')
    .set({ settings: JSON.stringify({ ...realm.settings, ...settings }) })
    .where('id', '=', 1)
    .execute();
  // Changed behind the actions' back: authenticated requests must not keep the old organization.
  server.svc.credentials.clear();
}

async function messageCount(): Promise<number> {
  const row = await server.svc.db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function channelId(name: string): Promise<number> {
  return ok(await admin.get('/get_stream_id', { stream: name })).stream_id;
}

test('Notification Bot: in cross_realm_bots, not among the users; looked at, never managed', async () => {
  const reg = ok(await member.post('/register', { fetch_event_types: ['realm_user'] }));
  // Welcome Bot follows it (people-notices.test.ts).
  assert.deepEqual(
    reg.cross_realm_bots.map((b: any) => b.full_name),
    ['Notification Bot', 'Welcome Bot'],
  );
  const bot = reg.cross_realm_bots[0];
  assert.deepEqual(
    { ...bot, date_joined: undefined, avatar_url: undefined },
    {
      user_id: botId,
      delivery_email: 'notification-bot@confab.internal',
      email: 'notification-bot@confab.internal',
      full_name: 'Notification Bot',
      date_joined: undefined,
      is_active: true,
      is_owner: false,
      is_admin: false,
      is_guest: false,
      is_bot: true,
      is_system_bot: true,
      bot_type: 1,
      bot_owner_id: null,
      role: ROLE.MEMBER,
      timezone: '',
      avatar_url: undefined,
      avatar_version: 1,
    },
  );
  assert.ok(!reg.realm_users.some((u: any) => u.user_id === botId));
  assert.ok(!ok(await member.get('/users')).members.some((u: any) => u.user_id === botId));
  assert.equal(ok(await member.get(`/users/${botId}`)).user.is_system_bot, true);
  // Ordinary accounts carry no is_system_bot key at all.
  assert.equal('is_system_bot' in ok(await member.get(`/users/${other.id}`)).user, false);

  const noSuchUser = (res: { status: number; body: any }) => {
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.msg, 'No such user');
  };
  noSuchUser(await server.owner.patch(`/users/${botId}`, { full_name: 'Renamed Bot' }));
  noSuchUser(await server.owner.delete(`/users/${botId}`));
  noSuchUser(await server.owner.post(`/users/${botId}/reactivate`));
  noSuchUser(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: fresh('bot-channel') }], principals: [botId] }));
  const bot2 = await server.svc.db.selectFrom('users').selectAll().where('id', '=', botId).executeTakeFirstOrThrow();
  assert.equal(bot2.full_name, 'Notification Bot');
  assert.equal(bot2.is_active, true);
  // It cannot log in: it has no password.
  const login = await server.anonymous.post('/fetch_api_key', { username: 'notification-bot@confab.internal', password: 'anything-at-all' });
  assert.equal(login.status, 401);
  // People may write to it, as to any bot.
  ok(await member.post('/messages', { type: 'direct', to: JSON.stringify([botId]), content: 'hello bot' }));
});

test('every organization has its own Notification Bot', async () => {
  const boss = await server.createOrganization(fresh('otherorg'));
  const reg = ok(await boss.post('/register', { fetch_event_types: ['realm_user'] }));
  assert.equal(reg.cross_realm_bots.length, 2);
  assert.notEqual(reg.cross_realm_bots[0].user_id, botId);
  assert.equal(reg.cross_realm_bots[0].full_name, 'Notification Bot');
  const row = await server.svc.db.selectFrom('users').select('realm_id').where('id', '=', reg.cross_realm_bots[0].user_id).executeTakeFirstOrThrow();
  assert.equal(row.realm_id, boss.realmId);
});

test('a new channel\'s first message: Notification Bot in "channel events", read for its creator only', async () => {
  const name = fresh('Fjords');
  ok(await member.post('/users/me/subscriptions', { subscriptions: [{ name, description: 'Deep **water**' }], principals: [member.id, other.id] }));
  const [first, ...rest] = await channelMessages(member, name);
  assert.equal(rest.length, 0);
  assert.equal(first.sender_id, botId);
  assert.equal(first.sender_full_name, 'Notification Bot');
  assert.equal(first.subject, 'channel events');
  assert.equal(first.content, `**Public** channel created by ${mention(member, 'Mia Member')}. **Description:**\n\`\`\`\` quote\nDeep **water**\n\`\`\`\``);
  assert.ok(first.flags.includes('read'), 'read for the creator');
  const theirs = (await channelMessages(other, name))[0];
  assert.equal(theirs.id, first.id);
  assert.ok(!theirs.flags.includes('read'), 'unread for the others');
  const rendered = ok(await member.get(`/messages/${first.id}`)).message.content;
  assert.match(rendered, new RegExp(`<span class="user-mention silent" data-user-id="${member.id}">Mia Member</span>`));
  assert.match(rendered, /<blockquote>\n<p>Deep <strong>water<\/strong><\/p>\n<\/blockquote>/);
  assert.equal(ok(await member.get(`/streams/${await channelId(name)}`)).stream.first_message_id, first.id);
});

test('the first message names the kind of channel; no description is said so; empty_topic_only uses the general chat', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ invite_only: true }, '**Private, protected history**'],
    [{ invite_only: true, history_public_to_subscribers: true }, '**Private, shared history**'],
    [{ invite_only: false }, '**Public**'],
  ];
  for (const [params, kind] of cases) {
    const name = fresh('kind');
    ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name }], ...params }));
    const [message] = await channelMessages(admin, name);
    assert.equal(message.content, `${kind} channel created by ${mention(admin, 'Ada Admin')}. **Description:**\n\`\`\`\` quote\n*No description.*\n\`\`\`\``);
  }
  await setRealmSettings({ enable_spectator_access: true });
  const web = fresh('web');
  ok(await server.owner.post('/users/me/subscriptions', { subscriptions: [{ name: web }], is_web_public: true }));
  assert.match((await channelMessages(server.owner, web))[0].content, /^\*\*Web-public\*\* channel created by /);

  const general = fresh('general-only');
  ok(await admin.post('/channels/create', { name: general, subscribers: JSON.stringify([admin.id]), topics_policy: 'empty_topic_only' }));
  const [message] = await channelMessages(admin, general);
  assert.equal(message.subject, 'general chat');
  const raw = ok(await admin.get(`/messages/${message.id}`, { allow_empty_topic_name: true })).message;
  assert.equal(raw.subject, '');
});

test('POST /channels/create posts the first message too, and announces when asked', async () => {
  const news = fresh('news');
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: news }], principals: [admin.id, member.id] }));
  await setRealmSettings({ new_stream_announcements_stream_id: await channelId(news) });
  const name = fresh('created');
  const { id } = ok(await member.post('/channels/create', { name, subscribers: JSON.stringify([member.id]), announce: true }));
  const [first] = await channelMessages(member, name);
  assert.equal(first.sender_id, botId);
  assert.equal(ok(await member.get(`/streams/${id}`)).stream.first_message_id, first.id);
  const announcement = (await channelMessages(admin, news)).at(-1);
  assert.equal(announcement.subject, 'new channels');
  assert.equal(announcement.content, `${mention(member, 'Mia Member')} created a new channel #**${name}**.`);
  assert.ok(!announcement.flags.includes('read'));
  assert.ok((await channelMessages(member, news)).at(-1).flags.includes('read'), 'read for whoever created the channel');
  await setRealmSettings({ new_stream_announcements_stream_id: -1 });
});

test('announce: the new-channels channel hears of every channel a request creates; only when asked and only if it exists', async () => {
  const news = fresh('announcements');
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: news }] }));
  const newsId = await channelId(news);
  await setRealmSettings({ new_stream_announcements_stream_id: newsId });
  const count = async () => (await channelMessages(admin, news)).length;
  const before = await count();

  const [a, b] = [fresh('alpha'), fresh('beta*star')];
  ok(await member.post('/users/me/subscriptions', { subscriptions: [{ name: a }, { name: b }], announce: true }));
  const idB = await channelId(b);
  const last = (await channelMessages(admin, news)).at(-1);
  // A name with `*` would break #**...**: it is linked the plain way, as the reference does.
  assert.equal(
    last.content,
    `${mention(member, 'Mia Member')} created the following channels: #**${a}**, [#${b.replace('*', '&#42;')}](#narrow/channel/${idB}-${b}).`,
  );
  assert.equal(await count(), before + 1);

  ok(await member.post('/users/me/subscriptions', { subscriptions: [{ name: fresh('quiet') }] }));
  assert.equal(await count(), before + 1, 'announce defaults to false');
  // Joining channels that exist announces nothing.
  ok(await other.post('/users/me/subscriptions', { subscriptions: [{ name: a }], announce: true }));
  assert.equal(await count(), before + 1);

  ok(await admin.delete(`/streams/${newsId}`));
  const total = await messageCount();
  const quiet = fresh('after-archive');
  ok(await member.post('/users/me/subscriptions', { subscriptions: [{ name: quiet }], announce: true }));
  assert.equal(await messageCount(), total + 1, 'only the first message: an archived channel hears nothing');
  await setRealmSettings({ new_stream_announcements_stream_id: -1 });
});

test('subscribed by someone else: a direct message from Notification Bot, for channels that already existed', async () => {
  const [x, y, z] = [fresh('xray'), fresh('yankee'), fresh('zulu')];
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: x }, { name: y }] }));
  const before = (await botMessagesTo(third)).length;

  const one = ok(await member.post('/users/me/subscriptions', { subscriptions: [{ name: x }], principals: [third.id] }));
  assert.equal(one.new_subscription_messages_sent, true);
  let messages = await botMessagesTo(third);
  assert.equal(messages.length, before + 1);
  const dm = messages.at(-1);
  assert.equal(dm.sender_id, botId);
  assert.equal(dm.content, `${mention(member, 'Mia Member')} subscribed you to #**${x}**.`);
  assert.ok(!dm.flags.includes('read'));

  // Several existing channels: one message listing them (sorted); a channel the request creates is left out.
  ok(await member.post('/users/me/subscriptions', { subscriptions: [{ name: z }, { name: y }, { name: x }], principals: [third.id, member.id] }));
  messages = await botMessagesTo(third);
  assert.equal(messages.length, before + 2);
  assert.equal(messages.at(-1).content, `${mention(member, 'Mia Member')} subscribed you to #**${y}**.`, 'x was already a subscription, z is new');
  const [p, q] = [fresh('papa'), fresh('quebec')];
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: q }, { name: p }] }));
  ok(await member.post('/users/me/subscriptions', { subscriptions: [{ name: q }, { name: p }], principals: [third.id] }));
  // (The reference ends the list with a newline, which sending strips as it does for every message.)
  assert.equal(
    (await botMessagesTo(third)).at(-1).content,
    `${mention(member, 'Mia Member')} subscribed you to the following channels:\n\n* #**${p}**\n* #**${q}**`,
  );
  // The one who subscribed themselves hears nothing.
  assert.equal((await botMessagesTo(member)).length, 0);

  const total = await messageCount();
  const silent = ok(
    await member.post('/users/me/subscriptions', { subscriptions: [{ name: y }], principals: [other.id], send_new_subscription_messages: false }),
  );
  assert.equal('new_subscription_messages_sent' in silent, false);
  assert.equal(await messageCount(), total);
});

test('more than 100 users subscribed at once: nobody is told by direct message', async () => {
  const crowd: Client[] = [];
  for (let i = 0; i < 101; i++) crowd.push(await server.createUser({ email: `crowd${i}@example.com`, fullName: `Crowd ${i}` }));
  const name = fresh('stadium');
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name }] }));
  const total = await messageCount();
  const res = ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: crowd.map((c) => c.id) }));
  assert.equal(Object.keys(res.subscribed).length, 101);
  assert.equal(res.new_subscription_messages_sent, false);
  assert.equal(await messageCount(), total);
  // 100 is still small enough.
  const smaller = fresh('arena');
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: smaller }] }));
  const fewer = ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: smaller }], principals: crowd.slice(0, 100).map((c) => c.id) }));
  assert.equal(fewer.new_subscription_messages_sent, true);
  assert.equal(await messageCount(), total + 1 + 100);
});

test('a refused request posts nothing', async () => {
  const secret = fresh('secret');
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: secret }], invite_only: true }));
  const total = await messageCount();
  const res = await member.post('/users/me/subscriptions', {
    subscriptions: [{ name: fresh('brand-new') }, { name: secret }],
    principals: [member.id, other.id],
  });
  assert.equal(res.status, 400);
  assert.equal(res.body.msg, `Unable to access channel (${secret}).`);
  assert.equal(await messageCount(), total);
});

test('register state stays in sync with the bot messages', async () => {
  const viewer = await registerViewer(server, third);
  const author = await registerViewer(server, member);
  const existing = fresh('sync-existing');
  ok(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: existing }] }));
  ok(await member.post('/users/me/subscriptions', { subscriptions: [{ name: existing }, { name: fresh('sync-new') }], principals: [member.id, third.id] }));
  await expectStateInSync(server, viewer, 'after being subscribed by someone else');
  await expectStateInSync(server, author, 'after creating a channel');
});
