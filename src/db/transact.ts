// The shape of every action: do all writes in one transaction, collect the
// events they cause, and publish those only after the commit, so no client ever
// hears of a change that was rolled back.

import type { Transaction } from 'kysely';
import type { Database } from './schema.ts';
import type { Services } from '../services.ts';
import type { Notice, ServerEvent } from '../events/types.ts';

export type Tx = Transaction<Database>;

export interface Emit {
  (realmId: number, event: ServerEvent, users: Iterable<number>, extra?: Omit<Notice, 'realmId' | 'event' | 'users'>): void;
}

export async function transact<T>(
  svc: Pick<Services, 'db' | 'events'> & { metrics?: Pick<Services['metrics'], 'observeTransaction'> },
  work: (tx: Tx, emit: Emit) => Promise<T>,
): Promise<T> {
  const pending: Notice[] = [];
  const emit: Emit = (realmId, event, users, extra) => pending.push({ ...extra, realmId, event, users: [...users] });
  const started = performance.now();
  let ok = false;
  let result: T;
  try {
    result = await svc.db.transaction().execute((tx) => work(tx, emit));
    ok = true;
  } finally {
    svc.metrics?.observeTransaction((performance.now() - started) / 1000, ok);
  }
  if (pending.length > 0) svc.events.publish(pending);
  return result;
}
