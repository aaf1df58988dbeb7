// What Notification Bot says when a channel changes (the reference's
// zerver/actions/streams.py): rename, description, access, retention, topics
// policy, posting permission, archiving and unarchiving — in the channel's
// "channel events" topic, unread for every subscriber (the one who made the
// change included), except the archiving notice, read for everyone. Nothing is
// said when nothing changed, when the request fails, or when someone else
// unsubscribes you (the reference sends no such message).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer, ok } from '../support/server.ts';
import { expectStateInSync, registerViewer } from '../support/state.ts';
import { ROLE } from '../../src/users/roles.ts';

let server: TestServer;
let admin: Client;
let member: Client;
let other: Client;
let guest: Client;
let moderator: Client;
let botId: number;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: ROLE.ADMINISTRATOR, email: 'admin@example.com', fullName: 'Ada Admin' });
  moderator = await server.createUser({ role: ROLE.MODERATOR, email: 'moderator@example.com', fullName: 'Moe Moderator' });
  member = await server.createUser({ email: 'member@example.com', fullName: 'Mia Member' });
  other = await server.createUser({ email: 'other@example.com', fullName: 'Otto Other' });
  guest = await server.createUser({ role: ROLE.GUEST, email: 'guest@example.com', fullName: 'Gil Guest' });
  const reg = ok(await member.post('/register', { fetch_event_types: ['realm_user'] }));
  botId = reg.cross_realm_bots.find((b: any) => b.email === 'notification-bot@confab.internal').user_id;
});
after(() => server.close());

function refused(res: { status: number; body: any }, msg: string) {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.msg, msg);
}

const mention = (c: Client, name: string) => `@_**${name}|${c.id}**`;
let counter = 0;
const fresh = (prefix: string) => `${prefix}-${++counter}`;

async function messageCount(): Promise<number> {
  const row = await server.svc.db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A channel's messages as the client sees them, oldest first, raw Markdown, the empty topic as is. */
async function messagesIn(c: Client, channelId: number) {
  const narrow = JSON.stringify([['channel', channelId]]);
  const body = ok(await c.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 200, apply_markdown: false, allow_empty_topic_name: true, narrow }));
  return body.messages as any[];
}

const lastIn = async (c: Client, channelId: number) => (await messagesIn(c, channelId)).at(-1);

async function setRealmSettings(settings: Record<string, unknown>) {
  const realm = await server.svc.db.selectFrom('realms').select('settings').where('id', '=', 1).executeTakeFirstOrThrow();
  await server.svc.db
    .updateTable('realms')
    .set({ settings: JSON.stringify({ ...realm.settings, ...settings }) })
    .where('id', '=', 1)
    .execute();
  server.svc.credentials.clear();
}

async function systemGroup(name: string): Promise<number> {
  const groups = ok(await admin.get('/user_groups')).user_groups as any[];
  return groups.find((g) => g.name === name).id;
}

/** A public channel `creator` made, with `subscribers` in it; its id and the notices so far. */
async function channel(creator: Client, subscribers: Client[], extra: Record<string, unknown> = {}): Promise<{ id: number; name: string }> {
  const name = fresh('notices');
  ok(await creator.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: subscribers.map((s) => s.id), ...extra }));
  return { id: ok(await creator.get('/get_stream_id', { stream: name })).stream_id, name };
}

/** The last message of the channel: Notification Bot's, in the topic, with this text; unread for all `unreadFor`, read for all `readFor`. */
async function expectNotice(channelId: number, content: string, who: { unreadFor?: Client[]; readFor?: Client[]; topic?: string }) {
  const viewers = [...(who.unreadFor ?? []), ...(who.readFor ?? [])];
  const notice = await lastIn(viewers[0], channelId);
  assert.equal(notice.sender_id, botId);
  assert.equal(notice.sender_full_name, 'Notification Bot');
  assert.equal(notice.subject, who.topic ?? 'channel events');
  assert.equal(notice.content, content);
  for (const c of who.unreadFor ?? []) {
    const theirs = await lastIn(c, channelId);
    assert.equal(theirs.id, notice.id);
    assert.ok(!theirs.flags.includes('read'), `unread for ${c.id}`);
  }
  for (const c of who.readFor ?? []) {
    const theirs = await lastIn(c, channelId);
    assert.equal(theirs.id, notice.id);
    assert.ok(theirs.flags.includes('read'), `read for ${c.id}`);
  }
  return notice;
}

/** Runs the request and checks it posted nothing. */
async function postsNothing(request: () => Promise<unknown>) {
  const before = await messageCount();
  await request();
  assert.equal(await messageCount(), before);
}

test('rename: "renamed channel **old** to **new**", unread for everyone subscribed, the one who renamed included', async () => {
  const { id, name } = await channel(member, [member, other]);
  const renamed = fresh('renamed');
  ok(await member.patch(`/streams/${id}`, { new_name: renamed }));
  const notice = await expectNotice(id, `${mention(member, 'Mia Member')} renamed channel **${name}** to **${renamed}**.`, { unreadFor: [member, other] });
  const rendered = ok(await member.get(`/messages/${notice.id}`)).message.content;
  assert.equal(
    rendered,
    `<p><span class="user-mention silent" data-user-id="${member.id}">Mia Member</span> renamed channel <strong>${name}</strong> to <strong>${renamed}</strong>.</p>`,
  );

  // Only the case changes: still a rename.
  ok(await member.patch(`/streams/${id}`, { new_name: renamed.toUpperCase() }));
  await expectNotice(id, `${mention(member, 'Mia Member')} renamed channel **${renamed}** to **${renamed.toUpperCase()}**.`, { unreadFor: [member] });

  // The same name (after trimming), or a name in use: nothing said.
  await postsNothing(async () => ok(await member.patch(`/streams/${id}`, { new_name: ` ${renamed.toUpperCase()} ` })));
  const taken = await channel(member, [member]);
  await postsNothing(async () => refused(await member.patch(`/streams/${id}`, { new_name: taken.name }), 'Channel name is already in use.'));
});

test('description: old and new quoted, an empty one as *No description.*; nothing for the same text', async () => {
  const { id } = await channel(member, [member, other]);
  ok(await member.patch(`/streams/${id}`, { description: 'Fjords and **boats**' }));
  const notice = await expectNotice(
    id,
    `${mention(member, 'Mia Member')} changed the description for this channel.\n\n` +
      '* **Old description:**\n```` quote\n*No description.*\n````\n' +
      '* **New description:**\n```` quote\nFjords and **boats**\n````',
    { unreadFor: [member, other] },
  );
  const rendered = ok(await other.get(`/messages/${notice.id}`)).message.content;
  assert.match(rendered, /<blockquote>\n<p>Fjords and <strong>boats<\/strong><\/p>\n<\/blockquote>/);

  ok(await member.patch(`/streams/${id}`, { description: '' }));
  await expectNotice(
    id,
    `${mention(member, 'Mia Member')} changed the description for this channel.\n\n` +
      '* **Old description:**\n```` quote\nFjords and **boats**\n````\n' +
      '* **New description:**\n```` quote\n*No description.*\n````',
    { unreadFor: [member, other] },
  );
  await postsNothing(async () => ok(await member.patch(`/streams/${id}`, { description: '' })));
});

test('access: the change of the kind of channel, from **old** to **new**', async () => {
  const { id } = await channel(member, [member, other]);
  const said = (from: string, to: string) =>
    `${mention(member, 'Mia Member')} changed the [access permissions](/help/channel-permissions) for this channel from **${from}** to **${to}**.`;
  ok(await member.patch(`/streams/${id}`, { is_private: true }));
  await expectNotice(id, said('Public', 'Private, protected history'), { unreadFor: [member, other] });
  ok(await member.patch(`/streams/${id}`, { history_public_to_subscribers: true }));
  await expectNotice(id, said('Private, protected history', 'Private, shared history'), { unreadFor: [member, other] });
  ok(await member.patch(`/streams/${id}`, { is_private: false }));
  await expectNotice(id, said('Private, shared history', 'Public'), { unreadFor: [member, other] });

  // Nothing changes, or the request is refused: nothing said.
  await postsNothing(async () => ok(await member.patch(`/streams/${id}`, { is_private: false, history_public_to_subscribers: true })));
  await postsNothing(async () => refused(await member.patch(`/streams/${id}`, { is_web_public: true }), 'Web-public channels are not enabled.'));
  await postsNothing(async () =>
    refused(await member.patch(`/streams/${id}`, { is_private: false, history_public_to_subscribers: false }), 'Invalid parameters'),
  );

  await setRealmSettings({ enable_spectator_access: true });
  ok(await server.owner.patch(`/streams/${id}`, { is_web_public: true }));
  const owner = ok(await server.owner.get('/users/me'));
  await expectNotice(
    id,
    `${mention(server.owner, owner.full_name)} changed the [access permissions](/help/channel-permissions) for this channel from **Public** to **Web-public**.`,
    { unreadFor: [member, other] },
  );
  await setRealmSettings({ enable_spectator_access: false });
});

test('message retention: old and new periods (the organization default where the channel has none), and what it means', async () => {
  const { id } = await channel(member, [member, other]);
  const owner = ok(await server.owner.get('/users/me'));
  const said = (from: string, to: string, summary: string) =>
    `${mention(server.owner, owner.full_name)} has changed the [message retention period](/help/message-retention-policy) for this channel:\n` +
    `* **Old retention period**: ${from}\n* **New retention period**: ${to}\n\n${summary}`;
  const deleted = (days: number) => `Messages in this channel will now be automatically deleted ${days} days after they are sent.`;

  ok(await server.owner.patch(`/streams/${id}`, { message_retention_days: 10 }));
  await expectNotice(id, said('Forever', '10 days', deleted(10)), { unreadFor: [member, other] });
  ok(await server.owner.patch(`/streams/${id}`, { message_retention_days: '"unlimited"' }));
  await expectNotice(id, said('10 days', 'Forever', 'Messages in this channel will now be retained forever.'), { unreadFor: [member] });

  await setRealmSettings({ message_retention_days: 30 });
  ok(await server.owner.patch(`/streams/${id}`, { message_retention_days: '"realm_default"' }));
  await expectNotice(id, said('Forever', '30 days', deleted(30)), { unreadFor: [member] });
  ok(await server.owner.patch(`/streams/${id}`, { message_retention_days: 7 }));
  await expectNotice(id, said('30 days', '7 days', deleted(7)), { unreadFor: [member] });
  await setRealmSettings({ message_retention_days: -1 });

  await postsNothing(async () => ok(await server.owner.patch(`/streams/${id}`, { message_retention_days: 7 })));
  await postsNothing(async () => refused(await member.patch(`/streams/${id}`, { message_retention_days: 9 }), 'Must be an organization owner'));
});

test('topics policy: the setting by its names; after the change, a channel kept to the general chat hears it there', async () => {
  const { id } = await channel(admin, [admin, member]);
  const said = (from: string, to: string) =>
    `${mention(admin, 'Ada Admin')} changed the "Allow posting to the *general chat* topic?" setting from **${from}** to **${to}**.`;
  ok(await admin.patch(`/streams/${id}`, { topics_policy: 'disable_empty_topic' }));
  await expectNotice(id, said('Automatic', 'No *general chat* topic'), { unreadFor: [admin, member] });
  ok(await admin.patch(`/streams/${id}`, { topics_policy: 'allow_empty_topic' }));
  await expectNotice(id, said('No *general chat* topic', '*general chat* topic allowed'), { unreadFor: [admin, member] });
  // Refused (the notices are in a named topic) or unchanged: nothing said.
  await postsNothing(async () =>
    refused(
      await admin.patch(`/streams/${id}`, { topics_policy: 'empty_topic_only' }),
      'To enable this configuration, all messages in this channel must be in the general chat topic. Consider renaming or deleting topics.',
    ),
  );
  await postsNothing(async () => ok(await admin.patch(`/streams/${id}`, { topics_policy: 'allow_empty_topic' })));
  await postsNothing(async () =>
    refused(await member.patch(`/streams/${id}`, { topics_policy: 'inherit' }), 'You do not have permission to administer this channel.'),
  );

  // A channel kept to the general chat: its notices go there (the reference's channel_events_topic_name).
  const general = fresh('general-only');
  const { id: gid } = ok(
    await admin.post('/channels/create', { name: general, subscribers: JSON.stringify([admin.id, member.id]), topics_policy: 'empty_topic_only' }),
  );
  ok(await admin.patch(`/streams/${gid}`, { description: 'Only here' }));
  await expectNotice(
    gid,
    `${mention(admin, 'Ada Admin')} changed the description for this channel.\n\n* **Old description:**\n\`\`\`\` quote\n*No description.*\n\`\`\`\`\n* **New description:**\n\`\`\`\` quote\nOnly here\n\`\`\`\``,
    { unreadFor: [member], topic: '' },
  );
  ok(await admin.patch(`/streams/${gid}`, { topics_policy: 'inherit' }));
  await expectNotice(gid, said('Only *general chat* topic allowed', 'Automatic'), { unreadFor: [member], topic: 'channel events' });
});

test('posting permission: old and new holders, groups then users by id; other permissions are not announced', async () => {
  const { id } = await channel(member, [member, other]);
  const [everyone, admins, moderators] = [await systemGroup('role:everyone'), await systemGroup('role:administrators'), await systemGroup('role:moderators')];
  assert.equal(ok(await member.get(`/streams/${id}`)).stream.can_send_message_group, everyone);
  const said = (from: string, to: string) =>
    `${mention(member, 'Mia Member')} changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n* **Old**: ${from}\n* **New**: ${to}`;

  ok(await member.patch(`/streams/${id}`, { can_send_message_group: JSON.stringify({ new: admins, old: everyone }) }));
  const notice = await expectNotice(id, said('@_*role:everyone*', '@_*role:administrators*'), { unreadFor: [member, other] });
  const rendered = ok(await member.get(`/messages/${notice.id}`)).message.content;
  assert.match(rendered, new RegExp(`data-user-group-id="${admins}"`));

  const anonymous = { direct_members: [other.id, member.id], direct_subgroups: [moderators] };
  ok(await member.patch(`/streams/${id}`, { can_send_message_group: JSON.stringify({ new: anonymous }) }));
  const holders = `@_*role:moderators*, ${mention(member, 'Mia Member')}, ${mention(other, 'Otto Other')}`;
  await expectNotice(id, said('@_*role:administrators*', holders), { unreadFor: [member, other] });
  // From an anonymous value (whose group the change drops) back to a named group.
  ok(await member.patch(`/streams/${id}`, { can_send_message_group: JSON.stringify({ new: everyone }) }));
  await expectNotice(id, said(holders, '@_*role:everyone*'), { unreadFor: [member, other] });

  // The same value, a stale `old`, or another permission: nothing said.
  await postsNothing(async () => ok(await member.patch(`/streams/${id}`, { can_send_message_group: JSON.stringify({ new: everyone }) })));
  await postsNothing(async () =>
    refused(
      await member.patch(`/streams/${id}`, { can_send_message_group: JSON.stringify({ new: admins, old: moderators }) }),
      "'old' value does not match the expected value.",
    ),
  );
  await postsNothing(async () => ok(await member.patch(`/streams/${id}`, { can_add_subscribers_group: JSON.stringify({ new: moderators }) })));
});

test('archiving: "has been archived.", read for everyone; unarchiving: "has been unarchived.", unread for everyone', async () => {
  const { id, name } = await channel(member, [member, other]);
  ok(await member.delete(`/streams/${id}`));
  await expectNotice(id, `Channel #**${name}** has been archived.`, { readFor: [member, other] });
  await postsNothing(async () => refused(await member.delete(`/streams/${id}`), 'Channel is already archived'));
  await postsNothing(async () => ok(await member.patch(`/streams/${id}`, { is_archived: true })));

  ok(await member.patch(`/streams/${id}`, { is_archived: false }));
  await expectNotice(id, `Channel #**${name}** has been unarchived.`, { unreadFor: [member, other] });
  await postsNothing(async () => ok(await member.patch(`/streams/${id}`, { is_archived: false })));

  // Archiving through PATCH says the same.
  ok(await member.patch(`/streams/${id}`, { is_archived: true }));
  await expectNotice(id, `Channel #**${name}** has been archived.`, { readFor: [member, other] });
});

test('several changes at once: one notice each, in the reference order (access, description, name)', async () => {
  const { id, name } = await channel(member, [member, other]);
  const before = (await messagesIn(member, id)).length;
  const renamed = fresh('together');
  ok(await member.patch(`/streams/${id}`, { new_name: renamed, description: 'All at once', is_private: true, history_public_to_subscribers: true }));
  const notices = (await messagesIn(member, id)).slice(before);
  assert.deepEqual(
    notices.map((m) => m.content.split('\n')[0]),
    [
      `${mention(member, 'Mia Member')} changed the [access permissions](/help/channel-permissions) for this channel from **Public** to **Private, shared history**.`,
      `${mention(member, 'Mia Member')} changed the description for this channel.`,
      `${mention(member, 'Mia Member')} renamed channel **${name}** to **${renamed}**.`,
    ],
  );
  assert.ok(notices.every((m) => m.sender_id === botId && m.subject === 'channel events' && !m.flags.includes('read')));
});

test('a request that fails part way posts nothing and changes nothing', async () => {
  const { id, name } = await channel(member, [member]);
  const taken = await channel(member, [member]);
  await postsNothing(async () =>
    refused(await member.patch(`/streams/${id}`, { description: 'Never seen', is_private: true, new_name: taken.name }), 'Channel name is already in use.'),
  );
  const stream = ok(await member.get(`/streams/${id}`)).stream;
  assert.deepEqual([stream.name, stream.description, stream.invite_only], [name, '', false]);
});

test('who may change a channel is who makes Notification Bot speak: guest, member, moderator refused; administrator, owner heard', async () => {
  const { id } = await channel(admin, [admin, member, guest]);
  for (const c of [guest, member, moderator]) {
    await postsNothing(async () => refused(await c.patch(`/streams/${id}`, { description: 'mine' }), 'You do not have permission to administer this channel.'));
    await postsNothing(async () => refused(await c.delete(`/streams/${id}`), 'You do not have permission to administer this channel.'));
  }
  const owner = ok(await server.owner.get('/users/me'));
  for (const [c, fullName, text] of [
    [admin, 'Ada Admin', 'by admin'],
    [server.owner, owner.full_name, 'by owner'],
  ] as const) {
    ok(await c.patch(`/streams/${id}`, { description: text }));
    const notice = await lastIn(member, id);
    assert.equal(notice.sender_id, botId);
    assert.ok(notice.content.startsWith(`${mention(c, fullName)} changed the description for this channel.`));
    assert.ok(notice.content.endsWith(`\`\`\`\` quote\n${text}\n\`\`\`\``));
  }
  // The guest, subscribed, gets the notice like everyone else.
  assert.equal((await lastIn(guest, id)).content, (await lastIn(member, id)).content);
});

test('unsubscribed by someone else: no message (the reference sends none)', async () => {
  const { name } = await channel(admin, [admin, other]);
  await postsNothing(async () => {
    const res = ok(await admin.delete('/users/me/subscriptions', { subscriptions: JSON.stringify([name]), principals: JSON.stringify([other.id]) }));
    assert.deepEqual(res.removed, [name]);
  });
});

test('register state stays in sync with the notices', async () => {
  const { id } = await channel(member, [member, other]);
  const actor = await registerViewer(server, member);
  const watcher = await registerViewer(server, other);
  ok(await member.patch(`/streams/${id}`, { new_name: fresh('synced'), description: 'Synced' }));
  ok(await member.patch(`/streams/${id}`, { is_private: true }));
  ok(await member.patch(`/streams/${id}`, { can_send_message_group: JSON.stringify({ new: await systemGroup('role:administrators') }) }));
  ok(await server.owner.patch(`/streams/${id}`, { message_retention_days: 5 }));
  await expectStateInSync(server, actor, 'after changing the channel');
  await expectStateInSync(server, watcher, 'after the channel changed');
  ok(await member.delete(`/streams/${id}`));
  await expectStateInSync(server, actor, 'after archiving');
  await expectStateInSync(server, watcher, 'after the channel was archived');
  ok(await member.patch(`/streams/${id}`, { is_archived: false }));
  await expectStateInSync(server, actor, 'after unarchiving');
  await expectStateInSync(server, watcher, 'after the channel was unarchived');
});
