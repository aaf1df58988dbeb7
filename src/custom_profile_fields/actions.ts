// Custom profile fields: the organization's definitions (administrators only)
// and each user's values. Every change of the definitions sends the whole list
// (`custom_profile_fields`); every change of a value sends `realm_user/update`
// with the `custom_profile_field` facet (digest 1.11, section 2, 3.3).

import { isDeepStrictEqual } from 'node:util';
import type { Hooked, Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { CustomProfileField } from './tables.ts';
import { type ActionContext, transactAs, type Tx } from '../db/transact.ts';
import { badRequest } from '../http/errors.ts';
import { activeUserIds, canAccess, listUsers, usersWhoCanSee } from '../users/queries.ts';
import { prerenderHtml } from '../rendering/index.ts';
import { DEFAULT_EXTERNAL_ACCOUNTS, FIELD_TYPE, hasFieldData, isRenderable, LIMITS } from './field-types.ts';
import { countSummaryFields, getField, getValue, labelInUse, listFields, nextOrder } from './queries.ts';
import { formatField, type ApiCustomProfileField } from './format.ts';
import {
  checkFieldDefinition,
  checkValue,
  isDefaultExternalAccount,
  isEmptyValue,
  parseFieldData,
  type FieldData,
  type ProfileDataEntry,
} from './validation.ts';
import { mayEditLockedFields, requireAdmin } from '../users/access.ts';
import type { Person } from '../users/events.ts';

export interface CustomProfileFieldsEvent {
  type: 'custom_profile_fields';
  fields: ApiCustomProfileField[];
}

const SUMMARY_FULL = `Only ${LIMITS.summaryFields} custom profile fields can be displayed in the profile summary.`;
const LABEL_IN_USE = 'A field with that label already exists.';

/**
 * Field changes of one organization take turns: the label and profile-summary
 * checks read the other fields. The realm row is locked without blocking the
 * key-share locks that inserts referencing it take.
 */
async function lockFields(tx: Tx, realmId: number): Promise<void> {
  await tx.selectFrom('realms').select('id').where('id', '=', realmId).forNoKeyUpdate().execute();
}

async function notifyFields(ctx: ActionContext<unknown>): Promise<void> {
  const { tx, emit, realm } = ctx;
  const fields = (await listFields(tx, realm.id)).map(formatField);
  emit(realm.id, { type: 'custom_profile_fields', fields }, await activeUserIds(tx, realm.id));
}

/** Who hears of `subject`'s values: active users who may see the subject (can_access_all_users_group). */
async function valueAudience(ctx: ActionContext<Hooked>, subject: User, active: number[]): Promise<number[]> {
  const { svc, tx, realm } = ctx;
  const access = await usersWhoCanSee(svc, tx, realm, subject);
  return active.filter((id) => canAccess(access, id));
}

/** A field's new value: null means "removed". */
interface ValueChange {
  fieldId: number;
  value: string | null;
  rendered: string | null;
}

/** The `custom_profile_field` facet of a realm_user update. */
function notifyValue(ctx: ActionContext<unknown>, audience: number[], userId: number, { fieldId, value, rendered }: ValueChange): void {
  const facet: NonNullable<Person['custom_profile_field']> = { id: fieldId, value };
  if (rendered) facet.rendered_value = rendered;
  ctx.emit(ctx.realm.id, { type: 'realm_user', op: 'update', person: { user_id: userId, custom_profile_field: facet } }, audience);
}

/** Drops values (of a deleted field, or of choices that no longer exist) and tells those who may see each user. */
async function dropValues(ctx: ActionContext<Hooked>, fieldId: number, choices?: string[]): Promise<void> {
  const { tx, realm } = ctx;
  let q = tx.deleteFrom('custom_profile_field_values').where('realm_id', '=', realm.id).where('field_id', '=', fieldId);
  if (choices) {
    if (choices.length === 0) return;
    q = q.where('value', 'in', choices);
  }
  const dropped = await q.returning('user_id').execute();
  if (dropped.length === 0) return;
  const active = await activeUserIds(tx, realm.id);
  for (const user of await listUsers(
    tx,
    realm.id,
    dropped.map((d) => d.user_id),
  )) {
    notifyValue(ctx, await valueAudience(ctx, user, active), user.id, { fieldId, value: null, rendered: null });
  }
}

export interface NewField {
  name: string;
  hint: string;
  field_type: number;
  field_data: FieldData | undefined;
  display_in_profile_summary: boolean;
  required: boolean;
  editable_by_user: boolean;
}

/** POST /realm/profile_fields (spec endpoint 11, digest 1.11). */
export async function createField(svc: Services, realm: Realm, actor: User, f: NewField): Promise<number> {
  requireAdmin(actor);
  const data = f.field_data ?? {};
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    await lockFields(tx, realm.id);
    if (f.display_in_profile_summary && (await countSummaryFields(tx, realm.id)) >= LIMITS.summaryFields) throw badRequest(SUMMARY_FULL);
    const name = f.name.trim();
    checkFieldDefinition({ name, hint: f.hint, type: f.field_type, data, displayInProfileSummary: f.display_in_profile_summary });
    // A built-in external account brings its own label and hint.
    const account = isDefaultExternalAccount(f.field_type, data) ? DEFAULT_EXTERNAL_ACCOUNTS[data.subtype as string] : undefined;
    const label = account ? account.name : name;
    if (await labelInUse(tx, realm.id, label)) throw badRequest(LABEL_IN_USE);
    const row = await tx
      .insertInto('custom_profile_fields')
      .values({
        realm_id: realm.id,
        name: label,
        hint: account ? account.hint : f.hint,
        field_type: f.field_type,
        field_data: account ? JSON.stringify({ subtype: data.subtype }) : hasFieldData(f.field_type) ? JSON.stringify(data) : '',
        order: await nextOrder(tx, realm.id),
        display_in_profile_summary: f.display_in_profile_summary,
        required: f.required,
        editable_by_user: f.editable_by_user,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await notifyFields(ctx);
    return row.id;
  });
}

export interface FieldChanges {
  name?: string;
  hint?: string;
  field_data?: FieldData;
  display_in_profile_summary?: boolean;
  required?: boolean;
  editable_by_user?: boolean;
}

/** A built-in external account keeps its label, hint and data; the flags may change. */
function changesDefinition(field: CustomProfileField, c: FieldChanges): boolean {
  return (
    (c.name !== undefined && c.name !== field.name) ||
    (c.hint !== undefined && c.hint !== field.hint) ||
    (c.field_data !== undefined && !isDeepStrictEqual(c.field_data, parseFieldData(field.field_data)))
  );
}

/** PATCH /realm/profile_fields/{field_id}. */
export async function updateField(svc: Services, realm: Realm, actor: User, fieldId: number, changes: FieldChanges): Promise<void> {
  requireAdmin(actor);
  const c = { ...changes, name: changes.name?.trim() };
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    await lockFields(tx, realm.id);
    const field = await getField(tx, realm.id, fieldId);
    if (c.display_in_profile_summary && (await countSummaryFields(tx, realm.id, field.id)) >= LIMITS.summaryFields) throw badRequest(SUMMARY_FULL);
    const stored = parseFieldData(field.field_data);
    if (isDefaultExternalAccount(field.field_type, stored) && changesDefinition(field, c)) throw badRequest('Default custom field cannot be updated.');
    const data = c.field_data ?? stored;
    checkFieldDefinition({
      name: c.name ?? field.name,
      hint: c.hint ?? field.hint,
      type: field.field_type,
      data,
      displayInProfileSummary: c.display_in_profile_summary ?? field.display_in_profile_summary,
    });
    if (c.name !== undefined && (await labelInUse(tx, realm.id, c.name, field.id))) throw badRequest(LABEL_IN_USE);
    if (c.field_data !== undefined && field.field_type === FIELD_TYPE.SELECT) {
      // Users who had chosen an option that is gone no longer have a value.
      const removed = Object.keys(stored).filter((key) => !Object.hasOwn(data, key));
      await dropValues(ctx, field.id, removed);
    }
    await tx
      .updateTable('custom_profile_fields')
      .set({
        name: c.name ?? field.name,
        hint: c.hint ?? field.hint,
        field_data: c.field_data !== undefined && hasFieldData(field.field_type) ? JSON.stringify(c.field_data) : field.field_data,
        display_in_profile_summary: c.display_in_profile_summary ?? field.display_in_profile_summary,
        required: c.required ?? field.required,
        editable_by_user: c.editable_by_user ?? field.editable_by_user,
      })
      .where('id', '=', field.id)
      .execute();
    await notifyFields(ctx);
  });
}

/** DELETE /realm/profile_fields/{field_id}: the field and every value of it. */
export async function deleteField(svc: Services, realm: Realm, actor: User, fieldId: number): Promise<void> {
  requireAdmin(actor);
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    await lockFields(tx, realm.id);
    const field = await getField(tx, realm.id, fieldId);
    // Clients hold the values in their user lists: they hear of each removal.
    await dropValues(ctx, field.id);
    await tx.deleteFrom('custom_profile_fields').where('id', '=', field.id).execute();
    await notifyFields(ctx);
  });
}

/** PATCH /realm/profile_fields: `order` lists every field id; positions become 0, 1, 2... */
export async function reorderFields(svc: Services, realm: Realm, actor: User, order: number[]): Promise<void> {
  requireAdmin(actor);
  // A repeated id takes its last position, as in Zulip.
  const position = new Map(order.map((id, i) => [id, i]));
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    await lockFields(tx, realm.id);
    const fields = await listFields(tx, realm.id);
    if (fields.some((f) => !position.has(f.id))) throw badRequest('Invalid order mapping.');
    for (const f of fields) {
      await tx
        .updateTable('custom_profile_fields')
        .set({ order: position.get(f.id)! })
        .where('id', '=', f.id)
        .execute();
    }
    await notifyFields(ctx);
  });
}

/**
 * Sets or removes `target`'s values, in order, inside the caller's transaction.
 * Administrators may set any field; others only fields `editable_by_user`.
 * Unchanged values send nothing. Used by PATCH /users/{id} and the own-profile endpoints.
 */
export async function applyProfileData(
  ctx: ActionContext<Hooked, User>,
  target: User,
  entries: readonly ProfileDataEntry[],
  html: (text: string) => string,
): Promise<void> {
  const { tx, realm, actor } = ctx;
  if (target.is_bot) throw badRequest('Bots cannot have custom profile field values');
  let audience: number[] | undefined;
  const notify = async (fieldId: number, value: string | null, rendered: string | null) => {
    audience ??= await valueAudience(ctx, target, await activeUserIds(tx, realm.id));
    notifyValue(ctx, audience, target.id, { fieldId, value, rendered });
  };
  for (const entry of entries) {
    const field = await getField(tx, realm.id, entry.id);
    if (!mayEditLockedFields(actor) && !field.editable_by_user) {
      throw badRequest('You are not allowed to change this field. Contact an administrator to update it.');
    }
    const existing = await getValue(tx, realm.id, field.id, target.id);
    if (entry.value === null || isEmptyValue(entry.value)) {
      if (!existing) continue;
      await tx
        .deleteFrom('custom_profile_field_values')
        .where('realm_id', '=', realm.id)
        .where('field_id', '=', field.id)
        .where('user_id', '=', target.id)
        .execute();
      await notify(field.id, null, null);
      continue;
    }
    const value = await checkValue(tx, realm.id, field, entry.value);
    if (existing?.value === value) continue;
    const rendered = isRenderable(field.field_type) ? html(value) : null;
    await tx
      .insertInto('custom_profile_field_values')
      .values({ realm_id: realm.id, field_id: field.id, user_id: target.id, value, rendered_value: rendered })
      .onConflict((oc) => oc.columns(['field_id', 'user_id']).doUpdateSet({ value, rendered_value: rendered }))
      .execute();
    await notify(field.id, value, rendered);
  }
}

/** Bots have no profile: the own-profile endpoints are for people (Zulip's human_users_only). */
function checkHuman(actor: User): void {
  if (actor.is_bot) throw badRequest('This endpoint does not accept bot requests.');
}

/** The text values of profile data, rendered before the caller's transaction (for applyProfileData). */
export function renderProfileTexts(svc: Services, realm: Realm, entries: readonly ProfileDataEntry[] | undefined) {
  return prerenderHtml(
    svc,
    realm,
    (entries ?? []).flatMap((e) => (typeof e.value === 'string' ? [e.value] : [])),
  );
}

/** PATCH /users/me/profile_data. */
export async function updateOwnProfileData(svc: Services, realm: Realm, actor: User, entries: ProfileDataEntry[]): Promise<void> {
  checkHuman(actor);
  const html = await renderProfileTexts(svc, realm, entries);
  await transactAs(svc, realm, actor, (ctx) => applyProfileData(ctx, actor, entries, html));
}

/** DELETE /users/me/profile_data: `fieldIds` whose values to remove (absent values are fine). */
export async function removeOwnProfileData(svc: Services, realm: Realm, actor: User, fieldIds: number[]): Promise<void> {
  checkHuman(actor);
  const entries = fieldIds.map((id) => ({ id, value: null }));
  const html = await renderProfileTexts(svc, realm, entries);
  await transactAs(svc, realm, actor, (ctx) => applyProfileData(ctx, actor, entries, html));
}
