// GET /events (digest 1.23): acknowledge, then answer at once if anything is
// waiting, else hold the request until an event or a heartbeat. A queue another
// process holds is reached through `svc.remoteQueues` (src/cluster/queues.ts).

import type { Services } from '../services.ts';
import type { User } from '../users/tables.ts';
import type { QueuedEvent } from './queue.ts';

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

export async function getEvents(svc: Services, user: User, q: PollParams, signal: AbortSignal): Promise<QueuedEvent[]> {
  if (svc.remoteQueues && !svc.queues.has(q.queue_id)) return svc.remoteQueues.getEvents(user.id, q, signal);
  return pollQueue(svc, user.id, q, signal);
}

/** DELETE /events. */
export async function deleteQueue(svc: Services, user: User, queueId: string): Promise<void> {
  if (svc.remoteQueues && !svc.queues.has(queueId)) return svc.remoteQueues.delete(user.id, queueId);
  svc.queues.delete(svc.queues.get(queueId, user.id));
}

/** A poll of a queue this process holds. */
export async function pollQueue(svc: Pick<Services, 'queues' | 'config'>, userId: number, q: PollParams, signal: AbortSignal): Promise<QueuedEvent[]> {
  const queue = svc.queues.get(q.queue_id, userId);
  queue.acknowledge(q.last_event_id);
  if (queue.events.length > 0 || q.dont_block || svc.queues.stopping) {
    queue.lastConnection = Date.now();
    return [...queue.events];
  }
  const { heartbeatMs, heartbeatJitterMs } = svc.config.events;
  const waiting = queue.wait(heartbeatMs + Math.random() * heartbeatJitterMs);
  const onAbort = () => queue.cancelWait();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await Promise.race([waiting, new Promise<QueuedEvent[]>((resolve) => signal.addEventListener('abort', () => resolve([]), { once: true }))]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
