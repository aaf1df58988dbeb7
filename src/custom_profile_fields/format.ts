import type { CustomProfileField } from './tables.ts';

/** The API shape of a field (GET /realm/profile_fields, register, events). */
export interface ApiCustomProfileField {
  id: number;
  name: string;
  type: number;
  hint: string;
  field_data: string;
  order: number;
  required: boolean;
  editable_by_user: boolean;
  display_in_profile_summary?: true;
}

export function formatField(f: CustomProfileField): ApiCustomProfileField {
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
