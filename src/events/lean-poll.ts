// GET /api/v1/events before Fastify. At a fan-out to thousands of parked polls, Node's HTTP
// parsing aside, Fastify's routing, hook runners, request and reply objects were most of the
// server's CPU per poll (docs/PERFORMANCE.md). The common poll (Basic credentials the cache
// holds and passes, a queue of this process acknowledged without complaint, exactly the route's
// parameters in plain form, no body) is answered or parked here with the status, headers and
// bytes the route writes, and counted in the same request metrics. Everything else (any error,
// credentials to read, a queue of another process, other parameters, a closing server) goes
// to Fastify untouched, and so does every poll when request lines are logged (debug).

import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { Services } from '../services.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { API_PREFIX, INCOMING_WEBHOOK_BOT, onGone, writeSuccess, type DeferredAnswer } from '../http/router.ts';
import { PLAIN_INTEGER } from '../http/params.ts';
import { MAX_URL_LENGTH } from '../http/refusals.ts';
import { API_HEADERS } from '../http/success-bytes.ts';
import { cachedCaller, parseBasicAuth } from '../auth/basic.ts';
import { subdomainFromHost } from '../realm/queries.ts';
import { answersNow, parkPoll, type PollParams } from './fetch.ts';

/** The route's pattern, as the request metrics name it. */
const ROUTE = `${API_PREFIX}/events`;
const ROUTE_QUERY = `${ROUTE}?`;
const METRIC_LABELS = { method: 'GET', route: ROUTE, status: '200' } as const;
/** Queue ids are UUIDs (with a process's prefix): a value in this form needs no decoding. */
const PLAIN_QUEUE_ID = /^[\w.:-]{1,200}$/;

/**
 * The server's request listener: GET /api/v1/events where it can be served here, every
 * other request to `fallback` (Fastify's). `closing`: Fastify is closing (it answers 503).
 * `server`: the listener's, when its answers may be written to their sockets as bytes (none
 * for requests injected without a socket).
 */
export function leanPolls(svc: Services, fallback: RequestListener, closing: () => boolean, server?: Server): RequestListener {
  const lean: Lean = { svc, count: answerCounter(svc.metrics), server };
  return (req, res) => {
    if (req.method !== 'GET' || !req.url?.startsWith(ROUTE_QUERY) || closing() || !served(lean, req, res)) fallback(req, res);
  };
}

/** What the lean path answers with. */
interface Lean {
  svc: Services;
  count: CountAnswer;
  server: Server | undefined;
}

/** Counts an answer that took `seconds`. */
type CountAnswer = (seconds: number) => void;

/**
 * Answers counted as Fastify's metrics hook counts them, once the answers written together
 * (a fan-out's thousands) are all written: one increment of the counter for all of them,
 * and none of the metrics' work between two answers' writes.
 */
function answerCounter(metrics: Metrics): CountAnswer {
  let pending: number[] = [];
  const flush = () => {
    const answered = pending;
    pending = [];
    metrics.requests.inc(METRIC_LABELS, answered.length);
    for (const seconds of answered) metrics.requestSeconds.observe(METRIC_LABELS, seconds);
  };
  return (seconds) => {
    if (pending.length === 0) queueMicrotask(flush);
    pending.push(seconds);
  };
}

function served(lean: Lean, req: IncomingMessage, res: ServerResponse): boolean {
  try {
    return poll(lean, req, res);
  } catch {
    // Unforeseen: unless something was written, the route answers it as it would (and logs it).
    return res.headersSent;
  }
}

/** Serves the poll, or returns false with nothing written or changed. */
function poll(lean: Lean, req: IncomingMessage, res: ServerResponse): boolean {
  const { svc } = lean;
  const started = performance.now();
  const { headers } = req;
  const url = req.url!;
  if (url.length > MAX_URL_LENGTH || headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
  const q = pollParams(url.slice(ROUTE_QUERY.length));
  if (!q) return false;
  let credentials: ReturnType<typeof parseBasicAuth>;
  try {
    credentials = parseBasicAuth(headers.authorization);
  } catch {
    return false;
  }
  if (!credentials) return false;
  const caller = cachedCaller(svc.credentials, credentials, subdomainFromHost(headers.host, svc.config.externalUrl));
  // Incoming-webhook bots are refused, and the long-term idle come back, on the route.
  if (!caller || caller.user.bot_type === INCOMING_WEBHOOK_BOT || caller.user.long_term_idle) return false;
  const queue = svc.queues.find(q.queue_id, caller.user.id);
  if (!queue) return false;
  try {
    queue.acknowledge(q.last_event_id);
  } catch {
    // Refused before anything was pruned: the route refuses it the same way.
    return false;
  }
  const answer = leanAnswer(lean, res, started);
  if (answersNow(svc, queue, q)) answer.succeed(`"events":${queue.eventsJson(queue.events)}`);
  else parkPoll(svc, queue, answer);
  return true;
}

/** The query's parameters when they are exactly the route's, each once, in plain form. */
function pollParams(query: string): PollParams | undefined {
  let queueId: string | undefined;
  let lastEventId: number | undefined;
  let dontBlock: boolean | undefined;
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (eq < 0) return undefined;
    if (name === 'queue_id' && queueId === undefined && PLAIN_QUEUE_ID.test(value)) queueId = value;
    else if (name === 'last_event_id' && lastEventId === undefined && PLAIN_INTEGER.test(value)) lastEventId = Number(value);
    else if (name === 'dont_block' && dontBlock === undefined && (value === 'true' || value === 'false')) dontBlock = value === 'true';
    else return undefined;
  }
  if (queueId === undefined || lastEventId === undefined) return undefined;
  return { queue_id: queueId, last_event_id: lastEventId, dont_block: dontBlock ?? false };
}

/** The route's answer written to `res` (as bytes where it can be), and counted. */
function leanAnswer(lean: Lean, res: ServerResponse, started: number): DeferredAnswer {
  return {
    succeed(members) {
      if (writeSuccess(res, { ...API_HEADERS }, members, lean.server)) lean.count((performance.now() - started) / 1000);
    },
    onGone: (listener) => onGone(res, listener),
  };
}
