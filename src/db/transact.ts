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

export async function transact<T>(svc: Pick<Services, 'db' | 'events'>, work: (tx: Tx, emit: Emit) => Promise<T>): Promise<T> {
  const pending: Notice[] = [];
  const emit: Emit = (realmId, event, users, extra) => pending.push({ ...extra, realmId, event, users: [...users] });
  const result = await svc.db.transaction().execute((tx) => work(tx, emit));
  if (pending.length > 0) svc.events.publish(pending);
  return result;
}
