// The interface level this server implements, defined once. Clients branch on
// svc_feature_level; see the spec's "Versioning".
export const SVC_FEATURE_LEVEL = 419;
export const SVC_VERSION = '11.0-confab-0.1.0';
/** The release this version descends from (the reference's merge base): ours is the version itself. */
export const SVC_MERGE_BASE = SVC_VERSION;
/** When this process started: register's and the `restart` event's `server_generation`. */
export const SERVER_GENERATION = Math.floor(Date.now() / 1000);

/**
 * The version keys of /server_settings, /register and the `restart` event: the
 * spec's names, and with `compatNames` (COMPAT_NAMES) also the reference's names
 * that existing clients read, with the same values (docs/DECISIONS.md).
 */
export interface VersionFields {
  svc_version: string;
  svc_feature_level: number;
  svc_merge_base: string;
  zulip_version?: string;
  zulip_feature_level?: number;
  zulip_merge_base?: string;
}

export function versionFields(compatNames: boolean): VersionFields {
  const fields: VersionFields = {
    svc_version: SVC_VERSION,
    svc_feature_level: SVC_FEATURE_LEVEL,
    svc_merge_base: SVC_MERGE_BASE,
  };
  if (compatNames) Object.assign(fields, { zulip_version: SVC_VERSION, zulip_feature_level: SVC_FEATURE_LEVEL, zulip_merge_base: SVC_MERGE_BASE });
  return fields;
}
