import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryRateLimiter } from '../../src/auth/rate-limit.ts';

test('a sliding window admits max requests, then refuses until the oldest ages out', () => {
  let now = 1_000_000;
  const limiter = memoryRateLimiter(() => now);
  for (let i = 0; i < 3; i++) {
    const r = limiter.hit('k', 3, 60);
    assert.equal(r.allowed, true);
    assert.equal(r.remaining, 2 - i);
    now += 1000;
  }
  const refused = limiter.hit('k', 3, 60);
  assert.equal(refused.allowed, false);
  assert.equal(refused.remaining, 0);
  // The first request was at 1_000_000; the window frees up 60 s later.
  assert.equal(refused.retryAfter, 57);
  assert.equal(refused.resetAt, Math.ceil((1_002_000 + 60_000) / 1000));
  now = 1_000_000 + 60_000;
  assert.equal(limiter.hit('k', 3, 60).allowed, true);
  assert.equal(limiter.hit('other', 3, 60).remaining, 2, 'keys are independent');
});

test('peek does not count', () => {
  const limiter = memoryRateLimiter(() => 0);
  limiter.peek('k', 1, 60);
  limiter.peek('k', 1, 60);
  assert.equal(limiter.hit('k', 1, 60).allowed, true);
  assert.equal(limiter.peek('k', 1, 60).allowed, false);
});

test('with the broker unreachable, limits are counted in the process: still refused past max', async () => {
  const { brokerRateLimiter } = await import('../../src/cluster/rate-limit.ts');
  const pino = (await import('pino')).default;
  const down = () => Promise.reject(new Error('Connection is closed.'));
  const broker = { key: (k: string) => `t:${k}`, cmd: { eval: down, del: down } } as any;
  const limiter = brokerRateLimiter(broker, pino({ level: 'silent' }));
  for (let i = 0; i < 3; i++) assert.equal((await limiter.hit('login:1', 3, 60)).allowed, true);
  assert.equal((await limiter.peek('login:1', 3, 60)).allowed, false);
  const refused = await limiter.hit('login:1', 3, 60);
  assert.equal(refused.allowed, false);
  assert.ok(refused.retryAfter > 0);
  await limiter.reset('login:1');
  assert.equal((await limiter.hit('login:1', 3, 60)).allowed, true);
});
