// Sliding-window rate limits, kept in this process's memory. Each key keeps the
// times of its recent requests (at most `max` of them), so the answer is exact.
// With a broker the same windows live in Redis (src/cluster/rate-limit.ts).

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** UNIX seconds at which the window is empty again. */
  resetAt: number;
  /** Seconds until the next request would be allowed (when refused). */
  retryAfter: number;
}

export interface RateLimiter {
  /** Records one request under `key` if allowed. */
  hit(key: string, max: number, windowSeconds: number): RateLimitResult | Promise<RateLimitResult>;
  /** Looks without recording. */
  peek(key: string, max: number, windowSeconds: number): RateLimitResult | Promise<RateLimitResult>;
  reset(key: string): void | Promise<void>;
}

/** The in-memory limiter answers at once. */
export interface MemoryRateLimiter extends RateLimiter {
  hit(key: string, max: number, windowSeconds: number): RateLimitResult;
  peek(key: string, max: number, windowSeconds: number): RateLimitResult;
  reset(key: string): void;
}

/** The figures of a sliding window holding `count` requests, the oldest and newest at those times. */
export function windowResult(count: number, oldest: number, newest: number, max: number, windowMs: number, t: number, allowed: boolean): RateLimitResult {
  return {
    allowed,
    limit: max,
    remaining: Math.max(0, max - count),
    resetAt: Math.ceil((newest + windowMs) / 1000),
    retryAfter: allowed || count === 0 ? 0 : Math.max(0, (oldest + windowMs - t) / 1000),
  };
}

export function memoryRateLimiter(now: () => number = Date.now): MemoryRateLimiter {
  const log = new Map<string, number[]>();

  function recent(key: string, windowMs: number, t: number): number[] {
    const times = log.get(key) ?? [];
    let drop = 0;
    while (drop < times.length && times[drop] <= t - windowMs) drop++;
    if (drop > 0) times.splice(0, drop);
    return times;
  }

  function result(times: number[], max: number, windowMs: number, t: number, allowed: boolean): RateLimitResult {
    const newest = times.length > 0 ? times[times.length - 1] : t;
    return windowResult(times.length, times[0] ?? t, newest, max, windowMs, t, allowed);
  }

  // Forget idle keys now and then, so the map does not grow without bound.
  let lastSweep = now();
  function sweep(t: number) {
    if (t - lastSweep < 60_000) return;
    lastSweep = t;
    for (const [key, times] of log) if (times.length === 0 || times[times.length - 1] < t - 3_600_000) log.delete(key);
  }

  return {
    hit(key, max, windowSeconds) {
      const t = now();
      sweep(t);
      const windowMs = windowSeconds * 1000;
      const times = recent(key, windowMs, t);
      if (times.length >= max) return result(times, max, windowMs, t, false);
      times.push(t);
      log.set(key, times);
      return result(times, max, windowMs, t, true);
    },
    peek(key, max, windowSeconds) {
      const t = now();
      const windowMs = windowSeconds * 1000;
      const times = recent(key, windowMs, t);
      return result(times, max, windowMs, t, times.length < max);
    },
    reset(key) {
      log.delete(key);
    },
  };
}
