import { createHash } from 'node:crypto';
import type { Executor } from '../db/schema.ts';
import type { Config } from '../config.ts';
import type { Realm } from './tables.ts';
import { realmSettings, type RealmSettings } from './settings.ts';

/**
 * The organization a Host header names: `sub.<external host>` is the organization
 * with subdomain `sub`; the external host itself, or any other name (an address,
 * a proxy's name), is the organization at the root ('').
 */
export function subdomainFromHost(hostHeader: string | undefined, externalUrl: string): string {
  const host = (hostHeader ?? '').toLowerCase();
  const external = externalHost(externalUrl);
  if (host.endsWith(`.${external}`)) return host.slice(0, -external.length - 1);
  // The same rule when the request's port differs from the configured one.
  const bare = host.replace(/:\d+$/, '');
  const externalBare = external.replace(/:\d+$/, '');
  if (bare.endsWith(`.${externalBare}`)) return bare.slice(0, -externalBare.length - 1);
  return '';
}

// Every request asks; parsing the URL each time cost more than the rest of this.
let parsedExternal = { url: '', host: '' };
function externalHost(externalUrl: string): string {
  if (parsedExternal.url !== externalUrl) parsedExternal = { url: externalUrl, host: new URL(externalUrl).host.toLowerCase() };
  return parsedExternal.host;
}

export async function getRealmBySubdomain(db: Executor, subdomain: string): Promise<Realm | undefined> {
  return db.selectFrom('realms').selectAll().where('string_id', '=', subdomain).executeTakeFirst();
}

/** The organization's own URL: its subdomain in front of the server's host. */
export function realmUrl(realm: Pick<Realm, 'string_id'>, config: Pick<Config, 'externalUrl'>): string {
  if (realm.string_id === '') return config.externalUrl;
  const url = new URL(config.externalUrl);
  return `${url.protocol}//${realm.string_id}.${url.host}`;
}

/** The host part of the organization's URL, used for fake email addresses. */
export function realmHost(realm: Pick<Realm, 'string_id'>, config: Pick<Config, 'externalUrl'>): string {
  return new URL(realmUrl(realm, config)).hostname;
}

export function settingsOf(realm: Realm): RealmSettings {
  return realmSettings(realm.settings);
}

/** The organization's icon: an identicon until one is uploaded (served by uploads/serve.ts). */
export function realmIconUrl(realm: Pick<Realm, 'id' | 'string_id' | 'icon_source' | 'icon_version'>): string {
  if (realm.icon_source === 'U') return `/user_avatars/${realm.id}/realm/icon.png?version=${realm.icon_version}`;
  const hash = createHash('md5').update(realm.string_id).digest('hex');
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon&s=100`;
}

const DEFAULT_LOGO = '/static/images/logo/zulip-org-logo.svg';

/** The wide logo, for the light or (night) the dark theme: the default until one is uploaded. */
export function realmLogoUrl(realm: Pick<Realm, 'id' | 'logo_source' | 'logo_version' | 'night_logo_source' | 'night_logo_version'>, night: boolean): string {
  const [source, version] = night ? [realm.night_logo_source, realm.night_logo_version] : [realm.logo_source, realm.logo_version];
  return source === 'U' ? `/user_avatars/${realm.id}/realm/${night ? 'night_logo' : 'logo'}.png?version=${version}` : DEFAULT_LOGO;
}
