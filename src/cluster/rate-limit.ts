// The sliding-window rate limits (and login-failure counts) of every process,
// in Redis: one sorted set of request times per key, trimmed, counted and added
// to atomically by one script, expiring with its window. Redis's own clock is
// the clock, so machines whose clocks differ still share one window. If the
// broker cannot be reached, each process counts in its own memory meanwhile
// (logged): the limits still hold per process, and no request waits on Redis.

import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import { memoryRateLimiter, windowResult, type RateLimiter, type RateLimitResult } from '../auth/rate-limit.ts';
import type { Broker } from './broker.ts';

// KEYS[1]: the window; ARGV: window ms, max, record (1 or 0), a unique member.
// Returns allowed, count, oldest, newest, now (ms).
const WINDOW_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local windowMs = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - windowMs)
local n = redis.call('ZCARD', KEYS[1])
local allowed = n < tonumber(ARGV[2])
if allowed and ARGV[3] == '1' then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], windowMs)
  n = n + 1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2] or now
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2] or now
return {allowed and 1 or 0, n, tonumber(oldest), tonumber(newest), now}
`;

export function brokerRateLimiter(broker: Pick<Broker, 'cmd' | 'key'>, log: Logger): RateLimiter {
  const key = (k: string) => broker.key(`rl:${k}`);
  const local = memoryRateLimiter();

  async function window(k: string, max: number, windowSeconds: number, record: boolean): Promise<RateLimitResult> {
    const windowMs = windowSeconds * 1000;
    try {
      const member = `${Date.now()}-${randomBytes(4).toString('hex')}`;
      const [allowed, n, oldest, newest, now] = (await broker.cmd.eval(WINDOW_SCRIPT, 1, key(k), windowMs, max, record ? '1' : '0', member)) as number[];
      return windowResult(n, oldest, newest, max, windowMs, now, allowed === 1);
    } catch (err) {
      log.warn({ err }, 'rate limit unavailable (broker): counted by this process alone');
      return record ? local.hit(k, max, windowSeconds) : local.peek(k, max, windowSeconds);
    }
  }

  return {
    hit: (k, max, windowSeconds) => window(k, max, windowSeconds, true),
    peek: (k, max, windowSeconds) => window(k, max, windowSeconds, false),
    async reset(k) {
      local.reset(k);
      await broker.cmd.del(key(k)).catch((err) => log.warn({ err }, 'rate limit reset failed (broker)'));
    },
  };
}
