// POST /api/v1/external/{integration}: a service posts its own payload, with a
// bot's API key (the `api_key` parameter, or Basic authentication), and the
// integration's messages are sent as that bot to the `stream` parameter's
// channel (by name or id), or as a direct message to the bot's owner without
// one. The body is read as sent (not as API parameters), so this route lives
// outside the Router, with the same authentication, rate limit and envelope.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import { API_PREFIX, notFoundRoute } from '../http/router.ts';
import { ApiError, badRequest, missingArgument } from '../http/errors.ts';
import { isRefusedValue } from '../db/errors.ts';
import { authenticateApiKey, parseBasicAuth } from '../auth/basic.ts';
import { applyRateLimit } from '../auth/rate-limit-http.ts';
import { subdomainFromHost } from '../realm/queries.ts';
import type { WebhookRequest } from './payload.ts';
import { integrationNamed } from './index.ts';
import { postWebhookMessages } from './actions.ts';

const MAX_BODY_BYTES = 4 * 1024 * 1024;

function paramReader(req: FastifyRequest, form: URLSearchParams | undefined): (name: string) => string | undefined {
  const query = req.query as Record<string, string | string[] | undefined>;
  return (name) => {
    const value = query[name];
    if (Array.isArray(value)) return value[value.length - 1];
    return value ?? form?.get(name) ?? undefined;
  };
}

async function handle(svc: Services, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const integration = integrationNamed((req.params as { integration: string }).integration);
  if (!integration) return notFoundRoute(reply);
  const body = typeof req.body === 'string' ? req.body : '';
  const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  const form = contentType === 'application/x-www-form-urlencoded' ? new URLSearchParams(body) : undefined;
  const param = paramReader(req, form);
  const apiKey = param('api_key');
  const credentials = apiKey !== undefined ? { username: null, apiKey } : parseBasicAuth(req.headers.authorization);
  if (!credentials) throw missingArgument('api_key');
  const subdomain = subdomainFromHost(req.headers.host, svc.config.externalUrl);
  const { user, realm } = await authenticateApiKey(svc.db, credentials, subdomain, svc.credentials);
  await applyRateLimit(svc, reply, `user:${user.id}`, svc.config.rateLimit.perUser);
  const request: WebhookRequest = {
    body,
    contentType,
    header: (name) => {
      const value = req.headers[name.toLowerCase()];
      return Array.isArray(value) ? value[0] : value;
    },
    param,
  };
  const userTopic = param('topic');
  const messages = integration.handle(request, { userTopic }).map((m) => ({ ...m, topic: userTopic ?? m.topic }));
  await postWebhookMessages(svc, realm, user, integration, param('stream'), messages);
  return reply.send({ result: 'success', msg: '' });
}

export function registerIntegrationRoutes(app: FastifyInstance, svc: Services): void {
  app.register(async (scope) => {
    // Whatever the service sends is read as text: integrations parse their own payloads.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: MAX_BODY_BYTES }, (_req, text, done) => done(null, text));
    scope.post(`${API_PREFIX}/external/:integration`, async (req, reply) => {
      reply.header('Cache-Control', 'max-age=0, no-cache, no-store, must-revalidate, private');
      try {
        return await handle(svc, req, reply);
      } catch (err) {
        const known =
          err instanceof ApiError
            ? err
            : isRefusedValue(err)
              ? badRequest('Invalid value: out of range, or containing characters that cannot be stored')
              : undefined;
        if (!known) throw err;
        return reply.code(known.status).headers(known.headers).send(known.body());
      }
    });
  });
}
