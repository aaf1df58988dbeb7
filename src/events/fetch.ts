// GET /events (digest 1.23): acknowledge, then answer at once if anything is
// waiting, else hold the request until an event or a heartbeat.

import type { Services } from '../services.ts';
import type { User } from '../users/tables.ts';
import type { QueuedEvent } from './queue.ts';

export async function getEvents(
  svc: Services,
  user: User,
  q: { queue_id: string; last_event_id: number; dont_block: boolean },
  signal: AbortSignal,
): Promise<QueuedEvent[]> {
  const queue = svc.queues.get(q.queue_id, user.id);
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
