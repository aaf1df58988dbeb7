// The filter and capability tables of the event system (spec "Events" 3 and 5, digest 3.2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventQueue, Heartbeats, capabilities, type Capability, type QueueOptions } from '../../src/events/queue.ts';
import { shapeFor, shapeKey } from '../../src/events/shape.ts';
import { narrowMatches } from '../../src/events/narrow.ts';
import type { Notice, ServerEvent } from '../../src/events/types.ts';

function queue(opts: Partial<QueueOptions> & { caps?: Capability[] } = {}): EventQueue {
  const { caps = [], ...rest } = opts;
  return new EventQueue(
    {
      realmId: 1,
      userId: 10,
      eventTypes: null,
      narrow: [],
      allPublicStreams: false,
      applyMarkdown: true,
      clientSvcavatar: false,
      slimPresence: false,
      capabilities: capabilities(Object.fromEntries(caps.map((c) => [c, true]))),
      clientName: 'test',
      lifespanMs: 600_000,
      ...rest,
    },
    new Heartbeats(),
  );
}

/** Events here are partial (only what the shaping reads): loosely typed, on purpose. */
type Fixture = { type: string; [key: string]: any };
/** Fixtures give only the parts of `hidden` a test reads. */
const notice = (
  event: Fixture,
  extra: Partial<Omit<Notice, 'perUser' | 'hidden'>> & { perUser?: Record<number, any>; hidden?: Record<string, unknown> } = {},
): Notice => ({ realmId: 1, event, users: [10], ...extra }) as unknown as Notice;
const shape = (queue: EventQueue, n: Notice): Fixture[] => shapeFor(queue, n);
/** An event of no known type: what the queue does with any event. */
const untyped = { type: 'x' } as unknown as ServerEvent;

const message = {
  id: 5,
  type: 'stream',
  display_recipient: 'Denmark',
  subject: 'Copenhagen',
  sender_email: 'hamlet@example.com',
  content: '<p>hi</p>',
  content_type: 'text/html',
  avatar_url: 'https://secure.gravatar.com/avatar/x',
};

test('event_types keeps only the listed types; heartbeats are not subject to it', () => {
  const q = queue({ eventTypes: ['message'] });
  assert.deepEqual(shape(q, notice({ type: 'realm_user', op: 'add', person: {} })), []);
  assert.equal(shape(q, notice({ type: 'message', message }, { perUser: { 10: { flags: [] } } })).length, 1);
  q.wait(10_000);
  q.cancelWait();
  assert.equal(q.push({ type: 'heartbeat' }).type, 'heartbeat');
  const both = queue({ eventTypes: ['user_topic', 'muted_topics'] });
  assert.deepEqual(shape(both, notice({ type: 'muted_topics', muted_topics: [] })), [], 'user_topic supersedes muted_topics');
});

test('message events: flags per user, apply_markdown, local echo only for the sending queue', () => {
  const n = notice(
    { type: 'message', message },
    {
      perUser: { 10: { flags: ['read'] } },
      hidden: { raw_content: 'hi' },
      localEcho: { queueId: 'xyz', localId: '1.5' },
    },
  );
  const [rendered] = shape(queue(), n);
  assert.deepEqual(rendered.flags, ['read']);
  assert.equal((rendered.message as any).content, '<p>hi</p>');
  assert.equal('local_message_id' in rendered, false);
  const [raw] = shape(queue({ applyMarkdown: false }), n);
  assert.equal((raw.message as any).content, 'hi');
  assert.equal((raw.message as any).content_type, 'text/x-markdown');
  const sender = queue();
  const [echoed] = shape(sender, { ...n, localEcho: { queueId: sender.id, localId: '1.5' } });
  assert.equal(echoed.local_message_id, '1.5');
});

test('client_svcavatar nulls avatars the client can compute', () => {
  const n = notice({ type: 'message', message }, { perUser: { 10: { flags: [] } }, hidden: { avatar_nullable_for: [10] } });
  assert.equal((shape(queue({ clientSvcavatar: true }), n)[0].message as any).avatar_url, null);
  assert.match((shape(queue({ clientSvcavatar: false }), n)[0].message as any).avatar_url, /gravatar/);
  const other = notice({ type: 'message', message }, { perUser: { 10: { flags: [] } }, hidden: { avatar_nullable_for: [11] } });
  assert.match((shape(queue({ clientSvcavatar: true }), other)[0].message as any).avatar_url, /gravatar/);
  const person = notice({ type: 'realm_user', op: 'add', person: { user_id: 3, avatar_url: 'u' } }, { hidden: { avatar_nullable_for: 'all' } });
  assert.equal((shape(queue({ clientSvcavatar: true }), person)[0].person as any).avatar_url, null);
});

test('the register narrow predicate', () => {
  const cases: [[string, string][], Record<string, unknown>, string[], boolean][] = [
    [[['stream', 'denmark']], message, [], true],
    [[['channel', 'Sweden']], message, [], false],
    [[['topic', 'COPENHAGEN']], message, [], true],
    [[['topic', 'other']], message, [], false],
    [[['sender', 'Hamlet@Example.com']], message, [], true],
    [[['is', 'dm']], message, [], false],
    [[['is', 'private']], { ...message, type: 'private' }, [], true],
    [[['is', 'starred']], message, ['starred'], true],
    [[['is', 'starred']], message, [], false],
    [[['is', 'unread']], message, ['read'], false],
    [[['is', 'unread']], message, [], true],
    [[['is', 'mentioned']], message, ['mentioned'], true],
    [[['is', 'alerted']], message, [], false],
    [[['is', 'resolved']], { ...message, subject: '✔ done' }, [], true],
    [[['is', 'resolved']], message, [], false],
    [
      [
        ['stream', 'Denmark'],
        ['topic', 'other'],
      ],
      message,
      [],
      false,
    ],
  ];
  for (const [narrow, msg, flags, expected] of cases) assert.equal(narrowMatches(narrow, msg, flags), expected, JSON.stringify(narrow));
  const q = queue({ narrow: [['stream', 'Sweden']] });
  assert.deepEqual(shape(q, notice({ type: 'message', message }, { perUser: { 10: { flags: [] } } })), []);
});

test('bulk_message_deletion: one event with message_ids, or one per message', () => {
  const n = notice({ type: 'delete_message', message_ids: [1, 2], message_type: 'stream', stream_id: 3, topic: 't' });
  assert.deepEqual(shape(queue({ caps: ['bulk_message_deletion'] }), n), [
    { type: 'delete_message', message_ids: [1, 2], message_type: 'stream', stream_id: 3, topic: 't' },
  ]);
  assert.deepEqual(shape(queue({ caps: ['empty_topic_name'] }), n), [
    { type: 'delete_message', message_id: 1, message_type: 'stream', stream_id: 3, topic: 't' },
    { type: 'delete_message', message_id: 2, message_type: 'stream', stream_id: 3, topic: 't' },
  ]);
});

test('empty_topic_name: without it the empty topic reads "general chat"', () => {
  const cases: [Fixture, (e: any) => unknown][] = [
    [{ type: 'message', message: { ...message, subject: '' } }, (e) => e.message.subject],
    [{ type: 'update_message', orig_subject: '', subject: '' }, (e) => [e.orig_subject, e.subject]],
    [{ type: 'delete_message', message_ids: [1], topic: '' }, (e) => e.topic],
    [{ type: 'user_topic', stream_id: 1, topic_name: '', visibility_policy: 1 }, (e) => e.topic_name],
    [{ type: 'typing', op: 'start', message_type: 'stream', topic: '' }, (e) => e.topic],
    [{ type: 'update_message_flags', message_details: { '1': { type: 'stream', topic: '' } } }, (e) => e.message_details['1'].topic],
  ];
  for (const [event, get] of cases) {
    const n = notice(event, { perUser: { 10: { flags: [] } } });
    const modern = shape(queue({ caps: ['empty_topic_name', 'bulk_message_deletion', 'stream_typing_notifications'] }), n)[0];
    const legacy = shape(queue({ caps: ['bulk_message_deletion', 'stream_typing_notifications'] }), n)[0];
    const expectModern = event.type === 'update_message' ? ['', ''] : '';
    const expectLegacy = event.type === 'update_message' ? ['general chat', 'general chat'] : 'general chat';
    assert.deepEqual(get(modern), expectModern, event.type);
    assert.deepEqual(get(legacy), expectLegacy, event.type);
  }
});

test('include_deactivated_groups: deactivation is an update, or a removal', () => {
  const deactivate = notice({ type: 'user_group', op: 'update', group_id: 7, data: { deactivated: true } });
  assert.deepEqual(shape(queue({ caps: ['include_deactivated_groups'] }), deactivate)[0].data, { deactivated: true });
  assert.deepEqual(shape(queue(), deactivate), [{ type: 'user_group', op: 'remove', group_id: 7 }]);
  const reactivate = notice({ type: 'user_group', op: 'update', group_id: 7, data: { deactivated: false } }, { hidden: { group: { id: 7 } } });
  assert.deepEqual(shape(queue(), reactivate), [{ type: 'user_group', op: 'add', group: { id: 7 } }]);
  const renameDeactivated = notice({ type: 'user_group', op: 'update', group_id: 7, data: { name: 'x' } }, { hidden: { group_deactivated: true } });
  assert.deepEqual(shape(queue(), renameDeactivated), []);
  assert.equal(shape(queue({ caps: ['include_deactivated_groups'] }), renameDeactivated).length, 1);
});

test('archived_channels: archiving is an update, or a deletion; unarchiving a creation', () => {
  const archive = notice(
    { type: 'stream', op: 'update', stream_id: 4, name: 'x', property: 'is_archived', value: true },
    { hidden: { streams: [{ stream_id: 4 }] } },
  );
  assert.equal(shape(queue({ caps: ['archived_channels'] }), archive)[0].op, 'update');
  assert.deepEqual(shape(queue(), archive), [{ type: 'stream', op: 'delete', streams: [{ stream_id: 4 }], stream_ids: [4] }]);
  const unarchive = notice(
    { type: 'stream', op: 'update', stream_id: 4, name: 'x', property: 'is_archived', value: false },
    { hidden: { streams: [{ stream_id: 4, name: 'x' }] } },
  );
  assert.deepEqual(shape(queue(), unarchive), [{ type: 'stream', op: 'create', streams: [{ stream_id: 4, name: 'x' }] }]);
  const renameArchived = notice({ type: 'stream', op: 'update', stream_id: 4, property: 'name' }, { hidden: { channel_archived: true } });
  assert.deepEqual(shape(queue(), renameArchived), []);
});

test('linkifier_url_template, stream_typing_notifications', () => {
  const linkifiers = notice({ type: 'realm_linkifiers', realm_linkifiers: [] });
  assert.equal(shape(queue({ caps: ['linkifier_url_template'] }), linkifiers).length, 1);
  assert.equal(shape(queue(), linkifiers).length, 0);
  const typing = notice({ type: 'typing', op: 'start', message_type: 'stream', stream_id: 1, topic: 't' });
  assert.equal(shape(queue({ caps: ['stream_typing_notifications'] }), typing).length, 1);
  assert.equal(shape(queue(), typing).length, 0);
  const direct = notice({ type: 'typing', op: 'start', message_type: 'direct', recipients: [] });
  assert.equal(shape(queue(), direct).length, 1);
});

test('user_settings_object: legacy clients also get the old event', () => {
  const n = notice(
    { type: 'user_settings', op: 'update', property: 'twenty_four_hour_time', value: true },
    { hidden: { legacy: { type: 'update_display_settings', setting_name: 'twenty_four_hour_time', setting: true, user: 'a@b' } } },
  );
  assert.deepEqual(
    shape(queue({ caps: ['user_settings_object'] }), n).map((e) => e.type),
    ['user_settings'],
  );
  assert.deepEqual(
    shape(queue(), n).map((e) => e.type),
    ['user_settings', 'update_display_settings'],
  );
  assert.deepEqual(
    shape(queue({ eventTypes: ['update_display_settings'] }), n).map((e) => e.type),
    ['update_display_settings'],
  );
});

test('presence: simplified, slim or legacy', () => {
  const n = notice(
    { type: 'presence', user_id: 3, email: 'a@b', server_timestamp: 1.5, presence: { website: { status: 'active' } } },
    { hidden: { presences: { '3': { active_timestamp: 1, idle_timestamp: 1 } } } },
  );
  assert.deepEqual(shape(queue({ caps: ['simplified_presence_events'] }), n), [
    { type: 'presence', presences: { '3': { active_timestamp: 1, idle_timestamp: 1 } } },
  ]);
  assert.equal('email' in shape(queue({ slimPresence: true }), n)[0], false);
  assert.equal(shape(queue(), n)[0].email, 'a@b');
});

test('notification_settings_null: without it, inherited settings become the user defaults', () => {
  const n = notice(
    { type: 'subscription', op: 'add', subscriptions: [{ stream_id: 1, desktop_notifications: null, push_notifications: true }] },
    { hidden: { notification_defaults: { desktop_notifications: false, push_notifications: false } } },
  );
  assert.deepEqual((shape(queue({ caps: ['notification_settings_null'] }), n)[0].subscriptions as any)[0].desktop_notifications, null);
  const legacy = (shape(queue(), n)[0].subscriptions as any)[0];
  assert.equal(legacy.desktop_notifications, false);
  assert.equal(legacy.push_notifications, true);
});

test("queue ids increase; acknowledging prunes, with Zulip's checks", () => {
  const q = queue();
  for (let i = 0; i < 3; i++) q.push(untyped);
  assert.deepEqual(
    q.events.map((e) => e.id),
    [0, 1, 2],
  );
  q.acknowledge(1);
  assert.deepEqual(
    q.events.map((e) => e.id),
    [2],
  );
  assert.throws(() => q.acknowledge(0), /An event newer than 0 has already been pruned!/);
  q.push(untyped);
  assert.throws(() => q.acknowledge(7), /Event 7 was not in this queue/);
  assert.deepEqual(
    q.events.map((e) => e.id),
    [2, 3],
    'a refused acknowledgement prunes nothing',
  );
  q.acknowledge(2);
  assert.deepEqual(
    q.events.map((e) => e.id),
    [3],
  );
});

test('user_list_incomplete: no "Unknown user" placeholder for a newcomer the viewer may not see', () => {
  const n = notice({ type: 'realm_user', op: 'add', person: { user_id: 3, full_name: 'Unknown user' } }, { hidden: { inaccessible_user: true } });
  assert.deepEqual(shape(queue({ caps: ['user_list_incomplete'] }), n), []);
  assert.deepEqual(shape(queue(), n), [{ type: 'realm_user', op: 'add', person: { user_id: 3, full_name: 'Unknown user' } }]);
  const seen = notice({ type: 'realm_user', op: 'add', person: { user_id: 4, full_name: 'Known' } });
  assert.equal(shape(queue({ caps: ['user_list_incomplete'] }), seen).length, 1);
});

test('queues with the same shapeKey get the same events: the bus shapes once per key', () => {
  const users = [10, 11];
  const queues: EventQueue[] = [];
  for (const userId of users) {
    for (const caps of [
      [],
      ['bulk_message_deletion', 'empty_topic_name'],
      ['archived_channels', 'user_list_incomplete', 'simplified_presence_events'],
    ] as Capability[][]) {
      for (const applyMarkdown of [true, false]) {
        for (const clientSvcavatar of [true, false]) {
          queues.push(queue({ userId, caps, applyMarkdown, clientSvcavatar }));
          queues.push(queue({ userId, caps, applyMarkdown, clientSvcavatar, eventTypes: ['message', 'realm_user'], slimPresence: true }));
          queues.push(queue({ userId, caps, applyMarkdown, clientSvcavatar, narrow: [['is', 'mentioned']] }));
        }
      }
    }
  }
  const emptyTopic = { ...message, subject: '' };
  const notices = [
    notice(
      { type: 'message', message },
      { perUser: { 10: { flags: ['mentioned'] }, 11: { flags: [] } }, hidden: { raw_content: 'hi', avatar_nullable_for: [11] } },
    ),
    notice(
      { type: 'message', message: emptyTopic },
      { perUser: { 10: { flags: [] }, 11: { flags: [] } }, hidden: { avatar_nullable_for: 'all' }, localEcho: { queueId: queues[0].id, localId: '1.5' } },
    ),
    notice({ type: 'realm_user', op: 'add', person: { user_id: 3, avatar_url: 'u' } }, { hidden: { avatar_nullable_for: [10], inaccessible_user: true } }),
    notice({ type: 'delete_message', message_ids: [1, 2], message_type: 'stream', stream_id: 4, topic: '' }),
    notice({ type: 'presence', email: 'a@b', user_id: 3, presence: {} }, { hidden: { presences: { 3: {} } } }),
    notice({ type: 'stream', op: 'update', stream_id: 4, property: 'is_archived', value: true }, { hidden: { streams: [{ stream_id: 4 }] } }),
  ];
  let shared = 0;
  for (const n of notices) {
    const byKey = new Map<string, Fixture[]>();
    for (const q of queues) {
      const key = shapeKey(q, n);
      if (key === undefined) continue;
      const events = shape(q, n);
      const earlier = byKey.get(key);
      if (earlier) {
        assert.deepEqual(events, earlier, `key ${key}`);
        shared++;
      } else byKey.set(key, events);
    }
  }
  assert.ok(shared > 0);
  assert.equal(shapeKey(queues[0], notices[1]), undefined, 'local echo is the sending queue’s own');
  assert.notEqual(shapeKey(queues[0], notices[0]), shapeKey(queue({ userId: 11 }), notices[0]), 'flags and the avatar rule are the user’s');
});
