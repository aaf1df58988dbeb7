// Assembles the HTTP server: body parsing, every domain's routes, and the
// answers for what no route handles.

import { createServer as createHttpServer } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Services } from './services.ts';
import { registerBodyParsers } from './http/body.ts';
import { lazyRequestLogger } from './http/request-logger.ts';
import { API_PREFIX, Router, SESSION_API_PREFIX, notFoundRoute } from './http/router.ts';
import { ApiError } from './http/errors.ts';
import { clientErrorHandler, frameworkErrors, refuseLongUrl } from './http/refusals.ts';
import { authRoutes } from './auth/routes.ts';
import { realmRoutes } from './realm/routes.ts';
import { userRoutes } from './users/routes.ts';
import { registerAvatarRoutes } from './users/avatar-route.ts';
import { eventRoutes } from './events/routes.ts';
import { leanPolls } from './events/lean-poll.ts';
import { userGroupRoutes } from './user_groups/routes.ts';
import { channelRoutes } from './channels/routes.ts';
import { channelFolderRoutes } from './channel_folders/routes.ts';
import { messageRoutes } from './messages/routes.ts';
import { messageFlagRoutes } from './messages/flags/routes.ts';
import { topicRoutes } from './messages/topics/routes.ts';
import { typingRoutes } from './messages/typing/routes.ts';
import { reactionRoutes } from './messages/reactions/routes.ts';
import { submessageRoutes } from './messages/submessages/routes.ts';
import { reportRoutes } from './messages/report/routes.ts';
import { messageEditRoutes } from './messages/edit/routes.ts';
import { customProfileFieldRoutes } from './custom_profile_fields/routes.ts';
import { savedSnippetRoutes } from './saved_snippets/routes.ts';
import { linkifierRoutes } from './linkifiers/routes.ts';
import { customEmojiRoutes } from './custom_emoji/routes.ts';
import { registerEmojiImageRoutes } from './custom_emoji/serve.ts';
import { settingsRoutes } from './users/settings-routes.ts';
import { presenceRoutes } from './presence/routes.ts';
import { navigationViewRoutes } from './navigation_views/routes.ts';
import { draftRoutes } from './drafts/routes.ts';
import { scheduledMessageRoutes } from './scheduled_messages/routes.ts';
import { pushRoutes } from './push/routes.ts';
import { invitationRoutes } from './invitations/routes.ts';
import { userStatusRoutes } from './user_status/routes.ts';
import { mutedUserRoutes } from './muted_users/routes.ts';
import { alertWordRoutes } from './alert_words/routes.ts';
import { readReceiptRoutes } from './messages/flags/read-receipt-routes.ts';
import { uploadRoutes } from './uploads/routes.ts';
import { registerUploadFileRoutes } from './uploads/serve.ts';
import { realmPlaygroundRoutes } from './realm_playgrounds/routes.ts';
import { botRoutes } from './bots/routes.ts';
import { registerIntegrationRoutes } from './integrations/routes.ts';
import { registerImageProxyRoutes } from './previews/proxy.ts';
import { ACCOUNTS_PREFIX, accountRoutes } from './auth/account-routes.ts';
import { registerEmojiDataRoute } from './web_client/emoji-data.ts';
import { WebClient } from './web_client/serve.ts';
import { registerEmailChangeRoute } from './users/email-change-route.ts';
import { registerHealthRoutes } from './health/routes.ts';
import { registerMetricsRoutes } from './metrics/http.ts';
import { realmExportRoutes, registerExportFileRoutes } from './export/routes.ts';

/** Every domain's API routes, in one table. */
export function apiRoutes(): Router {
  const router = new Router();
  authRoutes(router);
  realmRoutes(router);
  userRoutes(router);
  eventRoutes(router);
  userGroupRoutes(router);
  channelRoutes(router);
  channelFolderRoutes(router);
  messageRoutes(router);
  messageFlagRoutes(router);
  topicRoutes(router);
  typingRoutes(router);
  reactionRoutes(router);
  submessageRoutes(router);
  reportRoutes(router);
  messageEditRoutes(router);
  customProfileFieldRoutes(router);
  savedSnippetRoutes(router);
  linkifierRoutes(router);
  customEmojiRoutes(router);
  settingsRoutes(router);
  presenceRoutes(router);
  navigationViewRoutes(router);
  draftRoutes(router);
  scheduledMessageRoutes(router);
  pushRoutes(router);
  invitationRoutes(router);
  userStatusRoutes(router);
  mutedUserRoutes(router);
  alertWordRoutes(router);
  readReceiptRoutes(router);
  uploadRoutes(router);
  realmPlaygroundRoutes(router);
  botRoutes(router);
  realmExportRoutes(router);
  return router;
}

export async function buildApp(svc: Services): Promise<FastifyInstance> {
  let closing = false;
  const app = Fastify({
    // The common GET /api/v1/events is served before Fastify (events/lean-poll.ts); with request
    // lines logged (debug), every request goes to Fastify.
    serverFactory: (handler, opts) => {
      const server = createHttpServer();
      server.on('request', svc.config.logLevel === 'debug' ? handler : leanPolls(svc, handler, () => closing, server));
      // What Fastify sets on a server it makes itself (its options, defaults filled in).
      const { keepAliveTimeout, requestTimeout, connectionTimeout, maxRequestsPerSocket } = opts as Record<string, number>;
      server.keepAliveTimeout = keepAliveTimeout;
      server.requestTimeout = requestTimeout;
      server.setTimeout(connectionTimeout);
      if (maxRequestsPerSocket > 0) server.maxRequestsPerSocket = maxRequestsPerSocket;
      return server;
    },
    loggerInstance: svc.log as FastifyBaseLogger,
    // One line per request only when debugging: the API is chatty (long-polls).
    logController: new LogController({ disableRequestLogging: svc.config.logLevel !== 'debug' }),
    childLoggerFactory: lazyRequestLogger,
    exposeHeadRoutes: false,
    bodyLimit: 4 * 1024 * 1024,
    trustProxy: true,
    routerOptions: { ignoreDuplicateSlashes: true },
    clientErrorHandler: clientErrorHandler(svc.log as FastifyBaseLogger),
    frameworkErrors,
  });
  // From here on Fastify answers 503 to new requests: the lean path leaves them to it.
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', refuseLongUrl);
  await registerBodyParsers(app, svc.config.maxFileUploadMib * 1024 * 1024);
  // Outside the API: no organization, no credentials (health), its own bearer token (metrics).
  registerMetricsRoutes(app, svc);
  registerHealthRoutes(app, svc);
  const api = apiRoutes();
  api.install(app, svc);
  // The browser's API: the same endpoints, with the session (docs/DECISIONS.md).
  api.install(app, svc, { prefix: SESSION_API_PREFIX, scheme: 'session' });
  accountRoutes().install(app, svc, { prefix: ACCOUNTS_PREFIX, scheme: 'session', declaredMethodsOnly: true });
  registerAvatarRoutes(app, svc);
  registerEmojiImageRoutes(app, svc);
  registerEmojiDataRoute(app);
  registerUploadFileRoutes(app, svc);
  registerIntegrationRoutes(app, svc);
  registerImageProxyRoutes(app, svc);
  registerEmailChangeRoute(app, svc);
  registerExportFileRoutes(app, svc);

  const webClient = new WebClient(svc.config);
  app.setNotFoundHandler((req, reply) => {
    // Everything else a browser GETs is the web client's: its files and its pages.
    if (WebClient.claims(req)) return webClient.serve(req, reply);
    if ([API_PREFIX, SESSION_API_PREFIX, ACCOUNTS_PREFIX].some((prefix) => req.url === prefix || req.url.startsWith(`${prefix}/`))) {
      return notFoundRoute(reply);
    }
    return reply.code(404).send({ result: 'error', msg: 'Not found', code: 'BAD_REQUEST' });
  });

  app.setErrorHandler((err, req, reply) => {
    if (err instanceof ApiError) return reply.code(err.status).headers(err.headers).send(err.body());
    const status = (err as { statusCode?: number }).statusCode;
    // Malformed bodies, oversized uploads and the like: the client's fault, said plainly.
    if (status !== undefined && status >= 400 && status < 500) {
      return reply.code(status).send({ result: 'error', msg: (err as Error).message, code: 'BAD_REQUEST' });
    }
    req.log.error({ err }, 'unhandled error');
    return reply.code(500).send({ result: 'error', msg: 'Internal server error' });
  });
  return app;
}
