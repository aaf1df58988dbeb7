// Changes to an organization's linkifiers (digest 1.20 and section 2). Only
// administrators change them; every change sends the whole list as a
// `realm_linkifiers` event to every user (clients without the
// `linkifier_url_template` capability never see it: events/shape.ts).

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { type ActionContext, transactAs, type Tx } from '../db/transact.ts';
import { badRequest } from '../http/errors.ts';
import { activeUserIds } from '../users/queries.ts';
import { listLinkifiers } from './queries.ts';
import type { Linkifier } from '../markdown/index.ts';
import { DUPLICATE_PATTERN, linkifierErrors, NON_FIELD_ERRORS, validationFailure } from './validation.ts';
import { requireAdmin } from '../users/access.ts';

export interface RealmLinkifiersEvent {
  type: 'realm_linkifiers';
  realm_linkifiers: Linkifier[];
}

export interface LinkifierInput {
  pattern: string;
  url_template: string;
}

const notFound = () => badRequest('Linkifier not found.');

async function notifyLinkifiers(ctx: ActionContext<unknown>): Promise<void> {
  const { tx, emit, realm } = ctx;
  const list = await listLinkifiers(tx, realm.id);
  emit(realm.id, { type: 'realm_linkifiers', realm_linkifiers: list }, await activeUserIds(tx, realm.id));
}

/** Validates in the reference server's order: fields, then both together, then uniqueness. */
async function checkLinkifier(tx: Tx, realm: Realm, input: LinkifierInput, exceptId?: number): Promise<LinkifierInput> {
  const pattern = input.pattern.trim();
  const url_template = input.url_template.trim();
  const errors = linkifierErrors(pattern, url_template);
  if (!errors.pattern) {
    let same = tx.selectFrom('linkifiers').select('id').where('realm_id', '=', realm.id).where('pattern', '=', pattern);
    if (exceptId !== undefined) same = same.where('id', '!=', exceptId);
    if (await same.executeTakeFirst()) (errors[NON_FIELD_ERRORS] ??= []).push(DUPLICATE_PATTERN);
  }
  if (Object.keys(errors).length > 0) throw validationFailure(errors);
  return { pattern, url_template };
}

/** Serializes changes to one organization's linkifiers (uniqueness and order are read, then written). */
async function lockLinkifiers(tx: Tx, realmId: number): Promise<void> {
  await tx.selectFrom('realms').select('id').where('id', '=', realmId).forNoKeyUpdate().execute();
}

/** POST /realm/filters: the new linkifier goes last. */
export async function addLinkifier(svc: Services, realm: Realm, actor: User, input: LinkifierInput): Promise<number> {
  requireAdmin(actor);
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    await lockLinkifiers(tx, realm.id);
    const checked = await checkLinkifier(tx, realm, input);
    const last = await tx
      .selectFrom('linkifiers')
      .select((eb) => eb.fn.max('position').as('max'))
      .where('realm_id', '=', realm.id)
      .executeTakeFirst();
    const position = last?.max === null || last?.max === undefined ? 0 : Number(last.max) + 1;
    const row = await tx
      .insertInto('linkifiers')
      .values({ realm_id: realm.id, ...checked, position })
      .returning('id')
      .executeTakeFirstOrThrow();
    await notifyLinkifiers(ctx);
    return row.id;
  });
}

/** PATCH /realm/filters/{filter_id} (spec endpoint 20). */
export async function updateLinkifier(svc: Services, realm: Realm, actor: User, id: number, input: LinkifierInput): Promise<void> {
  requireAdmin(actor);
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    await lockLinkifiers(tx, realm.id);
    const existing = await tx.selectFrom('linkifiers').select('id').where('realm_id', '=', realm.id).where('id', '=', id).executeTakeFirst();
    if (!existing) throw notFound();
    const checked = await checkLinkifier(tx, realm, input, id);
    await tx.updateTable('linkifiers').set(checked).where('realm_id', '=', realm.id).where('id', '=', id).execute();
    await notifyLinkifiers(ctx);
  });
}

/** DELETE /realm/filters/{filter_id}. */
export async function removeLinkifier(svc: Services, realm: Realm, actor: User, id: number): Promise<void> {
  requireAdmin(actor);
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    await lockLinkifiers(tx, realm.id);
    const deleted = await tx.deleteFrom('linkifiers').where('realm_id', '=', realm.id).where('id', '=', id).executeTakeFirst();
    if (deleted.numDeletedRows === 0n) throw notFound();
    await notifyLinkifiers(ctx);
  });
}

/** PATCH /realm/linkifiers: `orderedIds` lists every linkifier exactly once. */
export async function reorderLinkifiers(svc: Services, realm: Realm, actor: User, orderedIds: number[]): Promise<void> {
  requireAdmin(actor);
  const wanted = new Set(orderedIds);
  if (wanted.size < orderedIds.length) throw badRequest('The ordered list must not contain duplicated linkifiers');
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    await lockLinkifiers(tx, realm.id);
    const existing = await listLinkifiers(tx, realm.id);
    if (existing.length !== wanted.size || existing.some((l) => !wanted.has(l.id))) {
      throw badRequest('The ordered list must enumerate all existing linkifiers exactly once');
    }
    // Nothing to reorder: no event, as the reference server does.
    if (existing.length === 0) return;
    for (const [position, id] of orderedIds.entries()) {
      await tx.updateTable('linkifiers').set({ position }).where('realm_id', '=', realm.id).where('id', '=', id).execute();
    }
    await notifyLinkifiers(ctx);
  });
}
