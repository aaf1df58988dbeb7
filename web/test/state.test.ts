import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageList, Store } from '../src/state.ts';
import { msg } from './fixtures.ts';

const ME = 1;

function register(): Store {
  const s = new Store();
  s.load({
    queue_id: 'q',
    last_event_id: -1,
    user_id: ME,
    realm_users: [
      { user_id: 1, email: 'me@x', full_name: 'Me', role: 400 },
      { user_id: 2, email: 'bo@x', full_name: 'Bo', role: 400 },
    ],
    subscriptions: [
      { stream_id: 5, name: 'general', color: '#c00', is_muted: false },
      { stream_id: 6, name: 'random', color: '#0c0', is_muted: true },
    ],
    unread_msgs: { streams: [{ stream_id: 5, topic: 'deploy', unread_message_ids: [3] }], pms: [], huddles: [], mentions: [] },
    user_topics: [],
  });
  return s;
}

test('a live message lands in the view it belongs to and counts as unread', () => {
  const s = register();
  s.list = new MessageList([{ operator: 'channel', operand: '5' }]);
  s.list.foundNewest = true;
  s.applyEvents([
    { id: 0, type: 'message', message: msg(10), flags: [] },
    { id: 1, type: 'message', message: msg(11, { stream_id: 6, display_recipient: 'random' }), flags: [] },
  ]);
  assert.deepEqual(s.list.ids, [10]);
  assert.equal(s.unreads.counts(s.isTopicMuted).stream(5), 2);
  assert.equal(s.unreads.counts(s.isTopicMuted).stream(6), 0, 'muted channel');
  assert.equal(s.lastEventId, 1);
  assert.deepEqual(
    s.topicsOf(5).map((t) => t.name),
    ['deploy'],
  );
});

test('the server copy replaces the local echo with the same local id', () => {
  const s = register();
  s.list = new MessageList([]);
  s.list.foundNewest = true;
  s.echo({ ...msg(-1, { sender_id: ME }), flags: ['read'], local_id: '7.01' });
  assert.deepEqual(s.list.ids, [-1]);
  s.applyEvents([{ id: 0, type: 'message', message: msg(12, { sender_id: ME }), flags: [], local_message_id: '7.01' }]);
  assert.deepEqual(s.list.ids, [12]);
  assert.equal(s.messages.has(-1), false);
  assert.equal(s.unreads.isUnread(12), false, "one's own message is read");
});

test('edits, reactions, stars, reads, moves and deletes apply to what is on screen', () => {
  const s = register();
  s.addMessages([
    { ...msg(3), flags: [] },
    { ...msg(4), flags: ['read'] },
  ] as any);
  s.list = new MessageList([
    { operator: 'channel', operand: '5' },
    { operator: 'topic', operand: 'deploy' },
  ]);
  s.list.ids = [3, 4];
  s.applyEvents([
    { id: 0, type: 'update_message', message_id: 3, rendered_content: '<p>new</p>', edit_timestamp: 9 },
    { id: 1, type: 'reaction', op: 'add', message_id: 3, emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'unicode_emoji', user_id: 2 },
    { id: 2, type: 'reaction', op: 'add', message_id: 3, emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'unicode_emoji', user_id: 2 },
    { id: 3, type: 'update_message_flags', op: 'add', flag: 'starred', messages: [4] },
    { id: 4, type: 'update_message_flags', op: 'add', flag: 'read', messages: [3] },
  ]);
  const m3 = s.messages.get(3)!;
  assert.equal(m3.content, '<p>new</p>');
  assert.equal(m3.last_edit_timestamp, 9);
  assert.equal(m3.reactions.length, 1);
  assert.ok(s.messages.get(4)!.flags.includes('starred'));
  assert.equal(s.unreads.isUnread(3), false);
  s.applyEvents([
    {
      id: 5,
      type: 'update_message',
      message_id: 3,
      message_ids: [3],
      orig_subject: 'deploy',
      subject: 'shipped',
      stream_id: 5,
      edit_timestamp: 10,
      propagate_mode: 'change_one',
    },
  ]);
  assert.equal(s.messages.get(3)!.subject, 'shipped');
  assert.deepEqual(s.list.ids, [4], 'moved out of the topic on screen');
  s.applyEvents([{ id: 6, type: 'delete_message', message_ids: [4], message_type: 'stream' }]);
  assert.deepEqual(s.list.ids, []);
  assert.equal(s.messages.has(4), false);
});

test('subscriptions, users, topics, typing and settings follow their events', () => {
  const s = register();
  s.applyEvents([
    { id: 0, type: 'subscription', op: 'update', stream_id: 5, property: 'is_muted', value: true },
    { id: 1, type: 'user_topic', stream_id: 6, topic_name: 'Hot', visibility_policy: 2, last_updated: 1 },
    { id: 2, type: 'realm_user', op: 'update', person: { user_id: 2, full_name: 'Bo B' } },
    { id: 3, type: 'typing', op: 'start', message_type: 'stream', stream_id: 5, topic: 'Deploy', sender: { user_id: 2, email: 'bo@x' } },
    { id: 4, type: 'user_settings', op: 'update', property: 'twenty_four_hour_time', value: true },
    { id: 5, type: 'subscription', op: 'remove', subscriptions: [{ stream_id: 6, name: 'random' }] },
  ]);
  assert.equal(s.isTopicMuted(5, 'anything'), true);
  assert.equal(s.isTopicMuted(6, 'hot'), false, 'unmuted topic in a muted channel');
  assert.equal(s.users.get(2)!.full_name, 'Bo B');
  assert.deepEqual(s.typingAt('s:5:deploy'), [2]);
  assert.equal(s.settings.twenty_four_hour_time, true);
  assert.equal(s.subs.has(6), false);
  s.applyEvents([{ id: 6, type: 'typing', op: 'stop', message_type: 'stream', stream_id: 5, topic: 'deploy', sender: { user_id: 2, email: 'bo@x' } }]);
  assert.deepEqual(s.typingAt('s:5:deploy'), []);
});
