// What Notification Bot says when messages move (the reference's
// do_update_message): the breadcrumbs in the topics the messages left and
// joined, by send_notification_to_old_thread / _new_thread and propagate_mode,
// the resolve and unresolve notices and their undo, who has them read.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { registerViewer, expectStateInSync } from '../support/state.ts';
import { FLAG_BITS } from '../../src/messages/flags/flags.ts';
import {
  age,
  channel,
  events,
  expectError,
  flagBits,
  listen,
  send,
  setChannelPermission,
  startOrg,
  withPermissions,
  type Org,
} from './message-edit.fixture.ts';
import type { Client } from '../support/server.ts';

let o: Org;
let botId: number;
let realmUrl: string;
before(async () => {
  o = await startOrg();
  const reg = await o.alice.post('/register', { fetch_event_types: ['realm', 'realm_user'] });
  botId = reg.body.cross_realm_bots.find((b: any) => b.full_name === 'Notification Bot').user_id;
  realmUrl = reg.body.realm_url;
});
after(() => o.server.close());

const edit = (c: Client, id: number, params: Record<string, unknown>) => c.patch(`/messages/${id}`, params);
const mention = (c: Client) =>
  `@_**${({ [o.alice.id]: 'Alice Able', [o.bob.id]: 'Bob Baker', [o.carol.id]: 'Carol Cole', [o.moderator.id]: 'Mo Derator', [o.admin.id]: 'Ada Admin' } as Record<number, string>)[c.id]}|${c.id}**`;

let names = 0;
/** A public channel of its own for each test, everyone but the guest subscribed. */
const place = (name = `place-${++names}`, params: Record<string, unknown> = {}) => channel(o, [o.admin, o.moderator, o.alice, o.bob, o.carol], params, name);

async function lastMessageId(): Promise<number> {
  const row = await o.server.svc.db
    .selectFrom('messages')
    .select((eb) => eb.fn.max<number>('id').as('id'))
    .executeTakeFirstOrThrow();
  return row.id ?? 0;
}

/** What Notification Bot posted since `mark`, oldest first: where and what. */
async function posted(mark: number): Promise<{ id: number; channel: number | null; topic: string; content: string }[]> {
  const rows = await o.server.svc.db
    .selectFrom('messages')
    .select(['id', 'channel_id', 'topic', 'content'])
    .where('sender_id', '=', botId)
    .where('id', '>', mark)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: r.id, channel: r.channel_id, topic: r.topic, content: r.content }));
}

const said = async (mark: number) => (await posted(mark)).map(({ channel: c, topic, content }) => [c, topic, content]);

/** Messages of a topic as a client reads them, oldest first (raw Markdown). */
async function topicMessages(c: Client, channelId: number, topic: string): Promise<any[]> {
  const narrow = JSON.stringify([
    ['channel', channelId],
    ['topic', topic],
  ]);
  const res = await c.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 100, apply_markdown: false, allow_empty_topic_name: true, narrow });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.messages;
}

async function topicOf(channelId: number, topic: string, n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) ids.push(await send(i % 2 ? o.bob : o.alice, channelId, topic, `message ${i + 1}`));
  return ids;
}

const isRead = async (c: Client, id: number) => ((await flagBits(o, c, id))! & FLAG_BITS.read) !== 0;

test('a whole topic renamed: "This topic was moved here from" in the new topic, nothing in the old one by default', async () => {
  const ch = await place('Lisbon');
  const ids = await topicOf(ch, 'lunch', 3);
  const mark = await lastMessageId();
  assert.equal((await edit(o.carol, ids[1], { topic: 'dinner', propagate_mode: 'change_all' })).status, 200);
  assert.deepEqual(await said(mark), [[ch, 'dinner', `This topic was moved here from #**Lisbon>lunch** by ${mention(o.carol)}.`]]);
  const dinner = await topicMessages(o.alice, ch, 'dinner');
  assert.deepEqual(dinner.map((m) => m.id).slice(0, 3), ids);
  assert.equal(dinner[3].sender_id, botId);
  assert.equal(dinner[3].sender_full_name, 'Notification Bot');
  assert.deepEqual(await topicMessages(o.alice, ch, 'lunch'), []);
});

test('the texts for one message, several, and a whole topic, in the new and the old topic', async () => {
  const ch = await place('Porto');
  const both = { send_notification_to_old_thread: true, send_notification_to_new_thread: true };

  // One message (change_one) out of a topic that keeps others: a link to it where it now is.
  const one = await topicOf(ch, 'first source', 3);
  let mark = await lastMessageId();
  assert.equal((await edit(o.carol, one[0], { topic: 'single one', ...both })).status, 200);
  assert.deepEqual(await said(mark), [
    [
      ch,
      'single one',
      `[A message](${realmUrl}/#narrow/channel/${ch}-Porto/topic/single.20one/near/${one[0]}) was moved here from #**Porto>first source** by ${mention(o.carol)}.`,
    ],
    [ch, 'first source', `A message was moved from this topic to #**Porto>single one** by ${mention(o.carol)}.`],
  ]);

  // Several (change_later from the middle): counted.
  const several = await topicOf(ch, 'second source', 5);
  mark = await lastMessageId();
  assert.equal((await edit(o.carol, several[2], { topic: 'the later ones', propagate_mode: 'change_later', ...both })).status, 200);
  assert.deepEqual(await said(mark), [
    [ch, 'the later ones', `3 messages were moved here from #**Porto>second source** by ${mention(o.carol)}.`],
    [ch, 'second source', `3 messages were moved from this topic to #**Porto>the later ones** by ${mention(o.carol)}.`],
  ]);

  // The whole topic as the mover sees it (change_later from its first message) is a topic move.
  const whole = await topicOf(ch, 'third source', 3);
  mark = await lastMessageId();
  assert.equal((await edit(o.carol, whole[0], { topic: 'everything', propagate_mode: 'change_later', ...both })).status, 200);
  assert.deepEqual(await said(mark), [
    [ch, 'everything', `This topic was moved here from #**Porto>third source** by ${mention(o.carol)}.`],
    [ch, 'third source', `This topic was moved to #**Porto>everything** by ${mention(o.carol)}.`],
  ]);

  // A single message alone in its topic is a whole topic too.
  const alone = await send(o.alice, ch, 'alone', 'just me');
  mark = await lastMessageId();
  assert.equal((await edit(o.carol, alone, { topic: 'still alone', ...both })).status, 200);
  assert.deepEqual(await said(mark), [
    [ch, 'still alone', `This topic was moved here from #**Porto>alone** by ${mention(o.carol)}.`],
    [ch, 'alone', `This topic was moved to #**Porto>still alone** by ${mention(o.carol)}.`],
  ]);

  // A whole topic joining a topic with messages the mover sees: counted, as a partial move.
  await send(o.bob, ch, 'destination', 'already here');
  const merging = await topicOf(ch, 'merging', 2);
  mark = await lastMessageId();
  assert.equal((await edit(o.carol, merging[0], { topic: 'destination', propagate_mode: 'change_all', ...both })).status, 200);
  assert.deepEqual(await said(mark), [
    [ch, 'destination', `2 messages were moved here from #**Porto>merging** by ${mention(o.carol)}.`],
    [ch, 'merging', `This topic was moved to #**Porto>destination** by ${mention(o.carol)}.`],
  ]);
  // And a single message joining one: the link names its new place.
  const stray = await topicOf(ch, 'strays', 2);
  mark = await lastMessageId();
  assert.equal((await edit(o.carol, stray[1], { topic: 'destination' })).status, 200);
  assert.deepEqual(await said(mark), [
    [
      ch,
      'destination',
      `[A message](${realmUrl}/#narrow/channel/${ch}-Porto/topic/destination/near/${stray[1]}) was moved here from #**Porto>strays** by ${mention(o.carol)}.`,
    ],
  ]);
  // A later move takes the breadcrumbs along like any message of the topic.
  mark = await lastMessageId();
  assert.equal((await edit(o.carol, one[1], { topic: 'first again', propagate_mode: 'change_later' })).status, 200);
  assert.deepEqual(await said(mark), [[ch, 'first again', `This topic was moved here from #**Porto>first source** by ${mention(o.carol)}.`]]);
  assert.deepEqual(
    (await topicMessages(o.alice, ch, 'first again')).map((m) => m.sender_id === botId),
    [false, false, true, true],
  );
});

test('the two flags: each notice alone, both (the new topic first), neither', async () => {
  const ch = await place('Faro');
  const cases: [boolean | undefined, boolean | undefined, string[]][] = [
    [undefined, undefined, ['new']],
    [false, true, ['new']],
    [true, false, ['old']],
    [true, true, ['new', 'old']],
    [false, false, []],
    [true, undefined, ['new', 'old']],
  ];
  for (const [i, [old, fresh, expected]] of cases.entries()) {
    const ids = await topicOf(ch, `flags ${i}`, 2);
    const params: Record<string, unknown> = { topic: `flags ${i} moved`, propagate_mode: 'change_all' };
    if (old !== undefined) params.send_notification_to_old_thread = old;
    if (fresh !== undefined) params.send_notification_to_new_thread = fresh;
    const mark = await lastMessageId();
    assert.equal((await edit(o.carol, ids[0], params)).status, 200);
    const where = (await posted(mark)).map((m) => (m.topic === `flags ${i} moved` ? 'new' : m.topic === `flags ${i}` ? 'old' : m.topic));
    assert.deepEqual(where, expected, JSON.stringify(params));
  }
});

test('moves to another channel: links to both channels, with or without a new topic; a resolve there is a move too', async () => {
  const from = await place('Braga');
  const to = await place('Coimbra');
  const both = { send_notification_to_old_thread: true, send_notification_to_new_thread: true };
  const ids = await topicOf(from, 'trip', 3);
  let mark = await lastMessageId();
  assert.equal((await edit(o.alice, ids[2], { stream_id: to, ...both })).status, 200);
  assert.deepEqual(await said(mark), [
    [
      to,
      'trip',
      `[A message](${realmUrl}/#narrow/channel/${to}-Coimbra/topic/trip/near/${ids[2]}) was moved here from #**Braga>trip** by ${mention(o.alice)}.`,
    ],
    [from, 'trip', `A message was moved from this topic to #**Coimbra>trip** by ${mention(o.alice)}.`],
  ]);
  mark = await lastMessageId();
  assert.equal((await edit(o.alice, ids[0], { stream_id: to, topic: 'journey', propagate_mode: 'change_all', ...both })).status, 200);
  // The whole topic left, the old breadcrumb with it; the destination topic is new.
  assert.deepEqual(await said(mark), [
    [to, 'journey', `This topic was moved here from #**Braga>trip** by ${mention(o.alice)}.`],
    [from, 'trip', `This topic was moved to #**Coimbra>journey** by ${mention(o.alice)}.`],
  ]);
  assert.equal((await topicMessages(o.alice, to, 'journey')).length, 4, 'two messages, the breadcrumb they took along, and the new one');

  // Resolving while moving to another channel: breadcrumbs, no resolve notice.
  const bug = await topicOf(from, 'bug', 2);
  mark = await lastMessageId();
  assert.equal((await edit(o.alice, bug[0], { stream_id: to, topic: '✔ bug', propagate_mode: 'change_all' })).status, 200);
  assert.deepEqual(await said(mark), [[to, '✔ bug', `This topic was moved here from #**Braga>bug** by ${mention(o.alice)}.`]]);
});

test('topic links: the empty topic, and names that would break #**channel>topic**', async () => {
  const ch = await place('Évora');
  const odd = await place('R&D [lab]');
  const both = { send_notification_to_old_thread: true, send_notification_to_new_thread: true };
  const general = await send(o.alice, ch, '', 'in general chat');
  let mark = await lastMessageId();
  assert.equal((await edit(o.carol, general, { topic: 'a > b', ...both })).status, 200);
  assert.deepEqual(await said(mark), [
    [ch, 'a > b', `This topic was moved here from #**Évora>** by ${mention(o.carol)}.`],
    [ch, '', `This topic was moved to [#Évora > a &gt; b](#narrow/channel/${ch}-.C3.89vora/topic/a.20.3E.20b) by ${mention(o.carol)}.`],
  ]);
  mark = await lastMessageId();
  assert.equal((await edit(o.carol, general, { stream_id: odd, topic: '', propagate_mode: 'change_one', ...both })).status, 200);
  assert.deepEqual(await said(mark), [
    [
      odd,
      '',
      `[A message](${realmUrl}/#narrow/channel/${odd}-R.26D-.5Blab.5D/topic//near/${general}) was moved here from [#Évora > a &gt; b](#narrow/channel/${ch}-.C3.89vora/topic/a.20.3E.20b) by ${mention(o.carol)}.`,
    ],
    [
      ch,
      'a > b',
      `A message was moved from this topic to [#R&amp;D &#91;lab&#93; > general chat](#narrow/channel/${odd}-R.26D-.5Blab.5D/topic/) by ${mention(o.carol)}.`,
    ],
  ]);
  // As the clients see it: links and a silent mention.
  const [notice] = (await o.bob.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: JSON.stringify([['channel', ch]]) })).body.messages;
  assert.ok(notice.content.includes(`<a href="#narrow/channel/${odd}-R.26D-.5Blab.5D/topic/">#R&amp;D &#91;lab&#93; &gt; general chat</a>`), notice.content);
  assert.match(notice.content, /<span class="user-mention silent" data-user-id="\d+">Carol Cole<\/span>/);
});

test('what the mover sees decides "This topic was moved here": messages they cannot read do not count', async () => {
  const from = await place('Sintra');
  const vault = await channel(o, [o.alice], { invite_only: true, history_public_to_subscribers: false }, 'Vault');
  const hidden = await send(o.alice, vault, 'plans', 'before carol joined');
  assert.equal((await o.owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'Vault' }], principals: [o.carol.id] })).status, 200);
  const ids = await topicOf(from, 'plans', 2);
  let mark = await lastMessageId();
  assert.equal((await edit(o.carol, ids[0], { stream_id: vault, propagate_mode: 'change_all' })).status, 200);
  assert.deepEqual(await said(mark), [[vault, 'plans', `This topic was moved here from #**Sintra>plans** by ${mention(o.carol)}.`]]);
  // Alice, who sees the older message, moving a whole topic in: counted.
  const more = await topicOf(from, 'plans', 2);
  mark = await lastMessageId();
  assert.equal((await edit(o.alice, more[0], { stream_id: vault, propagate_mode: 'change_all' })).status, 200);
  assert.deepEqual(await said(mark), [[vault, 'plans', `2 messages were moved here from #**Sintra>plans** by ${mention(o.alice)}.`]]);
  assert.ok(hidden);
});

test('the breadcrumbs are read for the mover, unread for the others; everyone hears of them', async () => {
  const ch = await place('Tavira');
  const ids = await topicOf(ch, 'news', 2);
  const queues = { carol: await listen(o.carol, { event_types: ['message'] }), bob: await listen(o.bob, { event_types: ['message'] }) };
  const viewers = [await registerViewer(o.server, o.bob), await registerViewer(o.server, o.carol)];
  const mark = await lastMessageId();
  const res = await edit(o.carol, ids[0], { topic: 'old news', propagate_mode: 'change_all', send_notification_to_old_thread: true });
  assert.equal(res.status, 200);
  const notices = await posted(mark);
  assert.equal(notices.length, 2);
  for (const { id } of notices) {
    assert.equal(await isRead(o.carol, id), true, 'the mover has it read');
    assert.equal(await isRead(o.bob, id), false);
    assert.equal(await isRead(o.alice, id), false);
  }
  const carolGot = await events(queues.carol, 'message');
  assert.deepEqual(
    carolGot.map((e) => [e.message.id, e.flags.includes('read')]),
    notices.map((n) => [n.id, true]),
  );
  assert.deepEqual(
    (await events(queues.bob, 'message')).map((e) => [e.message.id, e.flags]),
    notices.map((n) => [n.id, []]),
  );
  for (const viewer of viewers) await expectStateInSync(o.server, viewer, `${viewer.client.email} after a move with breadcrumbs`);
});

test('resolving: "has marked this topic as resolved." in the resolved topic, no breadcrumb unless the old topic asks', async () => {
  const ch = await place('Aveiro');
  const ids = await topicOf(ch, 'bug', 3);
  let mark = await lastMessageId();
  assert.equal((await edit(o.carol, ids[0], { topic: '✔ bug', propagate_mode: 'change_all' })).status, 200);
  assert.deepEqual(await said(mark), [[ch, '✔ bug', `${mention(o.carol)} has marked this topic as resolved.`]]);
  // Past the grace period, unresolving says so.
  await age(
    o,
    (await posted(mark)).map((m) => m.id),
    61,
  );
  mark = await lastMessageId();
  assert.equal((await edit(o.bob, ids[1], { topic: 'bug', propagate_mode: 'change_all' })).status, 200);
  assert.deepEqual(await said(mark), [[ch, 'bug', `${mention(o.bob)} has marked this topic as unresolved.`]]);
  assert.deepEqual(
    (await topicMessages(o.alice, ch, 'bug')).map((m) => m.sender_id === botId),
    [false, false, false, true, true],
    'the resolve notice moved back with the topic',
  );
  // With send_notification_to_old_thread, the topic it left gets the reference's breadcrumb (the new one never does).
  await age(
    o,
    (await posted(mark)).map((m) => m.id),
    61,
  );
  mark = await lastMessageId();
  assert.equal((await edit(o.carol, ids[0], { topic: '✔ bug', propagate_mode: 'change_all', send_notification_to_old_thread: true })).status, 200);
  assert.deepEqual(await said(mark), [
    [ch, '✔ bug', `${mention(o.carol)} has marked this topic as resolved.`],
    [ch, 'bug', `This topic was moved to #**Aveiro>✔ bug** by ${mention(o.carol)}.`],
  ]);
  // Resolving one message (change_one): still a resolve notice, in the resolved topic.
  const other = await topicOf(ch, 'question', 2);
  mark = await lastMessageId();
  assert.equal((await edit(o.carol, other[1], { topic: '✔ question' })).status, 200);
  assert.deepEqual(await said(mark), [[ch, '✔ question', `${mention(o.carol)} has marked this topic as resolved.`]]);
});

test('not a resolve notice: a resolve that renames, a resolve with a content edit', async () => {
  const ch = await place('Viseu');
  const ids = await topicOf(ch, 'task', 2);
  let mark = await lastMessageId();
  // Renaming while resolving is a move: the new topic's breadcrumb, no resolve notice.
  assert.equal((await edit(o.carol, ids[0], { topic: '✔ task done', propagate_mode: 'change_all' })).status, 200);
  assert.deepEqual(await said(mark), [[ch, '✔ task done', `This topic was moved here from #**Viseu>task** by ${mention(o.carol)}.`]]);
  // The sender resolving while editing their message: nothing is said.
  const own = await send(o.alice, ch, 'mine', 'my question');
  mark = await lastMessageId();
  assert.equal((await edit(o.alice, own, { topic: '✔ mine', content: 'my answered question' })).status, 200);
  assert.deepEqual(await said(mark), []);
  // Unresolving to a different name is a rename too (the new topic's breadcrumb).
  mark = await lastMessageId();
  assert.equal((await edit(o.carol, own, { topic: 'yours' })).status, 200);
  assert.deepEqual(await said(mark), [[ch, 'yours', `This topic was moved here from #**Viseu>✔ mine** by ${mention(o.carol)}.`]]);
});

test('undo: unresolving within the grace period deletes the resolve notice instead of posting another', async () => {
  const ch = await place('Guarda');
  const ids = await topicOf(ch, 'oops', 2);
  const queue = await listen(o.alice, {
    event_types: ['delete_message'],
    client_capabilities: JSON.stringify({ notification_settings_null: false, bulk_message_deletion: true }),
  });
  const viewer = await registerViewer(o.server, o.alice);
  let mark = await lastMessageId();
  assert.equal((await edit(o.carol, ids[0], { topic: '✔ oops', propagate_mode: 'change_all' })).status, 200);
  const [resolvedNotice] = await posted(mark);
  // Someone else undoes it: the rule asks only whether the topic's last message is a fresh notice.
  mark = await lastMessageId();
  assert.equal((await edit(o.bob, ids[0], { topic: 'oops', propagate_mode: 'change_all' })).status, 200);
  assert.deepEqual(await said(mark), []);
  assert.deepEqual(await posted(resolvedNotice.id - 1), []);
  assert.deepEqual(
    (await topicMessages(o.alice, ch, 'oops')).map((m) => m.id),
    ids,
  );
  assert.deepEqual(await events(queue, 'delete_message'), [
    { type: 'delete_message', message_ids: [resolvedNotice.id], message_type: 'stream', stream_id: ch, topic: 'oops' },
  ]);
  await expectStateInSync(o.server, viewer, 'after an undone resolve');

  // The other way round: resolving an unresolved topic at once deletes the unresolve notice.
  const later = await topicOf(ch, '✔ done', 1);
  mark = await lastMessageId();
  assert.equal((await edit(o.carol, later[0], { topic: 'done' })).status, 200);
  assert.deepEqual(await said(mark), [[ch, 'done', `${mention(o.carol)} has marked this topic as unresolved.`]]);
  assert.equal((await edit(o.carol, later[0], { topic: '✔ done', propagate_mode: 'change_all' })).status, 200);
  assert.deepEqual(await posted(mark), []);

  // No undo when something was said after the notice...
  const talk = await topicOf(ch, 'talk', 1);
  await edit(o.carol, talk[0], { topic: '✔ talk', propagate_mode: 'change_all' });
  const [talkNotice] = await posted(talk[0]);
  await send(o.bob, ch, '✔ talk', 'wait, not quite');
  mark = await lastMessageId();
  assert.equal((await edit(o.carol, talk[0], { topic: 'talk', propagate_mode: 'change_all' })).status, 200);
  assert.deepEqual(await said(mark), [[ch, 'talk', `${mention(o.carol)} has marked this topic as unresolved.`]]);
  assert.equal((await topicMessages(o.alice, ch, 'talk')).filter((m) => m.id === talkNotice.id).length, 1, 'the resolve notice stays');

  // ...nor past the grace period (60 s).
  const slow = await topicOf(ch, 'slow', 1);
  await edit(o.carol, slow[0], { topic: '✔ slow', propagate_mode: 'change_all' });
  const [slowNotice] = await posted(slow[0]);
  await age(o, [slowNotice.id], 59);
  mark = await lastMessageId();
  await edit(o.carol, slow[0], { topic: 'slow', propagate_mode: 'change_all' });
  assert.deepEqual(await said(mark), [], 'within 60 s: undone');
  await edit(o.carol, slow[0], { topic: '✔ slow', propagate_mode: 'change_all' });
  const [again] = await posted(mark);
  await age(o, [again.id], 61);
  mark = await lastMessageId();
  await edit(o.carol, slow[0], { topic: 'slow', propagate_mode: 'change_all' });
  assert.deepEqual(await said(mark), [[ch, 'slow', `${mention(o.carol)} has marked this topic as unresolved.`]]);

  // Only Notification Bot's notices are undone: the same words from a person stay.
  const words = await topicOf(ch, 'words', 1);
  await send(o.alice, ch, 'words', `${mention(o.carol)} has marked this topic as resolved.`);
  mark = await lastMessageId();
  await edit(o.carol, words[0], { topic: '✔ words', propagate_mode: 'change_all' });
  assert.deepEqual(await said(mark), [[ch, '✔ words', `${mention(o.carol)} has marked this topic as resolved.`]]);
});

test('the resolve notice is read for everyone but those following the topic; the resolver has it read', async () => {
  const ch = await place('Leiria');
  const ids = await topicOf(ch, 'ticket', 2);
  await o.bob.post('/user_topics', { stream_id: ch, topic: 'ticket', visibility_policy: 3 });
  await o.carol.post('/user_topics', { stream_id: ch, topic: 'ticket', visibility_policy: 3 });
  await o.alice.post('/user_topics', { stream_id: ch, topic: 'ticket', visibility_policy: 2 });
  const viewers = [await registerViewer(o.server, o.bob), await registerViewer(o.server, o.alice)];
  const mark = await lastMessageId();
  assert.equal((await edit(o.carol, ids[0], { topic: '✔ ticket', propagate_mode: 'change_all' })).status, 200);
  const [notice] = await posted(mark);
  assert.equal(await isRead(o.bob, notice.id), false, 'a follower has it unread');
  assert.equal(await isRead(o.carol, notice.id), true, 'the resolver, though following');
  assert.equal(await isRead(o.alice, notice.id), true, 'unmuted is not followed');
  assert.equal(await isRead(o.moderator, notice.id), true);
  for (const viewer of viewers) await expectStateInSync(o.server, viewer, `${viewer.client.email} after a resolve`);
  // A partial unresolve asks who follows the topic it lands in: not bob (his preference went to
  // "✔ ticket" with the whole topic), but alice, who follows the topic her message now begins.
  const m2 = await lastMessageId();
  assert.equal((await edit(o.carol, ids[0], { topic: 'ticket' })).status, 200);
  const [unresolved] = await posted(m2);
  assert.equal(unresolved.content, `${mention(o.carol)} has marked this topic as unresolved.`);
  assert.equal(await isRead(o.bob, unresolved.id), true);
  assert.equal(await isRead(o.alice, unresolved.id), false);
  assert.equal(await isRead(o.carol, unresolved.id), true);
});

test('a refused move posts nothing; a move in a channel the bot may not post to still gets its notices', async () => {
  const ch = await place('Beja');
  const ids = await topicOf(ch, 'locked', 2);
  const mark = await lastMessageId();
  await withPermissions(o, { can_move_messages_between_topics_group: 'role:nobody' }, async () => {
    expectError(
      await edit(o.carol, ids[0], { topic: 'refused', propagate_mode: 'change_all', send_notification_to_old_thread: true }),
      "You don't have permission to edit this message",
    );
    expectError(
      await edit(o.carol, ids[0], { topic: '✔ locked', propagate_mode: 'change_all', content: 'x' }),
      "You don't have permission to edit this message",
    );
  });
  assert.deepEqual(await posted(mark), []);
  // Notification Bot needs no permission to post where the move happened.
  await setChannelPermission(o, ch, 'can_send_message_group', 'role:administrators');
  assert.equal((await edit(o.admin, ids[0], { topic: 'announced', propagate_mode: 'change_all', send_notification_to_old_thread: true })).status, 200);
  assert.deepEqual(
    (await posted(mark)).map((m) => m.topic),
    ['announced', 'locked'],
  );
});

test('everything stays in sync for a viewer through moves, breadcrumbs, resolves and undos', async () => {
  const from = await place('Elvas');
  const to = await place('Tomar');
  const viewer = await registerViewer(o.server, o.bob);
  const ids = await topicOf(from, 'sync', 3);
  const both = { send_notification_to_old_thread: true, send_notification_to_new_thread: true };
  await edit(o.carol, ids[2], { topic: 'sync part', ...both });
  await expectStateInSync(o.server, viewer, 'after a partial move');
  await edit(o.carol, ids[0], { stream_id: to, propagate_mode: 'change_all', ...both });
  await expectStateInSync(o.server, viewer, 'after a channel move');
  await edit(o.carol, ids[0], { topic: '✔ sync', propagate_mode: 'change_all' });
  await expectStateInSync(o.server, viewer, 'after a resolve');
  await edit(o.carol, ids[0], { topic: 'sync', propagate_mode: 'change_all' });
  await expectStateInSync(o.server, viewer, 'after its undo');
  // Left behind in the origin channel: the partial move (with its breadcrumb) and the channel move's breadcrumb.
  const left = await o.server.svc.db
    .selectFrom('messages')
    .select(['sender_id', 'topic'])
    .where('channel_id', '=', from)
    .where('topic', '<>', 'channel events')
    .orderBy('id')
    .execute();
  assert.deepEqual(left, [
    { sender_id: o.alice.id, topic: 'sync part' },
    { sender_id: botId, topic: 'sync part' },
    { sender_id: botId, topic: 'sync' },
  ]);
});

test('a channel emptied by a move gets the breadcrumb as its first message', async () => {
  const from = await place();
  const to = await place();
  const firstOf = async (id: number) => (await o.bob.get(`/streams/${id}`)).body.stream.first_message_id as number | null;
  assert.equal((await o.owner.delete(`/messages/${await firstOf(from)}`)).status, 200, 'no creation message');
  const ids = await topicOf(from, 'leaving', 2);
  const viewer = await registerViewer(o.server, o.bob);
  const queue = await listen(o.bob);
  const mark = await lastMessageId();
  assert.equal((await edit(o.carol, ids[0], { stream_id: to, propagate_mode: 'change_all', send_notification_to_old_thread: true })).status, 200);
  const [, left] = await posted(mark);
  assert.deepEqual(
    [left.channel, left.content],
    [from, `This topic was moved to #**${(await o.bob.get(`/streams/${to}`)).body.stream.name}>leaving** by ${mention(o.carol)}.`],
  );
  assert.equal(await firstOf(from), left.id);
  // Emptied, then the breadcrumb: in that order.
  const updates = (await events(queue, 'stream')).filter((e) => e.stream_id === from).map((e) => e.value);
  assert.deepEqual(updates, [null, left.id]);
  await expectStateInSync(o.server, viewer, 'after emptying a channel with a breadcrumb');
});
