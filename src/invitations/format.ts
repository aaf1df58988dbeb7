// The API shapes of invitations (reference yaml `Invite`) and their links.

import type { Config } from '../config.ts';
import type { Realm } from '../realm/tables.ts';
import type { Invitation } from './tables.ts';
import { realmUrl } from '../realm/queries.ts';

/** The link that accepts an invitation: `<organization URL>/join/<token>/`, as the reference's. */
export function invitationLink(realm: Pick<Realm, 'string_id'>, config: Pick<Config, 'externalUrl'>, token: string): string {
  return `${realmUrl(realm, config)}/join/${token}/`;
}

const seconds = (d: Date): number => Math.floor(d.getTime() / 1000);

export function formatInvitation(inv: Invitation, realm: Realm, config: Pick<Config, 'externalUrl'>): Record<string, unknown> {
  return {
    id: inv.id,
    invited_by_user_id: inv.referred_by_id,
    invited: seconds(inv.invited_at),
    expiry_date: inv.expires_at === null ? null : seconds(inv.expires_at),
    invited_as: inv.invited_as,
    ...(inv.is_multiuse ? { link_url: invitationLink(realm, config, inv.token) } : { email: inv.email }),
    notify_referrer_on_join: inv.notify_referrer_on_join,
    is_multiuse: inv.is_multiuse,
  };
}
