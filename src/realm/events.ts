// The events of the organization's settings (digest 3.3 `realm`), as actions emit them.

export type RealmEvent =
  | { type: 'realm'; op: 'update'; property: string; value: unknown }
  /** `property` is 'default' for settings, or the image that changed ('icon', 'logo', 'night_logo'). */
  | { type: 'realm'; op: 'update_dict'; property: string; data: Record<string, unknown> }
  | { type: 'realm'; op: 'deactivated'; realm_id: number };
