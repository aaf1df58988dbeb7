import type { Executor } from '../db/schema.ts';
import type { CustomProfileField } from './tables.ts';
import { badRequest } from '../http/errors.ts';

/** The organization's fields in display order. */
export async function listFields(db: Executor, realmId: number): Promise<CustomProfileField[]> {
  return db.selectFrom('custom_profile_fields').selectAll().where('realm_id', '=', realmId).orderBy('order').orderBy('id').execute();
}

/** A field of the organization, or "Field id N not found.". */
export async function getField(db: Executor, realmId: number, fieldId: number): Promise<CustomProfileField> {
  const field = await db.selectFrom('custom_profile_fields').selectAll().where('realm_id', '=', realmId).where('id', '=', fieldId).executeTakeFirst();
  if (!field) throw badRequest(`Field id ${fieldId} not found.`);
  return field;
}

export async function labelInUse(db: Executor, realmId: number, name: string, exceptFieldId?: number): Promise<boolean> {
  let q = db.selectFrom('custom_profile_fields').select('id').where('realm_id', '=', realmId).where('name', '=', name);
  if (exceptFieldId !== undefined) q = q.where('id', '!=', exceptFieldId);
  return (await q.executeTakeFirst()) !== undefined;
}

export async function countSummaryFields(db: Executor, realmId: number, exceptFieldId?: number): Promise<number> {
  let q = db
    .selectFrom('custom_profile_fields')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .where('display_in_profile_summary', '=', true);
  if (exceptFieldId !== undefined) q = q.where('id', '!=', exceptFieldId);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

export async function nextOrder(db: Executor, realmId: number): Promise<number> {
  const row = await db
    .selectFrom('custom_profile_fields')
    .select((eb) => eb.fn.max<number | null>('order').as('max'))
    .where('realm_id', '=', realmId)
    .executeTakeFirstOrThrow();
  return (row.max ?? 0) + 1;
}

/** One user's stored value of one field. */
export async function getValue(db: Executor, realmId: number, fieldId: number, userId: number) {
  return db
    .selectFrom('custom_profile_field_values')
    .select(['value', 'rendered_value'])
    .where('realm_id', '=', realmId)
    .where('field_id', '=', fieldId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}
