// The metrics' HTTP side: every answered request is counted by its route
// pattern (`/api/v1/messages/:message_id`, never the URL it was called with),
// and GET /metrics serves the Prometheus text to whoever holds METRICS_TOKEN.

import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import { ApiError } from '../http/errors.ts';

/** Counts every request; installs GET /metrics (off, a 404, unless METRICS_TOKEN is set). */
export function registerMetricsRoutes(app: FastifyInstance, svc: Services): void {
  const { metrics } = svc;
  const count = (req: FastifyRequest, reply: FastifyReply, route: string) => {
    const labels = { method: req.method, route, status: String(reply.statusCode) };
    metrics.requests.inc(labels);
    metrics.requestSeconds.observe(labels, reply.elapsedTime / 1000);
  };
  // Each route's hook knows its pattern (`req.routeOptions` builds an object per read). Hooks
  // that call `done` cost no promise each.
  app.addHook('onRoute', (route) => {
    const hook = (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      count(req, reply, route.url);
      done();
    };
    route.onResponse = [...[route.onResponse ?? []].flat(), hook];
  });
  app.addHook('onResponse', (req, reply, done) => {
    if (req.is404) count(req, reply, 'unmatched');
    done();
  });
  app.get('/metrics', async (req, reply) => {
    const token = svc.config.metricsToken;
    if (!token) return reply.code(404).send({ result: 'error', msg: 'Not found', code: 'BAD_REQUEST' });
    if (!bearerMatches(req, token)) return refuse(reply);
    const text = await metrics.registry.metrics();
    return reply.header('Cache-Control', 'no-store').type(metrics.registry.contentType).send(text);
  });
}

function bearerMatches(req: FastifyRequest, token: string): boolean {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(.+)$/i.exec(header);
  if (!match) return false;
  const given = Buffer.from(match[1].trim());
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

function refuse(reply: FastifyReply): FastifyReply {
  const err = new ApiError('UNAUTHORIZED', 'Metrics need the bearer token set in METRICS_TOKEN', { headers: { 'WWW-Authenticate': 'Bearer' } });
  return reply.code(err.status).headers(err.headers).send(err.body());
}
