import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Unreads } from '../src/unread.ts';

const ME = 1;

function fromRegister() {
  return new Unreads(ME, {
    streams: [
      { stream_id: 5, topic: 'deploy', unread_message_ids: [10, 11] },
      { stream_id: 5, topic: 'lunch', unread_message_ids: [12] },
      { stream_id: 6, topic: 'x', unread_message_ids: [13] },
    ],
    pms: [{ other_user_id: 2, unread_message_ids: [14] }],
    huddles: [{ user_ids_string: '1,2,3', unread_message_ids: [15, 16] }],
    mentions: [11, 14],
  });
}

test('counts per channel, topic, conversation and mentions from register', () => {
  const u = fromRegister();
  const c = u.counts();
  assert.equal(c.stream(5), 3);
  assert.equal(c.topic(5, 'DEPLOY'), 2);
  assert.equal(c.stream(6), 1);
  assert.equal(c.dm('2'), 1);
  assert.equal(c.dm('2,3'), 2);
  assert.equal(c.dmTotal, 3);
  assert.equal(c.mentions, 2);
  assert.equal(c.total, 7);
});

test('muted topics leave the channel and total counts but keep their own', () => {
  const c = fromRegister().counts((s, t) => s === 5 && t === 'lunch');
  assert.equal(c.stream(5), 2);
  assert.equal(c.topic(5, 'lunch'), 1);
  assert.equal(c.total, 6);
});

test('new messages, reading, moving and unreading change the counts', () => {
  const u = fromRegister();
  u.add({ id: 20, type: 'stream', stream_id: 6, subject: 'x', sender_id: 2, display_recipient: 'g' }, ['mentioned']);
  u.add({ id: 21, type: 'stream', stream_id: 6, subject: 'x', sender_id: 1, display_recipient: 'g' }, ['read']);
  assert.equal(u.counts().stream(6), 2);
  assert.equal(u.counts().mentions, 3);
  u.markRead([10, 11, 20]);
  assert.equal(u.counts().stream(5), 1);
  assert.equal(u.counts().mentions, 1);
  u.move([12], 6, 'renamed');
  assert.equal(u.counts().stream(5), 0);
  assert.equal(u.counts().topic(6, 'renamed'), 1);
  u.addDetails(10, { type: 'stream', stream_id: 5, topic: 'deploy', mentioned: true });
  u.addDetails(30, { type: 'private', user_ids: [1, 3] });
  assert.equal(u.counts().topic(5, 'deploy'), 1);
  assert.equal(u.counts().dm('3'), 1);
  assert.deepEqual(u.idsIn(5).sort(), [10]);
  u.markAllRead();
  assert.equal(u.counts().total, 0);
});
