// The API's routing and request conventions (spec "What the service does",
// digest section 0). Domains declare endpoints in a table; one dispatcher per
// path does everything they have in common, in this order: method (override,
// OPTIONS, 405), organization from the Host header, authentication, rate limit,
// parameters, the handler, and the success or error envelope.

import type { OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { ApiError, badRequest, unauthorized } from './errors.ts';
import { COMPAT_PARAM_NAMES, ignoredParameters, parseParams, type ParamSource, type ParamSpecs, type ParamValues } from './params.ts';
import { readBody, type UploadedFile } from './body.ts';
import { getRealmBySubdomain, settingsOf, subdomainFromHost } from '../realm/queries.ts';
import { authenticate, type Scheme } from '../auth/authenticate.ts';
import type { Session } from '../auth/tables.ts';
import { checkOrigin } from '../auth/sessions.ts';
import { applyRateLimit } from '../auth/rate-limit-http.ts';
import { MAX_ROW_ID } from '../db/ids.ts';
import { isRefusedValue } from '../db/errors.ts';
import { hasRawMember, serializeMembers } from './raw-json.ts';
import { JSON_TYPE, NO_CACHE, successEnvelope, writeSuccessBytes } from './success-bytes.ts';

export const API_PREFIX = '/api/v1';
/** The browser's API: the same table, authenticated by the session cookie (the reference's /json). */
export const SESSION_API_PREFIX = '/json';

/** Where a table is installed and how its callers authenticate. */
export interface Mount {
  prefix: string;
  scheme: Scheme;
  /**
   * Only the declared methods reach the table (plus OPTIONS): others fall
   * through, so that GET of a path shared with a page of the web client
   * (/accounts/password/reset/<token>) serves the page.
   */
  declaredMethodsOnly?: boolean;
}

const API_MOUNT: Mount = { prefix: API_PREFIX, scheme: 'api_key' };

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type Method = (typeof METHODS)[number];

export interface RequestInfo {
  /** The client's name from its User-Agent ("ZulipMobile/27.1 ..." -> "ZulipMobile"). */
  clientName: string;
  ip: string;
  files: UploadedFile[];
  /** Path parameters as given, for routes that interpret them themselves. */
  path: Record<string, string>;
  /** Aborted when the client goes away before the answer (long-polls stop waiting). */
  signal: AbortSignal;
  /** How this mount authenticates: 'session' for the browser's /json and /accounts. */
  scheme: Scheme;
  /** Adds Set-Cookie headers to the answer (the session routes). */
  setCookies(values: string[]): void;
  /**
   * The handler answers later by itself (a parked long-poll) and returns DEFERRED:
   * the same success envelope, status and headers, written straight to the socket.
   */
  defer(): DeferredAnswer;
}

/** An answer written after the handler returned (see `RequestInfo.defer`). */
export interface DeferredAnswer {
  /** Answers 200 with the success envelope around `members` (JSON object members: `"events":[...]`). */
  succeed(members: string): void;
  /** `listener` runs once if the client goes away before the answer. */
  onGone(listener: () => void): void;
}

/** What a handler that called `request.defer()` returns: the dispatcher sends nothing. */
export const DEFERRED: HandlerResult = Object.freeze({});

export interface UserContext {
  svc: Services;
  realm: Realm;
  user: User;
  request: RequestInfo;
  /** The browser session that authenticated the request, if a cookie did. */
  session?: Session;
}

/** For endpoints that work without credentials: `user` is null for anonymous callers. */
export interface PublicContext {
  svc: Services;
  /** Undefined when the Host header names no organization. */
  realm: Realm | undefined;
  subdomain: string;
  user: User | null;
  request: RequestInfo;
}

export type HandlerResult = Record<string, unknown>;

/** `{user_id}` in a path gives the handler `user_id: number`; `{name:str}` gives a string. */
export type PathParamsOf<P extends string> = P extends `${string}{${infer Name}}${infer Rest}`
  ? (Name extends `${infer N}:str` ? { [K in N]: string } : { [K in Name]: number }) & PathParamsOf<Rest>
  : // biome-ignore lint/complexity/noBannedTypes: the empty object type ends the recursion (no parameters left)
    {};

export interface EndpointOptions {
  /** False for the long-poll, whose pace the server sets. */
  rateLimit?: boolean;
  /** Incoming-webhook bots may only send messages (and use their integrations). */
  incomingWebhookBots?: boolean;
}

/** The reference's bot_type of incoming-webhook bots (bots/tables.ts names them all). */
export const INCOMING_WEBHOOK_BOT = 2;

interface Endpoint extends EndpointOptions {
  /** 'user': credentials required; 'optional': anonymous allowed; 'none': credentials not read. */
  auth: 'user' | 'optional' | 'none';
  params: ParamSpecs;
  handler: (ctx: any, params: any) => Promise<HandlerResult>;
}

/** Path parameters are integers unless declared as strings with `{name:str}`. */
interface PathParam {
  name: string;
  integer: boolean;
}

function parsePath(path: string): { fastifyPath: string; params: PathParam[] } {
  const params: PathParam[] = [];
  const fastifyPath = path.replace(/\{(\w+)(:str)?\}/g, (_m, name: string, str?: string) => {
    params.push({ name, integer: !str });
    return `:${name}`;
  });
  return { fastifyPath, params };
}

export function clientNameFrom(userAgent: string | undefined): string {
  if (!userAgent) return 'Unspecified';
  return userAgent.split(/[/ ]/, 1)[0] || 'Unspecified';
}

class Sources implements ParamSource {
  readonly #body: Map<string, string>;
  readonly #query: Record<string, unknown>;
  constructor(body: Map<string, string>, query: Record<string, unknown>) {
    this.#body = body;
    this.#query = query;
  }
  get(name: string): string | undefined {
    const fromBody = this.#body.get(name);
    if (fromBody !== undefined) return fromBody;
    const fromQuery = this.#query[name];
    // Repeated query keys: the last one wins, as with bodies.
    if (Array.isArray(fromQuery)) return String(fromQuery[fromQuery.length - 1]);
    return fromQuery === undefined ? undefined : String(fromQuery);
  }
  *keys(): Iterable<string> {
    yield* this.#body.keys();
    yield* Object.keys(this.#query);
  }
}

export class Router {
  readonly #paths = new Map<string, Map<Method, Endpoint>>();

  #add(method: Method, path: string, endpoint: Endpoint): void {
    const table = this.#paths.get(path) ?? new Map<Method, Endpoint>();
    if (table.has(method)) throw new Error(`duplicate route ${method} ${path}`);
    table.set(method, endpoint);
    this.#paths.set(path, table);
  }

  /** An endpoint for authenticated users. */
  route<P extends string, S extends ParamSpecs>(
    method: Method,
    path: P,
    params: S,
    handler: (ctx: UserContext, params: ParamValues<S> & PathParamsOf<P>) => Promise<HandlerResult>,
    options: EndpointOptions = {},
  ): void {
    this.#add(method, path, { ...options, auth: 'user', params, handler });
  }

  /** An endpoint that also (or only) serves callers without credentials. */
  publicRoute<P extends string, S extends ParamSpecs>(
    method: Method,
    path: P,
    auth: 'optional' | 'none',
    params: S,
    handler: (ctx: PublicContext, params: ParamValues<S> & PathParamsOf<P>) => Promise<HandlerResult>,
  ): void {
    this.#add(method, path, { auth, params, handler });
  }

  /** Every endpoint: method, path as declared, who may call it, its parameter names. */
  *endpoints(): Iterable<{ method: Method; path: string; auth: Endpoint['auth']; params: string[] }> {
    for (const [path, table] of this.#paths) {
      for (const [method, e] of table) yield { method, path, auth: e.auth, params: Object.keys(e.params) };
    }
  }

  install(app: FastifyInstance, svc: Services, mount: Mount = API_MOUNT): void {
    for (const [path, table] of this.#paths) {
      const { fastifyPath, params } = parsePath(path);
      // Declaration order, with HEAD wherever GET is (digest section 0).
      const allowed: string[] = [...table.keys()];
      if (table.has('GET')) allowed.push('HEAD');
      app.route({
        method: mount.declaredMethodsOnly ? [...allowed, 'OPTIONS'] : [...METHODS, 'HEAD', 'OPTIONS'],
        url: mount.prefix + fastifyPath,
        handler: (req, reply) => dispatch(svc, mount, table, allowed, params, req, reply),
      });
    }
  }
}

function sendError(reply: FastifyReply, mount: Mount, err: ApiError): FastifyReply {
  const headers = { ...err.headers };
  // A browser shown a Basic challenge would open its own login dialog (the reference says "Session").
  if (mount.scheme === 'session' && headers['WWW-Authenticate']) headers['WWW-Authenticate'] = 'Session realm="zulip"';
  return reply.code(err.status).headers(headers).send(err.body());
}

async function dispatch(
  svc: Services,
  mount: Mount,
  table: Map<Method, Endpoint>,
  allowed: string[],
  pathParams: PathParam[],
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  reply.header('Cache-Control', NO_CACHE);
  try {
    if (req.method === 'OPTIONS')
      return reply
        .code(204)
        .header('Allow', [...allowed].sort().join(', '))
        .send();
    const body = await readBody(req, svc.config.maxFileUploadMib);
    let method = (req.method === 'HEAD' ? 'GET' : req.method) as Method;
    // A form field `method` in a POST body dispatches as that method.
    const override = req.method === 'POST' ? body.fields.get('method') : undefined;
    if (override !== undefined) {
      method = override.toUpperCase() as Method;
      body.fields.delete('method');
    }
    const endpoint = table.get(method);
    if (!endpoint) {
      return reply.code(405).header('Allow', allowed.join(', ')).send({ result: 'error', msg: 'Method Not Allowed', allowed_methods: allowed });
    }

    const raw = req.params as Record<string, string>;
    const path: Record<string, string> = {};
    const pathValues: Record<string, unknown> = {};
    for (const p of pathParams) {
      path[p.name] = raw[p.name];
      if (p.integer) {
        // An id that is not a number names no resource: the route does not exist.
        if (!/^\d{1,15}$/.test(raw[p.name]) || Number(raw[p.name]) > MAX_ROW_ID) return notFoundRoute(reply);
        pathValues[p.name] = Number(raw[p.name]);
      } else {
        pathValues[p.name] = raw[p.name];
      }
    }

    let aborted: AbortController | undefined;
    let source: Sources | undefined;
    let consumed: Set<string> | undefined;
    const request: RequestInfo = {
      clientName: clientNameFrom(req.headers['user-agent']),
      // Read only when used: finding the peer's address costs a system call.
      get ip() {
        return req.ip;
      },
      files: body.files,
      path,
      // Made when used (the long-polls): most requests never read it.
      get signal() {
        if (!aborted) {
          const controller = (aborted = new AbortController());
          onGone(reply.raw, () => controller.abort());
        }
        return aborted.signal;
      },
      scheme: mount.scheme,
      setCookies: (values) => void reply.header('Set-Cookie', values),
      defer: () => deferredAnswer(reply, ignoredMember(source!, consumed!)),
    };
    const subdomain = subdomainFromHost(req.headers.host, svc.config.externalUrl);
    // Endpoints that read no credentials (login) still refuse other sites' pages.
    if (endpoint.auth === 'none' && mount.scheme !== 'api_key') checkOrigin(req);
    const caller = endpoint.auth === 'none' ? undefined : await authenticate(svc, req, subdomain, mount.scheme);

    let ctx: UserContext | PublicContext;
    if (caller) {
      const { user, realm, session } = caller;
      if (user.bot_type === INCOMING_WEBHOOK_BOT && !endpoint.incomingWebhookBots) throw unauthorized('This API is not available to incoming webhook bots.');
      if (endpoint.rateLimit !== false) await applyRateLimit(svc, reply, `user:${user.id}`, svc.config.rateLimit.perUser);
      // A long-term idle user is back: the messages they were left out of come first.
      if (user.long_term_idle) await svc.hooks.softReactivate(svc, user);
      ctx = { svc, realm, user, request, session };
    } else {
      if (endpoint.auth === 'user') throw unauthorized();
      const realm = await getRealmBySubdomain(svc.db, subdomain);
      // Anonymous access exists only where the organization opens it to spectators.
      if (endpoint.auth === 'optional' && !(realm && !realm.deactivated && settingsOf(realm).enable_spectator_access)) {
        throw unauthorized();
      }
      await applyRateLimit(svc, reply, `ip:${req.ip}`, svc.config.rateLimit.perIp);
      ctx = { svc, realm, subdomain, user: null, request };
    }

    source = new Sources(body.fields, req.query as Record<string, unknown>);
    const parsed = parseParams(endpoint.params, source, svc.config.compatNames ? COMPAT_PARAM_NAMES : {});
    consumed = parsed.consumed;
    const result = await endpoint.handler(ctx, { ...parsed.values, ...pathValues });
    if (result === DEFERRED) return reply;
    const ignored = ignoredParameters(source, consumed);
    const envelope = {
      result: 'success',
      msg: '',
      ...result,
      ...(ignored.length > 0 ? { ignored_parameters_unsupported: ignored } : {}),
    };
    // Members kept serialized are spliced in, not parsed and serialized again.
    if (hasRawMember(result)) return reply.type(JSON_TYPE).send(serializeMembers(envelope));
    return reply.send(envelope);
  } catch (err) {
    if (err instanceof ApiError) return sendError(reply, mount, err);
    // A value no check caught but the database refused: the request's fault, and its
    // transaction rolled back, so nothing changed.
    if (isRefusedValue(err)) return sendError(reply, mount, badRequest('Invalid value: out of range, or containing characters that cannot be stored'));
    throw err;
  }
}

/** `listener` runs once if the client goes away before the whole answer was written. */
export function onGone(res: ServerResponse, listener: () => void): void {
  // Gone already (while the request was being authenticated): no `close` will come.
  if (res.closed) {
    if (!res.writableFinished) queueMicrotask(listener);
    return;
  }
  res.once('close', () => {
    if (!res.writableFinished) listener();
  });
}

/** The envelope's `ignored_parameters_unsupported` member, with its leading comma ('' when none). */
function ignoredMember(source: Sources, consumed: Set<string>): string {
  const ignored = ignoredParameters(source, consumed);
  return ignored.length > 0 ? `,"ignored_parameters_unsupported":${JSON.stringify(ignored)}` : '';
}

/**
 * The reply taken from Fastify (its onResponse hooks, the metrics, still run when
 * it finishes): the bytes `reply.send` would write for the same envelope.
 */
function deferredAnswer(reply: FastifyReply, ignored: string): DeferredAnswer {
  reply.hijack();
  return {
    succeed: (members) => void writeSuccess(reply.raw, reply.getHeaders(), members + ignored, reply.server.server),
    onGone: (listener) => onGone(reply.raw, listener),
  };
}

/**
 * 200 with the success envelope around `members`, with `headers` (names in lower case, as
 * Fastify keeps them) and the content headers `reply.send` adds, in its order; as the same
 * bytes made once for many answers (http/success-bytes.ts) when `server`, the listener's, is
 * given and Node would write them. False when the client is gone or something was written already.
 */
export function writeSuccess(res: ServerResponse, headers: Record<string, string | number | string[] | undefined>, members: string, server?: Server): boolean {
  if (res.headersSent || res.destroyed) return false;
  if (server && writeSuccessBytes(server, res, headers, members)) return true;
  const { body, length } = successEnvelope(members);
  headers['content-type'] = JSON_TYPE;
  headers['content-length'] = length;
  res.writeHead(200, headers as OutgoingHttpHeaders);
  res.end(body);
  return true;
}

export function notFoundRoute(reply: FastifyReply): FastifyReply {
  return reply.code(404).send({ result: 'error', msg: 'Endpoint not found', code: 'BAD_REQUEST' });
}
