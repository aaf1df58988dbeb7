// The shape of every action: do all writes in one transaction, collect the
// events they cause, and publish those only after the commit, so no client ever
// hears of a change that was rolled back.

import type { Transaction } from 'kysely';
import type { Database } from './schema.ts';
import type { Services } from '../services.ts';
import type { Notice, ProcessEvent, ServerEvent } from '../events/types.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { isRaceLost } from './errors.ts';

export type Tx = Transaction<Database>;

export type Emit = (realmId: number, event: ServerEvent | ProcessEvent, users: Iterable<number>, extra?: Omit<Notice, 'realmId' | 'event' | 'users'>) => void;

/**
 * What the steps of one action share (issue 13 point 5), instead of each
 * threading (svc, tx, emit, realm, actor, ...): the services (`S`: all of them,
 * or only what the step uses, as `Hooked`), the transaction, its emit, the
 * organization, and who acts (`null`: the server itself, as hooks, jobs and
 * manage commands; `User` where a request's user must be there).
 */
export interface ActionContext<S = Services, A extends User | null = User | null> {
  readonly svc: S;
  readonly tx: Tx;
  readonly emit: Emit;
  readonly realm: Realm;
  readonly actor: A;
}

/** An action context before its organization is known: background passes (jobs, the scheduler) that read it first. */
export type PassContext<S = Services> = Pick<ActionContext<S>, 'svc' | 'tx' | 'emit'>;

/** transact() whose work receives one ActionContext. */
export function transactAs<T, S extends Parameters<typeof transact>[0], A extends User | null>(
  svc: S,
  realm: Realm,
  actor: A,
  work: (ctx: ActionContext<S, A>) => Promise<T>,
): Promise<T> {
  return transact(svc, (tx, emit) => work({ svc, tx, emit, realm, actor }));
}

/**
 * Attempts of one action. A transaction that lost a race (a unique index took a
 * concurrent request's row first, or a deadlock) is run again once the winner has
 * committed: it then reads the winner's row and answers as a later request would
 * ("already exists", or an idempotent success). A third loss is a real failure.
 */
const ATTEMPTS = 3;

export async function transact<T>(
  svc: Pick<Services, 'db' | 'events'> & { metrics?: Pick<Services['metrics'], 'observeTransaction'> },
  work: (tx: Tx, emit: Emit) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const pending: Notice[] = [];
    const emit: Emit = (realmId, event, users, extra) => pending.push({ ...extra, realmId, event, users: [...users] });
    const started = performance.now();
    let result: T;
    try {
      result = await svc.db.transaction().execute((tx) => work(tx, emit));
    } catch (err) {
      svc.metrics?.observeTransaction((performance.now() - started) / 1000, false);
      if (attempt >= ATTEMPTS || !isRaceLost(err)) throw err;
      continue;
    }
    svc.metrics?.observeTransaction((performance.now() - started) / 1000, true);
    // With a broker, the request answers once its events reached this process's queues.
    if (pending.length > 0) await svc.events.publish(pending);
    return result;
  }
}
