import { z } from 'zod';
import type { Router } from '../http/router.ts';
import { jsonOrText, Param, p } from '../http/params.ts';
import { groupSettingChangeSchema, groupSettingValueSchema } from '../user_groups/group-setting.ts';
import type { ChannelPermission } from '../user_groups/permission-settings.ts';
import { CHANNEL_PERMISSIONS, formatChannels } from './format.ts';
import { TEXT_BOUNDS } from '../realm/state.ts';
import { HEX_COLOR, parseRetention, TOPICS_POLICIES } from './validation.ts';
import { channelViewer } from './access.ts';
import { accessChannel, channelIdByName, subscriberIds } from './queries.ts';
import { listChannelsFor, subscriptionData } from './listing.ts';
import { archiveChannel, createChannel, setDefaultChannel, updateChannel } from './actions.ts';
import { changeSubscriptions, subscribe, unsubscribe, updateSubscriptionProperties } from './subscription-actions.ts';
import type { ChannelSettings } from './create.ts';
import { accessUserByKey } from '../users/queries.ts';

/** `message_retention_days`: JSON `"realm_default"`, `"unlimited"` or a number of days (a bare word also works). */
const retention = new Param<number | null>((raw) => parseRetention(jsonOrText(raw))).optional();

const principals = p.json(z.union([z.array(z.int()), z.array(z.string())])).optional();

const subscriptionSpec = z.object({
  name: z.string(),
  color: z
    .string()
    .refine((v) => HEX_COLOR.test(v), '{name} is not a valid hex color code')
    .optional(),
  description: z.string().max(TEXT_BOUNDS.max_stream_description_length).optional(),
});

/** Creation settings shared by POST /users/me/subscriptions and POST /channels/create. */
const creationParams = {
  invite_only: p.bool().default(false),
  is_web_public: p.bool().default(false),
  is_default_stream: p.bool().default(false),
  history_public_to_subscribers: p.json(z.boolean().nullable()).optional(),
  message_retention_days: retention,
  topics_policy: p.choice(TOPICS_POLICIES).optional(),
  folder_id: p.json(z.int().nullable()).optional(),
  ...(Object.fromEntries(CHANNEL_PERMISSIONS.map((name) => [name, p.json(groupSettingValueSchema).optional()])) as Record<
    ChannelPermission,
    Param<z.infer<typeof groupSettingValueSchema>, true>
  >),
};

function creationSettings(q: Record<string, any>): ChannelSettings {
  const groups: ChannelSettings['groups'] = {};
  for (const name of CHANNEL_PERMISSIONS) if (q[name] !== undefined) groups[name] = q[name];
  return {
    invite_only: q.invite_only,
    is_web_public: q.is_web_public,
    is_default_stream: q.is_default_stream,
    history_public_to_subscribers: q.history_public_to_subscribers,
    message_retention_days: q.message_retention_days,
    topics_policy: q.topics_policy,
    folder_id: q.folder_id,
    groups,
  };
}

const includeSubscribers = p.boolOr('partial').default(false);

export function channelRoutes(r: Router): void {
  r.route(
    'POST',
    '/users/me/subscriptions',
    {
      subscriptions: p.json(z.array(subscriptionSpec)),
      principals,
      authorization_errors_fatal: p.bool().default(true),
      announce: p.bool().default(false),
      send_new_subscription_messages: p.bool().default(true),
      ...creationParams,
    },
    async (ctx, q) =>
      subscribe(ctx.svc, ctx.realm, ctx.user, {
        ...creationSettings(q),
        subscriptions: q.subscriptions,
        principals: q.principals,
        authorization_errors_fatal: q.authorization_errors_fatal,
        announce: q.announce,
        send_new_subscription_messages: q.send_new_subscription_messages,
      }),
  );

  r.route('DELETE', '/users/me/subscriptions', { subscriptions: p.json(z.array(z.string())), principals }, async (ctx, q) =>
    unsubscribe(ctx.svc, ctx.realm, ctx.user, q.subscriptions, q.principals),
  );

  // The legacy form: `add` and `delete` in one request.
  r.route(
    'PATCH',
    '/users/me/subscriptions',
    { add: p.json(z.array(subscriptionSpec)).default([]), delete: p.json(z.array(z.string())).default([]) },
    async (ctx, q) => changeSubscriptions(ctx.svc, ctx.realm, ctx.user, q.add, q.delete),
  );

  r.route('GET', '/users/me/subscriptions', { include_subscribers: includeSubscribers }, async (ctx, q) => {
    const viewer = await channelViewer(ctx.svc.db, ctx.realm, ctx.user);
    const data = await subscriptionData(ctx.svc, ctx.svc.db, viewer, { includeSubscribers: q.include_subscribers, includeArchived: true });
    return { subscriptions: data.subscriptions };
  });

  r.route(
    'POST',
    '/users/me/subscriptions/properties',
    { subscription_data: p.json(z.array(z.object({ stream_id: z.int(), property: z.string(), value: z.unknown() }))) },
    async (ctx, q) => ({ subscription_data: await updateSubscriptionProperties(ctx.svc, ctx.realm, ctx.user, q.subscription_data) }),
  );

  // The legacy single-property form.
  r.route('PATCH', '/users/me/subscriptions/{stream_id}', { property: p.str(), value: p.json(z.unknown()) }, async (ctx, q) => {
    await updateSubscriptionProperties(ctx.svc, ctx.realm, ctx.user, [{ stream_id: q.stream_id, property: q.property, value: q.value }]);
    return {};
  });

  r.route('GET', '/users/{user:str}/subscriptions/{stream_id}', {}, async (ctx, q) => {
    const user = await accessUserByKey(ctx.svc, ctx.svc.db, ctx.realm, ctx.user, q.user, { allowDeactivated: true });
    const channel = await accessChannel(ctx.svc.db, await channelViewer(ctx.svc.db, ctx.realm, ctx.user), q.stream_id);
    return { is_subscribed: (await subscriberIds(ctx.svc.db, [channel.id])).get(channel.id)!.includes(user.id) };
  });

  r.route(
    'GET',
    '/streams',
    {
      include_public: p.bool().default(true),
      include_web_public: p.bool().default(false),
      include_subscribed: p.bool().default(true),
      exclude_archived: p.bool().default(true),
      include_all: p.bool().default(false),
      include_default: p.bool().default(false),
      include_owner_subscribed: p.bool().default(false),
      include_can_access_content: p.bool().default(false),
      include_all_active: p.bool().default(false),
    },
    async (ctx, q) => ({ streams: await listChannelsFor(ctx.svc, ctx.svc.db, await channelViewer(ctx.svc.db, ctx.realm, ctx.user), q) }),
  );

  r.route('GET', '/streams/{stream_id}', {}, async (ctx, q) => {
    const channel = await accessChannel(ctx.svc.db, await channelViewer(ctx.svc.db, ctx.realm, ctx.user), q.stream_id);
    return { stream: (await formatChannels(ctx.svc, ctx.svc.db, ctx.realm, [channel], { countsCurrent: true })).get(channel.id) };
  });

  r.route(
    'PATCH',
    '/streams/{stream_id}',
    {
      description: p.str(z.string().max(TEXT_BOUNDS.max_stream_description_length)).optional(),
      new_name: p.str().optional(),
      is_private: p.bool().optional(),
      is_web_public: p.bool().optional(),
      history_public_to_subscribers: p.bool().optional(),
      is_default_stream: p.bool().optional(),
      message_retention_days: retention,
      topics_policy: p.choice(TOPICS_POLICIES).optional(),
      folder_id: p.json(z.int().nullable()).optional(),
      is_archived: p.bool().optional(),
      ...(Object.fromEntries(CHANNEL_PERMISSIONS.map((name) => [name, p.json(groupSettingChangeSchema).optional()])) as Record<
        ChannelPermission,
        Param<z.infer<typeof groupSettingChangeSchema>, true>
      >),
    },
    async (ctx, q) => {
      const groups: Record<string, unknown> = {};
      for (const name of CHANNEL_PERMISSIONS) if (q[name] !== undefined) groups[name] = q[name];
      await updateChannel(ctx.svc, ctx.realm, ctx.user, q.stream_id, {
        description: q.description,
        new_name: q.new_name,
        is_private: q.is_private,
        is_web_public: q.is_web_public,
        history_public_to_subscribers: q.history_public_to_subscribers,
        is_default_stream: q.is_default_stream,
        message_retention_days: q.message_retention_days,
        topics_policy: q.topics_policy,
        folder_id: q.folder_id,
        is_archived: q.is_archived,
        groups,
      });
      return {};
    },
  );

  r.route('DELETE', '/streams/{stream_id}', {}, async (ctx, q) => {
    await archiveChannel(ctx.svc, ctx.realm, ctx.user, q.stream_id);
    return {};
  });

  r.route('GET', '/streams/{stream_id}/members', {}, async (ctx, q) => {
    const channel = await accessChannel(ctx.svc.db, await channelViewer(ctx.svc.db, ctx.realm, ctx.user), q.stream_id);
    return { subscribers: (await subscriberIds(ctx.svc.db, [channel.id])).get(channel.id) };
  });

  r.route('GET', '/get_stream_id', { stream: p.str() }, async (ctx, q) => ({
    stream_id: await channelIdByName(ctx.svc.db, await channelViewer(ctx.svc.db, ctx.realm, ctx.user), q.stream),
  }));

  r.route(
    'POST',
    '/channels/create',
    {
      name: p.str(),
      description: p.str(z.string().max(TEXT_BOUNDS.max_stream_description_length)).default(''),
      subscribers: p.intList(),
      announce: p.bool().default(false),
      ...creationParams,
    },
    async (ctx, q) => {
      const channel = await createChannel(ctx.svc, ctx.realm, ctx.user, {
        ...creationSettings(q),
        name: q.name,
        description: q.description,
        subscribers: q.subscribers,
        announce: q.announce,
      });
      return { id: channel.id };
    },
  );

  r.route('POST', '/default_streams', { stream_id: p.int() }, async (ctx, q) => {
    await setDefaultChannel(ctx.svc, ctx.realm, ctx.user, q.stream_id, true);
    return {};
  });

  r.route('DELETE', '/default_streams', { stream_id: p.int() }, async (ctx, q) => {
    await setDefaultChannel(ctx.svc, ctx.realm, ctx.user, q.stream_id, false);
    return {};
  });
}
