// The interface level this server implements, defined once. Clients branch on
// svc_feature_level; see the spec's "Versioning".
export const SVC_FEATURE_LEVEL = 419;
export const SVC_VERSION = '11.0-confab-0.1.0';
/** When this process started: register's and the `restart` event's `server_generation`. */
export const SERVER_GENERATION = Math.floor(Date.now() / 1000);
