// Basic auth headers (src/auth/basic.ts): a header decoded once is remembered, with the
// same answer each time; a malformed one is refused each time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBasicAuth } from '../../src/auth/basic.ts';
import { ApiError } from '../../src/http/errors.ts';

const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

test('the same header gives the same credentials each time; malformed ones are refused each time', () => {
  const header = basic('ann@example.com:abcdefghijklmnopqrstuvwxyz012345 ');
  const first = parseBasicAuth(header);
  assert.deepEqual(first, { username: 'ann@example.com', apiKey: 'abcdefghijklmnopqrstuvwxyz012345' });
  assert.deepEqual(parseBasicAuth(header), first);
  assert.ok(Object.isFrozen(first), 'shared between requests, so never changed');
  for (let i = 0; i < 2; i++) {
    assert.throws(
      () => parseBasicAuth(basic('no colon here')),
      (e) => e instanceof ApiError && e.message === 'Invalid authorization header for basic auth',
    );
    assert.throws(
      () => parseBasicAuth('Bearer x'),
      (e) => e instanceof ApiError && e.message === 'This endpoint requires HTTP basic authentication.',
    );
  }
  assert.equal(parseBasicAuth(''), undefined);
  assert.equal(parseBasicAuth(undefined), undefined);
  const long = basic(`${'x'.repeat(500)}@example.com:abcdefghijklmnopqrstuvwxyz012345`);
  assert.equal(parseBasicAuth(long)?.apiKey, 'abcdefghijklmnopqrstuvwxyz012345');
});
