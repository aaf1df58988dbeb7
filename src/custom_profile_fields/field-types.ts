// The kinds of custom profile field (spec "Custom profile field"; register's
// `custom_profile_field_types`) and the external accounts an organization can
// add as ready-made fields.

export const FIELD_TYPE = {
  SHORT_TEXT: 1,
  LONG_TEXT: 2,
  SELECT: 3,
  DATE: 4,
  URL: 5,
  USER: 6,
  EXTERNAL_ACCOUNT: 7,
  PRONOUNS: 8,
} as const;

export type FieldType = (typeof FIELD_TYPE)[keyof typeof FIELD_TYPE];

/** Register's `custom_profile_field_types`: keyword -> {id, name}. */
export const CUSTOM_PROFILE_FIELD_TYPES: Readonly<Record<keyof typeof FIELD_TYPE, { id: number; name: string }>> = {
  SHORT_TEXT: { id: FIELD_TYPE.SHORT_TEXT, name: 'Text (short)' },
  LONG_TEXT: { id: FIELD_TYPE.LONG_TEXT, name: 'Text (long)' },
  SELECT: { id: FIELD_TYPE.SELECT, name: 'List of options' },
  DATE: { id: FIELD_TYPE.DATE, name: 'Date' },
  URL: { id: FIELD_TYPE.URL, name: 'Link' },
  USER: { id: FIELD_TYPE.USER, name: 'Users' },
  EXTERNAL_ACCOUNT: { id: FIELD_TYPE.EXTERNAL_ACCOUNT, name: 'External account' },
  PRONOUNS: { id: FIELD_TYPE.PRONOUNS, name: 'Pronouns' },
};

export function isFieldType(value: number): value is FieldType {
  return (Object.values(FIELD_TYPE) as number[]).includes(value);
}

/** Types whose values are Markdown: they carry a `rendered_value`. */
export function isRenderable(type: number): boolean {
  return type === FIELD_TYPE.SHORT_TEXT || type === FIELD_TYPE.LONG_TEXT;
}

/** Types whose `field_data` is stored (the others keep ''). */
export function hasFieldData(type: number): boolean {
  return type === FIELD_TYPE.SELECT || type === FIELD_TYPE.EXTERNAL_ACCOUNT;
}

/** External account subtypes with a fixed label and URL (`subtype: "custom"` brings its own pattern). */
export const DEFAULT_EXTERNAL_ACCOUNTS: Readonly<Record<string, { text: string; name: string; hint: string; url_pattern: string }>> = {
  github: { text: 'GitHub', name: 'GitHub username', hint: '', url_pattern: 'https://github.com/%(username)s' },
  twitter: { text: 'Twitter', name: 'Twitter username', hint: '', url_pattern: 'https://twitter.com/%(username)s' },
};

export const LIMITS = {
  name: 40,
  hint: 80,
  summaryFields: 2,
  shortText: 50,
  longText: 500,
} as const;
