// Register's read state (digest section 4): unread_msgs, starred_messages,
// recent_private_conversations and max_message_id, and that the events keep a
// client's copy equal to a fresh register.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestServer, type Client, type TestServer } from '../support/server.ts';
import { expectStateInSync, registerViewer, type Viewer } from '../support/state.ts';
import { channelId as idOf, sendDm, sendTo, subscribe as subscribeBy } from './message-flags.fixture.ts';

let server: TestServer;
let alice: Client;
let bob: Client;
let carol: Client;
let denmark: number;
let oslo: number;
let rome: number;

const FETCH = ['message', 'update_message_flags', 'starred_messages', 'recent_private_conversations'];

before(async () => {
  server = await startTestServer();
  alice = await server.createUser({ email: 'alice@example.com', fullName: 'Alice Able' });
  bob = await server.createUser({ email: 'bob@example.com', fullName: 'Bob Baker' });
  carol = await server.createUser({ email: 'carol@example.com', fullName: 'Carol Cole' });
  await subscribe('Denmark', [alice, bob, carol]);
  await subscribe('Oslo', [alice, bob]);
  await subscribe('Rome', [bob]);
  [denmark, oslo, rome] = [await channelId('Denmark'), await channelId('Oslo'), await channelId('Rome')];
});
after(() => server.close());

const subscribe = (name: string, users: Client[]) => subscribeBy(bob, name, users);

const channelId = (name: string) => idOf(bob, name);

async function registerState(c: Client, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await c.post('/register', { fetch_event_types: FETCH, ...params });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  await c.delete('/events', { queue_id: res.body.queue_id });
  return res.body;
}

/** Deletes messages as the deletion domain does: rows gone, one `delete_message` per conversation. */
async function deleteMessages(ids: number[]): Promise<void> {
  const rows = await server.svc.db.selectFrom('messages').select(['id', 'channel_id', 'topic', 'recipient_id']).where('id', 'in', ids).execute();
  const audience = await server.svc.db.selectFrom('user_messages').select('user_id').distinct().where('message_id', 'in', ids).execute();
  await server.svc.db.deleteFrom('messages').where('id', 'in', ids).execute();
  const byConversation = new Map<number, typeof rows>();
  for (const r of rows) byConversation.set(r.recipient_id, [...(byConversation.get(r.recipient_id) ?? []), r]);
  const notices = [...byConversation.values()].map((list) => {
    const first = list[0];
    const message_ids = list.map((r) => r.id).sort((a, b) => a - b);
    const event =
      first.channel_id === null
        ? { type: 'delete_message' as const, message_ids, message_type: 'private' as const }
        : { type: 'delete_message' as const, message_ids, message_type: 'stream' as const, stream_id: first.channel_id, topic: first.topic };
    return { realmId: 1, event, users: audience.map((a) => a.user_id) };
  });
  server.svc.events.publish(notices);
}

test('register: unread_msgs grouped by conversation, muting, mentions and count', async () => {
  const dave = await server.createUser({ email: 'dave@example.com', fullName: 'Dave Dale' });
  await subscribe('Denmark', [dave]);
  await subscribe('Oslo', [dave]);
  // Subscribed by Bob, Dave heard of each from Notification Bot: unread too.
  const notices = (
    await dave.get('/messages', {
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: [{ operator: 'dm', operand: 'notification-bot@confab.internal' }],
      apply_markdown: false,
    })
  ).body.messages;
  assert.deepEqual(
    notices.map((m: any) => m.content),
    ['Denmark', 'Oslo'].map((name) => `@_**Bob Baker|${bob.id}** subscribed you to #**${name}**.`),
  );
  assert.ok(notices.every((m: any) => m.sender_full_name === 'Notification Bot' && m.sender_id === notices[0].sender_id));
  const botId: number = notices[0].sender_id;
  const fromBot = notices.map((m: any) => m.id as number);
  const lunch = await sendTo(bob, 'Denmark', 'Lunch');
  const lunch2 = await sendTo(carol, 'Denmark', 'lunch', '@**Dave Dale** coming?');
  const general = await sendTo(bob, 'Denmark', '');
  const muted = await sendTo(bob, 'Denmark', 'noise', '@**all** wildcard');
  const mutedDirect = await sendTo(bob, 'Denmark', 'noise', '@**Dave Dale** direct');
  const oslo1 = await sendTo(bob, 'Oslo', 'fjord', '@**topic** here');
  const oslo2 = await sendTo(bob, 'Oslo', 'kept');
  const fromBob = await sendDm(bob, [dave]);
  const toBob = await sendDm(dave, [bob]);
  const self = await sendDm(dave, [dave]);
  const group = await sendDm(carol, [dave, bob]);
  assert.equal((await dave.post('/user_topics', { stream_id: denmark, topic: 'noise', visibility_policy: 1 })).status, 200);
  const mute = await dave.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: oslo, property: 'is_muted', value: true }] });
  assert.equal(mute.status, 200, JSON.stringify(mute.body));
  assert.equal((await dave.post('/user_topics', { stream_id: oslo, topic: 'kept', visibility_policy: 2 })).status, 200);

  const state = await registerState(dave);
  const sortIds = (ids: number[]) => [...ids].sort((a, b) => a - b);
  assert.deepEqual(state.unread_msgs, {
    pms: sortIds([bob.id, dave.id, botId]).map((id) => ({
      other_user_id: id,
      sender_id: id,
      unread_message_ids: id === bob.id ? [fromBob, toBob] : id === botId ? fromBot : [self],
    })),
    streams: [
      { stream_id: denmark, topic: 'general chat', unread_message_ids: [general] },
      { stream_id: denmark, topic: 'Lunch', unread_message_ids: [lunch, lunch2] },
      { stream_id: denmark, topic: 'noise', unread_message_ids: [muted, mutedDirect] },
      { stream_id: oslo, topic: 'fjord', unread_message_ids: [oslo1] },
      { stream_id: oslo, topic: 'kept', unread_message_ids: [oslo2] },
    ].sort((a, b) => a.stream_id - b.stream_id || (a.topic.toLowerCase() < b.topic.toLowerCase() ? -1 : 1)),
    huddles: [{ user_ids_string: sortIds([bob.id, carol.id, dave.id]).join(','), unread_message_ids: [group] }],
    // Direct mentions count even where muted; wildcards only where not.
    mentions: [lunch2, mutedDirect],
    // Not counted: the muted topic's two, and Oslo's fjord (muted channel, topic not unmuted).
    count: 13 - 3,
    old_unreads_missing: false,
  });
  // With empty_topic_name the empty topic is itself.
  const modern = await registerState(dave, { client_capabilities: { notification_settings_null: false, empty_topic_name: true } });
  assert.deepEqual(modern.unread_msgs.streams[0], { stream_id: denmark, topic: '', unread_message_ids: [general] });

  assert.deepEqual(state.starred_messages, []);
  assert.equal(state.max_message_id, group);
  assert.deepEqual(state.recent_private_conversations, [
    { max_message_id: group, user_ids: sortIds([bob.id, carol.id]) },
    { max_message_id: self, user_ids: [] },
    { max_message_id: toBob, user_ids: [bob.id] },
    { max_message_id: fromBot[1], user_ids: [botId] },
  ]);

  // Leaving a channel takes its messages out of the unread data.
  const left = await dave.delete('/users/me/subscriptions', { subscriptions: ['Oslo'] });
  assert.equal(left.status, 200, JSON.stringify(left.body));
  assert.deepEqual(
    (await registerState(dave)).unread_msgs.streams.map((s: any) => s.stream_id),
    [denmark, denmark, denmark],
  );
});

test('register: which fetch_event_types give which keys; spectators-free defaults', async () => {
  const keys = async (types: string[]) => {
    const body = await registerState(alice, { fetch_event_types: types });
    return ['max_message_id', 'unread_msgs', 'starred_messages', 'recent_private_conversations'].filter((k) => k in body);
  };
  assert.deepEqual(await keys(['message']), ['max_message_id']);
  assert.deepEqual(await keys(['update_message_flags']), []);
  assert.deepEqual(await keys(['message', 'update_message_flags']), ['max_message_id', 'unread_msgs']);
  assert.deepEqual(await keys(['starred_messages']), ['starred_messages']);
  assert.deepEqual(await keys(['recent_private_conversations']), ['recent_private_conversations']);
  const fresh = await server.createUser();
  const empty = await registerState(fresh);
  assert.equal(empty.max_message_id, -1);
  assert.deepEqual(empty.unread_msgs, { pms: [], streams: [], huddles: [], mentions: [], count: 0, old_unreads_missing: false });
  assert.deepEqual(empty.starred_messages, []);
  assert.deepEqual(empty.recent_private_conversations, []);
});

/** Viewers that differ in what changes their copy: capabilities, and following all public channels. */
async function viewersFor(c: Client): Promise<Viewer[]> {
  return [
    await registerViewer(server, c, { fetch_event_types: FETCH }),
    await registerViewer(server, c, {
      fetch_event_types: FETCH,
      client_capabilities: { notification_settings_null: true, empty_topic_name: true, bulk_message_deletion: true },
    }),
    await registerViewer(server, c, { fetch_event_types: FETCH, all_public_streams: true }),
  ];
}

async function inSync(viewers: Viewer[], label: string) {
  for (const [i, v] of viewers.entries()) await expectStateInSync(server, v, `${label} (viewer ${i})`);
}

test('in sync: messages of every kind, flags, marks, muting, leaving, deletions', async () => {
  const erin = await server.createUser({ email: 'erin@example.com', fullName: 'Erin Eve' });
  await subscribe('Denmark', [erin]);
  await subscribe('Oslo', [erin]);
  const viewers = await viewersFor(erin);
  const steps: [string, () => Promise<unknown>][] = [];
  const ids: Record<string, number> = {};
  const step = (label: string, run: () => Promise<unknown>) => steps.push([label, run]);

  step('channel message', async () => (ids.a = await sendTo(bob, 'Denmark', 'Plans')));
  step('same topic, other case', async () => (ids.b = await sendTo(carol, 'Denmark', 'plans', '@**Erin Eve** hi')));
  step('empty topic', async () => (ids.c = await sendTo(bob, 'Denmark', '')));
  step('wildcard mention', async () => (ids.d = await sendTo(bob, 'Oslo', 'fjord', '@**all** look')));
  step('own message', async () => (ids.e = await sendTo(erin, 'Oslo', 'fjord')));
  step('message in a channel erin is not in', async () => sendTo(bob, 'Rome', 'forum'));
  step('direct message', async () => (ids.f = await sendDm(bob, [erin])));
  step('reply', async () => (ids.g = await sendDm(erin, [bob])));
  step('message to oneself', async () => (ids.h = await sendDm(erin, [erin])));
  step('group message', async () => (ids.i = await sendDm(carol, [erin, bob], '@**Erin Eve** group')));
  step('others talking', async () => sendDm(bob, [carol]));
  step('mark read', async () => erin.post('/messages/flags', { messages: [ids.a, ids.f], op: 'add', flag: 'read' }));
  step('mark unread', async () => erin.post('/messages/flags', { messages: [ids.a, ids.f, ids.e], op: 'remove', flag: 'read' }));
  step('star', async () => erin.post('/messages/flags', { messages: [ids.b, ids.h], op: 'add', flag: 'starred' }));
  step('star history', async () => erin.post('/messages/flags', { messages: [await sendTo(bob, 'Rome', 'old')], op: 'add', flag: 'starred' }));
  step('unstar', async () => erin.post('/messages/flags', { messages: [ids.h], op: 'remove', flag: 'starred' }));
  step('mute the topic', async () => erin.post('/user_topics', { stream_id: oslo, topic: 'fjord', visibility_policy: 1 }));
  step('unread in the muted topic', async () =>
    erin
      .post('/messages/flags', { messages: [ids.d], op: 'add', flag: 'read' })
      .then(() => erin.post('/messages/flags', { messages: [ids.d], op: 'remove', flag: 'read' })),
  );
  step('mute the channel', async () =>
    erin.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: denmark, property: 'is_muted', value: true }] }),
  );
  step('follow a topic of the muted channel', async () => erin.post('/user_topics', { stream_id: denmark, topic: 'plans', visibility_policy: 3 }));
  step('unmute the topic', async () => erin.post('/user_topics', { stream_id: oslo, topic: 'fjord', visibility_policy: 0 }));
  step('unmute the channel (legacy property)', async () =>
    erin.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: denmark, property: 'in_home_view', value: true }] }),
  );
  step('mark topic read', async () => erin.post('/mark_topic_as_read', { stream_id: denmark, topic_name: 'PLANS' }));
  step('mark channel read', async () => erin.post('/mark_stream_as_read', { stream_id: oslo }));
  step('more messages', async () => {
    ids.j = await sendTo(bob, 'Denmark', 'later');
    ids.k = await sendDm(carol, [erin]);
  });
  step('mark unread by narrow', async () =>
    erin.post('/messages/flags/narrow', {
      anchor: 'newest',
      num_before: 3,
      num_after: 0,
      narrow: [{ operator: 'channel', operand: 'Denmark' }],
      op: 'remove',
      flag: 'read',
    }),
  );
  step('edit in a mention', async () => {
    ids.m = await sendTo(bob, 'Denmark', 'edits');
    return bob.patch(`/messages/${ids.m}`, { content: 'now @**Erin Eve**' });
  });
  step('edit in a wildcard', async () => bob.patch(`/messages/${ids.m}`, { content: 'now @**all**' }));
  step('move a topic', async () => server.owner.patch(`/messages/${ids.m}`, { topic: 'Moved', propagate_mode: 'change_all' }));
  step('move to a muted topic', async () => {
    await erin.post('/user_topics', { stream_id: oslo, topic: 'hushed', visibility_policy: 1 });
    return server.owner.patch(`/messages/${ids.m}`, { stream_id: oslo, topic: 'hushed', propagate_mode: 'change_all' });
  });
  step('move to a channel erin is not in', async () => {
    ids.n = await sendTo(bob, 'Denmark', 'travel');
    return server.owner.patch(`/messages/${ids.n}`, { stream_id: rome, propagate_mode: 'change_one' });
  });
  step('delete through the API', async () => bob.delete(`/messages/${ids.m}`));
  step('delete an unread message', async () => deleteMessages([ids.j]));
  step('delete the newest message and a conversation', async () => deleteMessages([ids.k]));
  step('delete the latest of a conversation', async () => deleteMessages([ids.g]));
  step('delete a starred message', async () => deleteMessages([ids.b]));
  step('delete several', async () => deleteMessages([ids.a, ids.c]));
  step('mark all read', async () => erin.post('/mark_all_as_read'));
  step('new unread after marking all', async () => sendTo(bob, 'Oslo', 'after'));
  step('leave a channel', async () => erin.delete('/users/me/subscriptions', { subscriptions: ['Oslo'] }));
  step('message where erin left', async () => sendTo(bob, 'Oslo', 'gone'));

  for (const [label, run] of steps) {
    const res = (await run()) as { status?: number; body?: unknown } | undefined;
    if (res && typeof res === 'object' && 'status' in res) assert.equal(res.status, 200, `${label}: ${JSON.stringify(res.body)}`);
    await inSync(viewers, `after ${label}`);
  }
});

// Unread messages live only in subscribed channels: leaving one must mark its messages read
// (Zulip does it right after the unsubscription), else rejoining brings them back unread.
test('in sync: rejoining a channel left with unread messages', async () => {
  const gil = await server.createUser({ email: 'gil@example.com', fullName: 'Gil Gray' });
  await subscribe('Oslo', [gil]);
  const viewers = await viewersFor(gil);
  await sendTo(bob, 'Oslo', 'unread when leaving');
  await gil.delete('/users/me/subscriptions', { subscriptions: ['Oslo'] });
  await inSync(viewers, 'after leaving');
  await bob.post('/users/me/subscriptions', { subscriptions: [{ name: 'Oslo' }], principals: [gil.id] });
  await inSync(viewers, 'after rejoining');
});

test('a message sent into a channel the sender is not subscribed to: no copy for them, every queue stays in sync', async () => {
  const gus = await server.createUser({ email: 'gus@example.com', fullName: 'Gus Grey' });
  const viewers = await viewersFor(gus);
  const id = await sendTo(gus, 'Rome', 'visiting', 'hello from outside');
  const copy = await server.svc.db.selectFrom('user_messages').select('user_id').where('message_id', '=', id).where('user_id', '=', gus.id).executeTakeFirst();
  assert.equal(copy, undefined);
  await inSync(viewers, 'after sending into Rome unsubscribed');
});

test('in sync for any sequence of sends, flag changes, marks, mutes and deletions', async () => {
  const fay = await server.createUser({ email: 'fay@example.com', fullName: 'Fay Fox' });
  await subscribe('Denmark', [fay]);
  await subscribe('Oslo', [fay]);
  // Messages of the current run: the viewers saw each arrive (see DECISIONS, unread state).
  let sent: number[] = [];
  const pick = (i: number) => sent[i % Math.max(sent.length, 1)];
  const channels = ['Denmark', 'Oslo', 'Rome'];
  const topics = ['one', 'One', 'two', ''];
  const contents = ['plain', '@**Fay Fox** you', '@**all** everyone', '@**topic** here'];
  type Action = { name: string; run: () => Promise<unknown> };
  const action: fc.Arbitrary<Action> = fc.oneof(
    fc.tuple(fc.nat(), fc.nat(), fc.nat(), fc.boolean()).map(([c, t, m, byFay]) => ({
      name: `send ${channels[c % 3]}/${topics[t % 4]}`,
      run: async () => sent.push(await sendTo(byFay ? fay : bob, channels[c % 3], topics[t % 4], contents[m % 4])),
    })),
    fc.tuple(fc.nat(), fc.nat()).map(([who, m]) => ({
      name: `dm ${who % 4}`,
      run: async () => {
        const [from, to] = (
          [
            [bob, [fay]],
            [bob, [fay, carol]],
            [fay, [bob]],
            [fay, [fay]],
          ] as [Client, Client[]][]
        )[who % 4];
        sent.push(await sendDm(from, to, contents[m % 4]));
      },
    })),
    fc
      .tuple(fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), fc.constantFrom('add', 'remove'), fc.constantFrom('read', 'starred'))
      .map(([is, op, flag]) => ({
        name: `${op} ${flag}`,
        run: async () => sent.length > 0 && fay.post('/messages/flags', { messages: is.map(pick), op, flag }),
      })),
    fc.tuple(fc.nat(), fc.constantFrom(0, 1, 2, 3)).map(([t, policy]) => ({
      name: `topic policy ${policy}`,
      run: async () => fay.post('/user_topics', { stream_id: [denmark, oslo][t % 2], topic: topics[t % 4], visibility_policy: policy }),
    })),
    fc.tuple(fc.nat(), fc.boolean()).map(([c, muted]) => ({
      name: `mute channel ${muted}`,
      run: async () =>
        fay.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: [denmark, oslo][c % 2], property: 'is_muted', value: muted }] }),
    })),
    fc.nat().map((i) => ({ name: 'delete', run: async () => sent.length > 0 && deleteMessages([pick(i)]) })),
    fc.constant({ name: 'mark all', run: async () => fay.post('/mark_all_as_read') }),
    fc.nat().map((c) => ({ name: 'mark channel', run: async () => fay.post('/mark_stream_as_read', { stream_id: [denmark, oslo][c % 2] }) })),
    fc.nat().map((i) => ({
      name: 'unread by narrow',
      run: async () =>
        sent.length > 0 && fay.post('/messages/flags/narrow', { anchor: String(pick(i)), num_before: 2, num_after: 2, narrow: [], op: 'remove', flag: 'read' }),
    })),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 6 }), async (actions) => {
      sent = [];
      const viewers = await viewersFor(fay);
      for (const a of actions) {
        await a.run();
        await inSync(viewers, `after ${a.name}`);
      }
      for (const v of viewers) await v.client.delete('/events', { queue_id: v.queueId });
    }),
    { numRuns: 15 },
  );
});
