// The User object's parts that register keeps between calls (users/format.ts):
// kept answers must be the ones computed afresh.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { avatarUrl, isoDate } from '../../src/users/format.ts';

test('isoDate: toISOString with +00:00', () => {
  const dates = [new Date(0), new Date('2026-11-25T16:01:44.261Z'), new Date('1999-12-31T23:59:59.999Z'), new Date(Date.UTC(2024, 1, 29, 0, 0, 0, 7))];
  for (let round = 0; round < 2; round++) {
    for (const d of dates) assert.equal(isoDate(d), d.toISOString().replace('Z', '+00:00'));
  }
  assert.equal(isoDate(new Date('2026-11-25T16:01:44.261Z')), '2026-11-25T16:01:44.261+00:00');
  assert.throws(() => isoDate(new Date(Number.NaN)), RangeError);
});

test('avatarUrl: the provider hash of the lower-cased address, per address, the same when asked again', () => {
  const user = (email: string, version = 1) => ({ id: 7, realm_id: 1, delivery_email: email, avatar_source: 'G', avatar_version: version });
  const md5 = (s: string) => createHash('md5').update(s).digest('hex');
  for (let round = 0; round < 2; round++) {
    assert.equal(avatarUrl(user('Ada@Example.com')), `https://secure.gravatar.com/avatar/${md5('ada@example.com')}?d=identicon&version=1`);
    assert.equal(avatarUrl(user('bob@example.com', 3)), `https://secure.gravatar.com/avatar/${md5('bob@example.com')}?d=identicon&version=3`);
  }
  assert.equal(avatarUrl({ ...user('ada@example.com', 2), avatar_source: 'U' }), '/user_avatars/1/7.png?version=2');
});
