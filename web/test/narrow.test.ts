import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashToNarrow, matches, narrowToApi, narrowToHash, parseSearch, viewKind, type NarrowMessage } from '../src/narrow.ts';

const ME = 1;
const streamMsg = (over: Partial<NarrowMessage> = {}): NarrowMessage => ({
  id: 10,
  type: 'stream',
  stream_id: 5,
  subject: 'Deploy',
  sender_id: 2,
  display_recipient: 'general',
  flags: [],
  ...over,
});
const dmMsg = (ids: number[], over: Partial<NarrowMessage> = {}): NarrowMessage => ({
  id: 11,
  type: 'private',
  subject: '',
  sender_id: 2,
  display_recipient: ids.map((id) => ({ id })),
  flags: [],
  ...over,
});

test('hashes round-trip, with readable channel names and encoded topics', () => {
  const n = [
    { operator: 'channel', operand: '5' },
    { operator: 'topic', operand: 'deploy plan/2' },
  ];
  const hash = narrowToHash(n, () => 'general');
  assert.equal(hash, '#narrow/channel/5-general/topic/deploy+plan%2F2');
  assert.deepEqual(hashToNarrow(hash), n);
  assert.deepEqual(hashToNarrow('#feed'), []);
  assert.equal(hashToNarrow('#settings'), null);
  assert.deepEqual(hashToNarrow('#narrow/stream/5-general/subject/x'), [
    { operator: 'channel', operand: '5' },
    { operator: 'topic', operand: 'x' },
  ]);
  assert.deepEqual(hashToNarrow('#narrow/-is/starred'), [{ operator: 'is', operand: 'starred', negated: true }]);
});

test('search text becomes operators, names resolved to ids', () => {
  const n = parseSearch('channel:general topic:"deploy plan" sender:bob@x.y -is:starred hello world', {
    channel: (name) => (name === 'general' ? 5 : undefined),
    user: (email) => (email === 'bob@x.y' ? 7 : undefined),
  });
  assert.deepEqual(n, [
    { operator: 'channel', operand: '5' },
    { operator: 'topic', operand: 'deploy plan' },
    { operator: 'sender', operand: '7' },
    { operator: 'is', operand: 'starred', negated: true },
    { operator: 'search', operand: 'hello world' },
  ]);
  assert.equal(viewKind(n), 'search');
  assert.deepEqual(narrowToApi(n).slice(0, 3), [
    { operator: 'channel', operand: 5 },
    { operator: 'topic', operand: 'deploy plan' },
    { operator: 'sender', operand: 7 },
  ]);
});

test('view kinds name the sidebar views', () => {
  assert.equal(viewKind([]), 'feed');
  assert.equal(viewKind([{ operator: 'channel', operand: '1' }]), 'channel');
  assert.equal(
    viewKind([
      { operator: 'channel', operand: '1' },
      { operator: 'topic', operand: 'a' },
    ]),
    'topic',
  );
  assert.equal(viewKind([{ operator: 'dm', operand: '2,3' }]), 'dm');
  assert.equal(viewKind([{ operator: 'is', operand: 'mentioned' }]), 'mentioned');
  assert.equal(viewKind([{ operator: 'is', operand: 'starred' }]), 'starred');
  assert.equal(viewKind([{ operator: 'is', operand: 'dm' }]), 'dms');
});

test('live messages are placed locally where the client can tell, else left to the server', () => {
  const topic = [
    { operator: 'channel', operand: '5' },
    { operator: 'topic', operand: 'deploy' },
  ];
  assert.equal(matches(topic, streamMsg(), ME), true, 'topics compare without case');
  assert.equal(matches(topic, streamMsg({ subject: 'other' }), ME), false);
  assert.equal(matches(topic, streamMsg({ stream_id: 6 }), ME), false);
  assert.equal(matches([{ operator: 'dm', operand: '3,2' }], dmMsg([1, 2, 3]), ME), true, 'participants in any order, without me');
  assert.equal(matches([{ operator: 'dm', operand: '2' }], dmMsg([1, 2, 3]), ME), false);
  assert.equal(matches([{ operator: 'dm', operand: '1' }], dmMsg([1]), ME), true, 'a note to self');
  assert.equal(matches([{ operator: 'is', operand: 'mentioned' }], streamMsg({ flags: ['topic_wildcard_mentioned'] }), ME), true);
  assert.equal(matches([{ operator: 'is', operand: 'starred', negated: true }], streamMsg({ flags: ['starred'] }), ME), false);
  assert.equal(matches([{ operator: 'search', operand: 'deploy' }], streamMsg(), ME), null);
  assert.equal(
    matches(
      [
        { operator: 'channel', operand: '6' },
        { operator: 'search', operand: 'x' },
      ],
      streamMsg(),
      ME,
    ),
    false,
    'a known mismatch wins over an unknown',
  );
});
