import type { CustomProfileField } from './tables.ts';

/** The API shape of a field (GET /realm/profile_fields, register, events). */
export function formatField(f: CustomProfileField): Record<string, unknown> {
  return {
    id: f.id,
    name: f.name,
    type: f.field_type,
    hint: f.hint,
    field_data: f.field_data,
    order: f.order,
    required: f.required,
    editable_by_user: f.editable_by_user,
    // Present only when true, as in Zulip.
    ...(f.display_in_profile_summary ? { display_in_profile_summary: true } : {}),
  };
}
