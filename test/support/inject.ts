// A request without a socket, handed to what a socket's request reaches first: the server's
// request listener, which serves the common GET /api/v1/events itself (src/events/lean-poll.ts)
// and gives the rest to Fastify. `app.inject` would go to Fastify directly, past that path.

import type { RequestListener } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { inject, type InjectOptions, type Response } from 'light-my-request';

export function injectRequest(app: FastifyInstance, options: InjectOptions): Promise<Response> {
  return inject(app.server.listeners('request')[0] as RequestListener, options);
}
