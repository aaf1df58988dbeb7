// GET /events (digest 1.23): acknowledge, then answer at once if anything is
// waiting, else park the request until an event or a heartbeat. A parked poll is
// answered straight from the queue (`request.defer`): at a fan-out to thousands
// of queues, each answer is one write of text made once per shape. A queue
// another process holds is reached through `svc.remoteQueues` (src/cluster/queues.ts).

import type { Services } from '../services.ts';
import type { User } from '../users/tables.ts';
import { DEFERRED, type DeferredAnswer, type HandlerResult, type RequestInfo } from '../http/router.ts';
import { heartbeatDelay, type EventQueue, type QueuedEvent } from './queue.ts';

export interface PollParams {
  queue_id: string;
  last_event_id: number;
  dont_block: boolean;
}

/** Queues held by other processes (with a broker). */
export interface RemoteQueues {
  getEvents(userId: number, q: PollParams, signal: AbortSignal): Promise<QueuedEvent[]>;
  delete(userId: number, queueId: string): Promise<void>;
}

/** GET /events: `{ events }` now, or DEFERRED (the parked poll answers by itself). */
export async function getEvents(svc: Services, user: User, q: PollParams, request: Pick<RequestInfo, 'signal' | 'defer'>): Promise<HandlerResult> {
  if (svc.remoteQueues && !svc.queues.has(q.queue_id)) return { events: await svc.remoteQueues.getEvents(user.id, q, request.signal) };
  const queue = ready(svc, user.id, q);
  if (answersNow(svc, queue, q)) return { events: [...queue.events] };
  parkPoll(svc, queue, request.defer());
  return DEFERRED;
}

/** Parks a poll on `queue` until its next event, a heartbeat or a newer poll: `answer` writes it. */
export function parkPoll(svc: Pick<Services, 'config'>, queue: EventQueue, answer: DeferredAnswer): void {
  const waiter = queue.park(heartbeatMs(svc), (events) => answer.succeed(`"events":${queue.eventsJson(events)}`));
  answer.onGone(() => queue.cancelWait(waiter));
}

/** DELETE /events. */
export async function deleteQueue(svc: Services, user: User, queueId: string): Promise<void> {
  if (svc.remoteQueues && !svc.queues.has(queueId)) return svc.remoteQueues.delete(user.id, queueId);
  svc.queues.delete(svc.queues.get(queueId, user.id));
}

/** A poll of a queue this process holds, forwarded from another process. */
export async function pollQueue(svc: Pick<Services, 'queues' | 'config'>, userId: number, q: PollParams, signal: AbortSignal): Promise<QueuedEvent[]> {
  const queue = ready(svc, userId, q);
  if (answersNow(svc, queue, q)) return [...queue.events];
  const waiting = queue.wait(heartbeatMs(svc));
  const onAbort = () => queue.cancelWait();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await Promise.race([waiting, new Promise<QueuedEvent[]>((resolve) => signal.addEventListener('abort', () => resolve([]), { once: true }))]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** The caller's queue, with what the poll acknowledges pruned. */
function ready(svc: Pick<Services, 'queues'>, userId: number, q: PollParams): EventQueue {
  const queue = svc.queues.get(q.queue_id, userId);
  queue.acknowledge(q.last_event_id);
  return queue;
}

/** Whether the poll answers without parking (and the queue counts as connected now). */
export function answersNow(svc: Pick<Services, 'queues'>, queue: EventQueue, q: PollParams): boolean {
  if (queue.events.length === 0 && !q.dont_block && !svc.queues.stopping) return false;
  queue.lastConnection = Date.now();
  return true;
}

function heartbeatMs(svc: Pick<Services, 'config'>): number {
  const { heartbeatMs, heartbeatJitterMs } = svc.config.events;
  return heartbeatDelay(heartbeatMs, heartbeatJitterMs);
}
