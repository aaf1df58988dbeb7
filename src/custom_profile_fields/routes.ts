import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { listFields } from './queries.ts';
import { formatField } from './format.ts';
import { FIELD_DATA, PROFILE_DATA } from './validation.ts';
import { createField, deleteField, removeOwnProfileData, reorderFields, updateField, updateOwnProfileData } from './actions.ts';

export function customProfileFieldRoutes(r: Router): void {
  r.route('GET', '/realm/profile_fields', {}, async (ctx) => {
    return { custom_fields: (await listFields(ctx.svc.db, ctx.realm.id)).map(formatField) };
  });

  r.route(
    'POST',
    '/realm/profile_fields',
    {
      name: p.str().default(''),
      hint: p.str().default(''),
      field_type: p.int(),
      field_data: p.json(FIELD_DATA).optional(),
      display_in_profile_summary: p.bool().default(false),
      required: p.bool().default(false),
      editable_by_user: p.bool().default(true),
    },
    async (ctx, q) => ({ id: await createField(ctx.svc, ctx.realm, ctx.user, q) }),
  );

  r.route('PATCH', '/realm/profile_fields', { order: p.intList() }, async (ctx, q) => {
    await reorderFields(ctx.svc, ctx.realm, ctx.user, q.order);
    return {};
  });

  r.route(
    'PATCH',
    '/realm/profile_fields/{field_id}',
    {
      name: p.str().optional(),
      hint: p.str().optional(),
      field_data: p.json(FIELD_DATA).optional(),
      display_in_profile_summary: p.bool().optional(),
      required: p.bool().optional(),
      editable_by_user: p.bool().optional(),
    },
    async (ctx, { field_id, ...changes }) => {
      await updateField(ctx.svc, ctx.realm, ctx.user, field_id, changes);
      return {};
    },
  );

  r.route('DELETE', '/realm/profile_fields/{field_id}', {}, async (ctx, q) => {
    await deleteField(ctx.svc, ctx.realm, ctx.user, q.field_id);
    return {};
  });

  r.route('PATCH', '/users/me/profile_data', { data: p.json(PROFILE_DATA) }, async (ctx, q) => {
    await updateOwnProfileData(ctx.svc, ctx.realm, ctx.user, q.data);
    return {};
  });

  r.route('DELETE', '/users/me/profile_data', { data: p.intList() }, async (ctx, q) => {
    await removeOwnProfileData(ctx.svc, ctx.realm, ctx.user, q.data);
    return {};
  });
}
