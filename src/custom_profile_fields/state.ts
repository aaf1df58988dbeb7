// Register's `custom_profile_fields` section: the organization's fields and the
// field types a settings UI offers. Values live in `realm_users` (users/state.ts).

import type { StateSection } from '../events/state.ts';
import { listFields } from './queries.ts';
import { formatField, type ApiCustomProfileField } from './format.ts';
import { CUSTOM_PROFILE_FIELD_TYPES } from './field-types.ts';

interface FieldsState {
  custom_profile_fields: ApiCustomProfileField[];
  custom_profile_field_types: typeof CUSTOM_PROFILE_FIELD_TYPES;
}

export const customProfileFieldsSection: StateSection<FieldsState> = {
  types: ['custom_profile_fields'],
  async fetch({ svc, realm, user }) {
    // Spectators see no profiles.
    const fields = user ? (await listFields(svc.db, realm.id)).map(formatField) : [];
    return { custom_profile_fields: fields, custom_profile_field_types: CUSTOM_PROFILE_FIELD_TYPES };
  },
  apply(state, event) {
    // Each event carries the whole list.
    if (event.type === 'custom_profile_fields') state.custom_profile_fields = event.fields;
  },
};
