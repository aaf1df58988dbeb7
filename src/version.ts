// The interface level this server implements, defined once. Clients branch on
// svc_feature_level; see the spec's "Versioning".
export const SVC_FEATURE_LEVEL = 419;
export const SVC_VERSION = '11.0-confab-0.1.0';
