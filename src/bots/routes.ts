import { z } from 'zod';
import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { badRequest } from '../http/errors.ts';
import { isRole } from '../users/roles.ts';
import { deactivateUser } from '../users/actions.ts';
import { avatarUrl } from '../users/format.ts';
import { createBot, regenerateBotApiKey, updateBot } from './actions.ts';
import { accessBot, channelNameOf as channelName, ownedActiveBots } from './queries.ts';
import { getUser } from '../users/queries.ts';
import { BOT_TYPE, INTERFACE } from './tables.ts';
import { requireMemberOrAdmin } from '../users/access.ts';

const CONFIG_DATA = z.record(z.string(), z.string());

export function botRoutes(r: Router): void {
  r.route(
    'POST',
    '/bots',
    {
      full_name: p.str(),
      short_name: p.str(),
      bot_type: p.int().default(BOT_TYPE.GENERIC),
      payload_url: p.json(z.string()).default(''),
      service_name: p.str().optional(),
      config_data: p.json(CONFIG_DATA).default({}),
      interface_type: p.int().default(INTERFACE.GENERIC),
      default_sending_stream: p.str().optional(),
      default_events_register_stream: p.str().optional(),
      default_all_public_streams: p.bool().optional(),
    },
    async (ctx, q) => {
      requireMemberOrAdmin(ctx.user);
      if (ctx.request.files.length > 0) throw badRequest('Bot avatars cannot be uploaded yet');
      const { bot } = await createBot(ctx.svc, ctx.realm, ctx.user, q);
      return {
        user_id: bot.id,
        api_key: bot.api_key,
        avatar_url: avatarUrl(bot),
        default_sending_stream: await channelName(ctx.svc.db, bot.default_sending_stream_id),
        default_events_register_stream: await channelName(ctx.svc.db, bot.default_events_register_stream_id),
        default_all_public_streams: bot.default_all_public_streams,
      };
    },
  );

  // The caller's own active bots, in the reference's (older) shape.
  r.route('GET', '/bots', {}, async (ctx) => {
    requireMemberOrAdmin(ctx.user);
    const bots = await ownedActiveBots(ctx.svc.db, ctx.realm.id, ctx.user.id);
    return {
      bots: await Promise.all(
        bots.map(async (bot) => ({
          username: bot.email,
          full_name: bot.full_name,
          api_key: bot.api_key,
          avatar_url: avatarUrl(bot),
          default_sending_stream: await channelName(ctx.svc.db, bot.default_sending_stream_id),
          default_events_register_stream: await channelName(ctx.svc.db, bot.default_events_register_stream_id),
          default_all_public_streams: bot.default_all_public_streams,
        })),
      ),
    };
  });

  r.route(
    'PATCH',
    '/bots/{bot_id}',
    {
      full_name: p.str().optional(),
      role: p.int().optional(),
      bot_owner_id: p.int().optional(),
      config_data: p.json(CONFIG_DATA).optional(),
      service_payload_url: p.json(z.string()).optional(),
      service_interface: p.int().default(INTERFACE.GENERIC),
      default_sending_stream: p.str().optional(),
      default_events_register_stream: p.str().optional(),
      default_all_public_streams: p.bool().optional(),
    },
    async (ctx, q) => {
      requireMemberOrAdmin(ctx.user);
      if (q.role !== undefined && !isRole(q.role)) throw badRequest('Invalid role');
      if (ctx.request.files.length > 0) throw badRequest('Bot avatars cannot be uploaded yet');
      const bot = await updateBot(ctx.svc, ctx.realm, ctx.user, q.bot_id, q);
      const owner = bot.bot_owner_id === null ? undefined : await getUser(ctx.svc.db, ctx.realm.id, bot.bot_owner_id);
      return {
        full_name: bot.full_name,
        avatar_url: avatarUrl(bot),
        service_interface: q.service_interface,
        service_payload_url: q.service_payload_url ?? null,
        config_data: q.config_data ?? null,
        default_sending_stream: await channelName(ctx.svc.db, bot.default_sending_stream_id),
        default_events_register_stream: await channelName(ctx.svc.db, bot.default_events_register_stream_id),
        default_all_public_streams: bot.default_all_public_streams,
        ...(owner ? { bot_owner: owner.email } : {}),
      };
    },
  );

  r.route('DELETE', '/bots/{bot_id}', {}, async (ctx, q) => {
    requireMemberOrAdmin(ctx.user);
    const bot = await accessBot(ctx.svc.db, ctx.realm, ctx.user, q.bot_id);
    await deactivateUser(ctx.svc, ctx.realm, ctx.user, bot.id);
    return {};
  });

  r.route('POST', '/bots/{bot_id}/api_key/regenerate', {}, async (ctx, q) => {
    requireMemberOrAdmin(ctx.user);
    return { api_key: await regenerateBotApiKey(ctx.svc, ctx.realm, ctx.user, q.bot_id) };
  });
}
