// The viewer cache (src/channels/viewer-cache.ts): what GET /messages reads before its
// window, kept until a change that may touch it is heard, and nothing read before one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ViewerCache } from '../../src/channels/viewer-cache.ts';
import type { Notice } from '../../src/events/types.ts';
import type { Channel } from '../../src/channels/tables.ts';

const sets = { groups: new Set([1, 2]), subscribed: new Set([7]) };
const channel = { id: 7, name: 'general' } as Channel;
const notice = (type: string, realmId = 1) => ({ realmId, users: [], event: { type, op: 'update' } }) as unknown as Notice;

test('kept: the sets alone, or with the channel a key names; a channel not found is not kept', () => {
  const cache = new ViewerCache(5_000);
  cache.set(cache.stamp, 1, 5, sets, { key: '1:7:null', channel });
  assert.deepEqual(cache.get(5), { sets, channel: undefined });
  assert.deepEqual(cache.get(5, '1:7:null'), { sets, channel });
  assert.equal(cache.get(5, '1:null:other'), undefined);
  cache.set(cache.stamp, 1, 5, sets, { key: '1:null:none', channel: undefined });
  assert.equal(cache.get(5, '1:null:none'), undefined);
});

test('changes to subscriptions, groups, users, channels or the organization drop its entries; other events and organizations do not', () => {
  for (const type of ['subscription', 'user_group', 'realm_user', 'realm_bot', 'stream', 'realm']) {
    const cache = new ViewerCache(5_000);
    cache.set(cache.stamp, 1, 5, sets, { key: '1:7:null', channel });
    cache.set(cache.stamp, 2, 6, sets);
    cache.observe(notice('message'));
    cache.observe(notice('typing'));
    assert.ok(cache.get(5, '1:7:null'), `kept after unrelated events (${type})`);
    cache.observe(notice(type));
    assert.equal(cache.get(5), undefined, type);
    assert.equal(cache.get(5, '1:7:null'), undefined, type);
    assert.ok(cache.get(6), `another organization's entry stays (${type})`);
  }
});

test('a read that began before a change is not remembered; lifetime 0 keeps nothing', () => {
  const cache = new ViewerCache(5_000);
  const stamp = cache.stamp;
  cache.observe(notice('subscription'));
  cache.set(stamp, 1, 5, sets);
  assert.equal(cache.get(5), undefined);
  const off = new ViewerCache(0);
  off.set(off.stamp, 1, 5, sets);
  assert.equal(off.get(5), undefined);
});
