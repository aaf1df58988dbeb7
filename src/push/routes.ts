import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { registerPushDevice } from './actions.ts';
import { base64, MAX_KEY_LENGTH, MAX_REGISTRATION_LENGTH } from './validation.ts';
import { addPushToken, removePushToken } from './tokens.ts';

export function pushRoutes(r: Router): void {
  r.route(
    'POST',
    '/mobile_push/register',
    {
      token_kind: p.choice(['fcm', 'apns']),
      push_account_id: p.int(),
      push_public_key: p.str(base64(MAX_KEY_LENGTH)),
      bouncer_public_key: p.str(base64(MAX_KEY_LENGTH)),
      encrypted_push_registration: p.str(base64(MAX_REGISTRATION_LENGTH)),
    },
    async (ctx, q) => {
      await registerPushDevice(ctx.svc, ctx.realm, ctx.user, q);
      return {};
    },
  );

  r.route('POST', '/users/me/apns_device_token', { token: p.str(), appid: p.str() }, async (ctx, q) => {
    await addPushToken(ctx.svc, ctx.realm, ctx.user, 'apns', q.token, q.appid);
    return {};
  });
  r.route('DELETE', '/users/me/apns_device_token', { token: p.str() }, async (ctx, q) => {
    await removePushToken(ctx.svc, ctx.realm, ctx.user, 'apns', q.token);
    return {};
  });
  r.route('POST', '/users/me/android_gcm_reg_id', { token: p.str() }, async (ctx, q) => {
    await addPushToken(ctx.svc, ctx.realm, ctx.user, 'fcm', q.token, null);
    return {};
  });
  r.route('DELETE', '/users/me/android_gcm_reg_id', { token: p.str() }, async (ctx, q) => {
    await removePushToken(ctx.svc, ctx.realm, ctx.user, 'fcm', q.token);
    return {};
  });
}
