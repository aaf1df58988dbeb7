// Navigation views (feature level 390): each user's settings for the views of
// the left sidebar. Built-in views may only be pinned or unpinned; custom views
// also have a name. Changes reach the user's other clients as `navigation_view` events.

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { transact, type Tx } from '../db/transact.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { BUILT_IN_VIEW_FRAGMENTS, formatNavigationView } from './format.ts';
import type { ApiNavigationView } from './format.ts';

export type NavigationViewEvent =
  | { type: 'navigation_view'; op: 'add'; navigation_view: ApiNavigationView }
  | { type: 'navigation_view'; op: 'update'; fragment: string; data: { name?: string | null; is_pinned?: boolean } }
  | { type: 'navigation_view'; op: 'remove'; fragment: string };

const alreadyExists = () => badRequest('Navigation view already exists.');

async function nameTaken(tx: Tx, userId: number, name: string, exceptFragment?: string): Promise<boolean> {
  let q = tx.selectFrom('navigation_views').select('id').where('user_id', '=', userId).where('name', '=', name);
  if (exceptFragment !== undefined) q = q.where('fragment', '!=', exceptFragment);
  return (await q.executeTakeFirst()) !== undefined;
}

/** One user's view changes take turns (a lock on the user's row), so fragments and names stay unique. */
async function takeTurns(tx: Tx, userId: number): Promise<void> {
  await tx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
}

async function ownView(tx: Tx, userId: number, fragment: string) {
  const view = await tx
    .selectFrom('navigation_views')
    .selectAll()
    .where('user_id', '=', userId)
    .where('fragment', '=', fragment)
    .forUpdate()
    .executeTakeFirst();
  if (!view) throw notFound('Navigation view does not exist.');
  return view;
}

export async function addNavigationView(svc: Services, realm: Realm, actor: User, v: { fragment: string; is_pinned: boolean; name?: string }): Promise<void> {
  if (BUILT_IN_VIEW_FRAGMENTS.has(v.fragment)) {
    if (v.name !== undefined) throw badRequest('Built-in views cannot have a custom name.');
  } else if (v.name === undefined) {
    throw badRequest('Custom views must have a valid name.');
  }
  await transact(svc, async (tx, emit) => {
    await takeTurns(tx, actor.id);
    const exists = await tx.selectFrom('navigation_views').select('id').where('user_id', '=', actor.id).where('fragment', '=', v.fragment).executeTakeFirst();
    if (exists || (v.name !== undefined && (await nameTaken(tx, actor.id, v.name)))) throw alreadyExists();
    const view = await tx
      .insertInto('navigation_views')
      .values({ realm_id: realm.id, user_id: actor.id, fragment: v.fragment, is_pinned: v.is_pinned, name: v.name ?? null })
      .returningAll()
      .executeTakeFirstOrThrow();
    emit(realm.id, { type: 'navigation_view', op: 'add', navigation_view: formatNavigationView(view) }, [actor.id]);
  });
}

export async function updateNavigationView(
  svc: Services,
  realm: Realm,
  actor: User,
  fragment: string,
  changes: { is_pinned?: boolean; name?: string },
): Promise<void> {
  if (BUILT_IN_VIEW_FRAGMENTS.has(fragment) && changes.name !== undefined) throw badRequest('Built-in views cannot have a custom name.');
  await transact(svc, async (tx, emit) => {
    await takeTurns(tx, actor.id);
    const view = await ownView(tx, actor.id, fragment);
    if (changes.name !== undefined && (await nameTaken(tx, actor.id, changes.name, fragment))) throw alreadyExists();
    const data: Record<string, unknown> = {};
    if (changes.name !== undefined && changes.name !== view.name) data.name = changes.name;
    if (changes.is_pinned !== undefined && changes.is_pinned !== view.is_pinned) data.is_pinned = changes.is_pinned;
    if (Object.keys(data).length === 0) return;
    await tx.updateTable('navigation_views').set(data).where('id', '=', view.id).execute();
    emit(realm.id, { type: 'navigation_view', op: 'update', fragment, data }, [actor.id]);
  });
}

export async function removeNavigationView(svc: Services, realm: Realm, actor: User, fragment: string): Promise<void> {
  await transact(svc, async (tx, emit) => {
    const view = await ownView(tx, actor.id, fragment);
    await tx.deleteFrom('navigation_views').where('id', '=', view.id).execute();
    emit(realm.id, { type: 'navigation_view', op: 'remove', fragment }, [actor.id]);
  });
}
