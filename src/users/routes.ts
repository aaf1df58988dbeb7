import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { z } from 'zod';
import { badRequest } from '../http/errors.ts';
import { accessibleUsers, accessUserByKey, canAccess, listUsers } from './queries.ts';
import { formatUser } from './format.ts';
import { createUser, deactivateOwnAccount, deactivateUser, reactivateUser, updateUser } from './actions.ts';
import { isRole } from './roles.ts';
import { maxMessageIdFor } from './own-data.ts';
import { profileDataFor } from './profile-data.ts';
import { PROFILE_DATA } from '../custom_profile_fields/validation.ts';

const clientSvcavatar = p.bool().default(true);
const includeCustomProfileFields = p.bool().default(false);

export function userRoutes(r: Router): void {
  r.route(
    'GET',
    '/users',
    { client_svcavatar: clientSvcavatar, include_custom_profile_fields: includeCustomProfileFields, user_ids: p.intList().optional() },
    async (ctx, q) => {
      const access = await accessibleUsers(ctx.svc, ctx.svc.db, ctx.realm, ctx.user);
      const users = (await listUsers(ctx.svc.db, ctx.realm.id, q.user_ids)).filter((u) => canAccess(access, u.id));
      const profiles = q.include_custom_profile_fields ? await profileDataFor(ctx.svc.db, ctx.realm.id, users) : undefined;
      return {
        members: users.map((u) => ({
          ...formatUser(u, ctx.user, { clientSvcavatar: q.client_svcavatar }),
          ...(profiles && !u.is_bot ? { profile_data: profiles.get(u.id) ?? {} } : {}),
        })),
      };
    },
  );

  r.route('POST', '/users', { email: p.str(), password: p.str(), full_name: p.str() }, async (ctx, q) => {
    const user = await createUser(ctx.svc, ctx.realm, ctx.user, q);
    return { user_id: user.id };
  });

  r.route('GET', '/users/me', {}, async (ctx) => {
    const { bot_type, bot_owner_id, ...human } = formatUser(ctx.user, ctx.user, { clientSvcavatar: false });
    // The bot fields only for bots, as the reference's own profile does (digest 2, "Users").
    const me = ctx.user.is_bot ? { ...human, bot_type, bot_owner_id } : human;
    const profiles = await profileDataFor(ctx.svc.db, ctx.realm.id, [ctx.user]);
    return { ...me, max_message_id: await maxMessageIdFor(ctx.svc.db, ctx.user), profile_data: profiles.get(ctx.user.id) ?? {} };
  });

  r.route('DELETE', '/users/me', {}, async (ctx) => {
    await deactivateOwnAccount(ctx.svc, ctx.realm, ctx.user);
    return {};
  });

  r.route('GET', '/users/{user:str}', { client_svcavatar: clientSvcavatar, include_custom_profile_fields: includeCustomProfileFields }, async (ctx, q) => {
    const user = await accessUserByKey(ctx.svc, ctx.svc.db, ctx.realm, ctx.user, q.user, { allowDeactivated: true, allowSystemBots: true });
    const formatted = formatUser(user, ctx.user, { clientSvcavatar: q.client_svcavatar });
    if (q.include_custom_profile_fields && !user.is_bot) {
      const profiles = await profileDataFor(ctx.svc.db, ctx.realm.id, [user]);
      return { user: { ...formatted, profile_data: profiles.get(user.id) ?? {} } };
    }
    return { user: formatted };
  });

  r.route(
    'PATCH',
    '/users/{user:str}',
    {
      full_name: p.str(z.string().max(100)).optional(),
      role: p.int().optional(),
      new_email: p.str().optional(),
      profile_data: p.json(PROFILE_DATA).optional(),
    },
    async (ctx, q) => {
      if (q.role !== undefined && !isRole(q.role)) throw badRequest('Invalid role');
      const target = await accessUserByKey(ctx.svc, ctx.svc.db, ctx.realm, ctx.user, q.user, { allowDeactivated: true });
      await updateUser(ctx.svc, ctx.realm, ctx.user, target.id, {
        full_name: q.full_name,
        role: q.role,
        new_email: q.new_email,
        profile_data: q.profile_data,
      });
      return {};
    },
  );

  r.route('DELETE', '/users/{user:str}', { deactivation_notification_comment: p.str(z.string().max(2000)).optional() }, async (ctx, q) => {
    const target = await accessUserByKey(ctx.svc, ctx.svc.db, ctx.realm, ctx.user, q.user);
    await deactivateUser(ctx.svc, ctx.realm, ctx.user, target.id);
    return {};
  });

  r.route('POST', '/users/{user:str}/reactivate', {}, async (ctx, q) => {
    const target = await accessUserByKey(ctx.svc, ctx.svc.db, ctx.realm, ctx.user, q.user, { allowDeactivated: true });
    await reactivateUser(ctx.svc, ctx.realm, ctx.user, target.id);
    return {};
  });
}
