import type { FastifyReply } from 'fastify';
import type { Services } from '../services.ts';
import { ApiError } from '../http/errors.ts';

/**
 * Counts one request against `key` and reports the X-RateLimit-* headers on the
 * reply; past the limit, a 429 RATE_LIMIT_HIT with Retry-After (digest 5.4).
 */
export async function applyRateLimit(svc: Pick<Services, 'rateLimiter' | 'config'>, reply: FastifyReply, key: string, max: number): Promise<void> {
  const r = await svc.rateLimiter.hit(key, max, svc.config.rateLimit.windowSeconds);
  reply.header('X-RateLimit-Limit', String(r.limit));
  reply.header('X-RateLimit-Remaining', String(r.remaining));
  reply.header('X-RateLimit-Reset', String(r.resetAt));
  if (!r.allowed) throw rateLimited(r.retryAfter);
}

export function rateLimited(retryAfter: number): ApiError {
  return new ApiError('RATE_LIMIT_HIT', 'API usage exceeded rate limit', {
    data: { 'retry-after': retryAfter },
    headers: { 'Retry-After': String(retryAfter) },
  });
}
