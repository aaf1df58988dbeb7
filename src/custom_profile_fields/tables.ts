import type { Generated, Selectable } from 'kysely';

export interface CustomProfileFieldTable {
  id: Generated<number>;
  realm_id: number;
  name: string;
  hint: Generated<string>;
  field_type: number;
  /** JSON text for choice and external account fields, else '' (the API returns it as stored). */
  field_data: Generated<string>;
  order: number;
  display_in_profile_summary: Generated<boolean>;
  required: Generated<boolean>;
  editable_by_user: Generated<boolean>;
}

export interface CustomProfileFieldValueTable {
  realm_id: number;
  field_id: number;
  user_id: number;
  /** Text; a person picker's value is the JSON text of its user id list. */
  value: string;
  /** HTML for the Markdown types (short and long text), else null. */
  rendered_value: string | null;
}

export interface CustomProfileFieldTables {
  custom_profile_fields: CustomProfileFieldTable;
  custom_profile_field_values: CustomProfileFieldValueTable;
}

export type CustomProfileField = Selectable<CustomProfileFieldTable>;
