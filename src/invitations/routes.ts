import { z } from 'zod';
import type { Router } from '../http/router.ts';
import { p, type Param, type ParamValues } from '../http/params.ts';
import { badRequest } from '../http/errors.ts';
import { isRole, ROLE, type Role } from '../users/roles.ts';
import { acceptInvitation, createInviteLink, resendInvitation, revokeInvitation, sendInvitations, type InvitationSettings } from './actions.ts';
import { managedInvitations } from './queries.ts';
import { formatInvitation } from './format.ts';
import { signIn } from '../auth/sessions.ts';

/** Spec "Limits": the welcome text of an invitation. */
export const MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH = 8000;

// Up to 2^31 - 1 minutes (about 4000 years): far, but a date both databases can store.
const expiresIn = p.json(
  z
    .int()
    .min(1)
    .max(2 ** 31 - 1)
    .nullable(),
);

const inviteAs = p.int().map((role, name): Role => {
  if (!isRole(role)) throw badRequest(`Invalid ${name}`);
  return role;
});

/** What email invitations and reusable links share. */
function settingsParams<P extends Param<number[], boolean>>(streamIds: P) {
  return {
    invite_expires_in_minutes: expiresIn.optional(),
    invite_as: inviteAs.default(ROLE.MEMBER),
    stream_ids: streamIds,
    group_ids: p.intList().default([]),
    include_realm_default_subscriptions: p.bool().default(false),
    welcome_message_custom_text: p.str(z.string().max(MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH)).optional(),
  };
}

type SettingsValues = ParamValues<ReturnType<typeof settingsParams<Param<number[]>>>>;

/** Absent `invite_expires_in_minutes` is the server's validity; null is never. */
const settingsFrom = (validityMinutes: number, q: SettingsValues): InvitationSettings => ({
  expiresInMinutes: q.invite_expires_in_minutes === undefined ? validityMinutes : q.invite_expires_in_minutes,
  invitedAs: q.invite_as,
  channelIds: q.stream_ids,
  groupIds: q.group_ids,
  includeRealmDefaultSubscriptions: q.include_realm_default_subscriptions,
  welcomeMessageCustomText: q.welcome_message_custom_text ?? null,
});

export function invitationRoutes(r: Router): void {
  r.route('GET', '/invites', {}, async (ctx) => {
    const invites = await managedInvitations(ctx.svc.db, ctx.user);
    return { invites: invites.map((inv) => formatInvitation(inv, ctx.realm, ctx.svc.config)) };
  });

  r.route('POST', '/invites', { invitee_emails: p.str(), notify_referrer_on_join: p.bool().default(true), ...settingsParams(p.intList()) }, async (ctx, q) => {
    await sendInvitations(ctx.svc, ctx.realm, ctx.user, q.invitee_emails, {
      ...settingsFrom(ctx.svc.config.invitations.validityMinutes, q),
      notifyReferrerOnJoin: q.notify_referrer_on_join,
    });
    return {};
  });

  r.route('POST', '/invites/multiuse', settingsParams(p.intList().default([])), async (ctx, q) => {
    const link = await createInviteLink(ctx.svc, ctx.realm, ctx.user, settingsFrom(ctx.svc.config.invitations.validityMinutes, q));
    return { invite_link: link };
  });

  r.route('DELETE', '/invites/{invite_id}', {}, async (ctx, q) => {
    await revokeInvitation(ctx.svc, ctx.realm, ctx.user, q.invite_id, false);
    return {};
  });

  r.route('DELETE', '/invites/multiuse/{invite_id}', {}, async (ctx, q) => {
    await revokeInvitation(ctx.svc, ctx.realm, ctx.user, q.invite_id, true);
    return {};
  });

  r.route('POST', '/invites/{invite_id}/resend', {}, async (ctx, q) => {
    await resendInvitation(ctx.svc, ctx.realm, ctx.user, q.invite_id);
    return {};
  });

  // Ours (docs/DECISIONS.md): the key of an invitation link becomes an account.
  r.publicRoute('POST', '/invites/accept', 'none', { key: p.str(), email: p.str().optional(), full_name: p.str(), password: p.str() }, async (ctx, q) => {
    const user = await acceptInvitation(ctx.svc, ctx.realm, q);
    if (ctx.request.scheme !== 'session') return { user_id: user.id, email: user.delivery_email, api_key: user.api_key };
    // The web client's sign-up page: signed in at once, and no API key for page scripts.
    await signIn(ctx.svc, ctx.request.setCookies, user);
    return { user_id: user.id, email: user.delivery_email };
  });
}
