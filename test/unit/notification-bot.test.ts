// The Markdown Notification Bot writes (as the reference's topic_link_util).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { channelLink, silentMention, topicLink } from '../../src/notification_bot/index.ts';

test('silent mentions name a user by name and id', () => {
  assert.equal(silentMention({ full_name: 'Mia Member', id: 7 }), '@_**Mia Member|7**');
});

test('channel links: #**name**, or a plain link when the name would break it', () => {
  assert.equal(channelLink({ id: 3, name: 'general' }), '#**general**');
  assert.equal(channelLink({ id: 3, name: 'a*b' }), '[#a&#42;b](#narrow/channel/3-a*b)');
  assert.equal(channelLink({ id: 9, name: 'x > y' }), '[#x &gt; y](#narrow/channel/9-x-.3E-y)');
  assert.equal(channelLink({ id: 4, name: 'cost $$ & [tags]' }), '[#cost &#36;&#36; &amp; &#91;tags&#93;](#narrow/channel/4-cost-.24.24-.26-.5Btags.5D)');
  assert.equal(channelLink({ id: 5, name: 'v1.2 (beta)' }), '#**v1.2 (beta)**');
  assert.equal(channelLink({ id: 5, name: 'v1.2 (`beta`)' }), '[#v1.2 (&#96;beta&#96;)](#narrow/channel/5-v1.2E2-.28.60beta.60.29)');
});

test('topic links: #**channel>topic**, or a plain link naming the empty topic by its display name', () => {
  assert.equal(topicLink({ id: 3, name: 'general' }, 'lunch', 'general chat'), '#**general>lunch**');
  assert.equal(topicLink({ id: 3, name: 'general' }, 'a > b', 'general chat'), '[#general > a &gt; b](#narrow/channel/3-general/topic/a.20.3E.20b)');
  assert.equal(topicLink({ id: 3, name: 'a*b' }, '', 'general chat'), '[#a&#42;b > general chat](#narrow/channel/3-a*b/topic/)');
});
