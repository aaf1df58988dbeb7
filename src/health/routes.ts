// GET /health and GET /ready for load balancers and orchestrators: outside the
// API (no organization, no credentials, no rate limit) and cheap enough to call
// every second. /health says the process answers; /ready says it can do work:
// started and not stopping, its database answering a trivial query, and its
// broker reachable where one is configured.

import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';
import { ApiError } from '../http/errors.ts';

/** Where the process is in its life; createServer moves it, /ready reads it. */
export interface Lifecycle {
  phase: 'starting' | 'serving' | 'stopping';
}

/** A check that answers quickly or throws; the database's waits at most this long. */
const CHECK_TIMEOUT_MS = 2000;

export function registerHealthRoutes(app: FastifyInstance, svc: Services): void {
  const noCache = 'no-store';
  app.get('/health', async (_req, reply) => reply.header('Cache-Control', noCache).send({ result: 'success', msg: '', status: 'alive' }));
  app.get('/ready', async (_req, reply) => {
    reply.header('Cache-Control', noCache);
    const failing = await failingChecks(svc);
    if (failing.length === 0) return reply.send({ result: 'success', msg: '', status: 'ready' });
    const err = new ApiError('SERVER_NOT_READY', `Not ready: ${failing.join(', ')}`, { status: 503, data: { status: 'not_ready', failing } });
    return reply.code(err.status).send(err.body());
  });
}

async function failingChecks(svc: Services): Promise<string[]> {
  if (svc.lifecycle.phase !== 'serving') return [svc.lifecycle.phase];
  const checks: [string, () => Promise<unknown>][] = [['database', () => sql`select 1`.execute(svc.db)]];
  // A broker, once events travel through one, offers ping(); the local bus has none.
  const broker = svc.events as { ping?: () => Promise<unknown> };
  if (typeof broker.ping === 'function') checks.push(['broker', () => broker.ping!()]);
  const results = await Promise.all(
    checks.map(([name, check]) =>
      within(check(), CHECK_TIMEOUT_MS).then(
        () => null,
        () => name,
      ),
    ),
  );
  return results.filter((r): r is string => r !== null);
}

function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms).unref();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
