import { z } from 'zod';
import type { Router } from '../http/router.ts';
import { p, type Param } from '../http/params.ts';
import { groupSettingChangeSchema, groupSettingValueSchema } from './group-setting.ts';
import type { GroupPermission } from './permission-settings.ts';
import { GROUP_SETTING_NAMES } from './queries.ts';
import { groupMembersFor, groupsFor, isGroupMemberFor, subgroupsFor } from './reads.ts';
import { createGroup, deactivateGroup, updateGroup, updateMembers, updateSubgroups } from './actions.ts';

/** The six `can_*_group` parameters, each parsed by `param`. */
function settingParams<T>(param: Param<T, true>): Record<GroupPermission, Param<T, true>> {
  return Object.fromEntries(GROUP_SETTING_NAMES.map((s) => [s, param])) as Record<GroupPermission, Param<T, true>>;
}

function pickSettings<T>(q: Record<GroupPermission, T | undefined>): Partial<Record<GroupPermission, T>> {
  return Object.fromEntries(GROUP_SETTING_NAMES.filter((s) => q[s] !== undefined).map((s) => [s, q[s]]));
}

const idList = p.intList().optional();

/** The reference's UserGroup.MAX_DESCRIPTION_LENGTH. */
const groupDescription = p.str(z.string().max(1024));

export function userGroupRoutes(r: Router): void {
  r.route(
    'POST',
    '/user_groups/create',
    {
      name: p.str(),
      description: groupDescription,
      members: p.intList(),
      subgroups: idList,
      ...settingParams(p.json(groupSettingValueSchema).optional()),
    },
    async (ctx, q) => {
      const id = await createGroup(ctx.svc, ctx.realm, ctx.user, { ...q, settings: pickSettings(q) });
      return { group_id: id };
    },
  );

  r.route('GET', '/user_groups', { include_deactivated_groups: p.bool().default(false) }, async (ctx, q) => ({
    user_groups: await groupsFor(ctx.svc.db, ctx.realm, ctx.user, { includeDeactivated: q.include_deactivated_groups }),
  }));

  r.route(
    'PATCH',
    '/user_groups/{user_group_id}',
    {
      name: p.str().optional(),
      description: groupDescription.optional(),
      deactivated: p.bool().optional(),
      ...settingParams(p.json(groupSettingChangeSchema).optional()),
    },
    async (ctx, q) => {
      await updateGroup(ctx.svc, ctx.realm, ctx.user, q.user_group_id, { ...q, settings: pickSettings(q) });
      return {};
    },
  );

  r.route('POST', '/user_groups/{user_group_id}/deactivate', {}, async (ctx, q) => {
    await deactivateGroup(ctx.svc, ctx.realm, ctx.user, q.user_group_id);
    return {};
  });

  r.route('POST', '/user_groups/{user_group_id}/members', { add: idList, delete: idList, add_subgroups: idList, delete_subgroups: idList }, async (ctx, q) => {
    await updateMembers(ctx.svc, ctx.realm, ctx.user, q.user_group_id, q);
    return {};
  });

  r.route('POST', '/user_groups/{user_group_id}/subgroups', { add: idList, delete: idList }, async (ctx, q) => {
    await updateSubgroups(ctx.svc, ctx.realm, ctx.user, q.user_group_id, q);
    return {};
  });

  const directMemberOnly = p.bool().default(false);

  r.route('GET', '/user_groups/{user_group_id}/members', { direct_member_only: directMemberOnly }, async (ctx, q) => ({
    members: await groupMembersFor(ctx.svc.db, ctx.realm, ctx.user, q.user_group_id, { directOnly: q.direct_member_only }),
  }));

  r.route('GET', '/user_groups/{user_group_id}/members/{user_id}', { direct_member_only: directMemberOnly }, async (ctx, q) => ({
    is_user_group_member: await isGroupMemberFor(ctx.svc, ctx.svc.db, ctx.realm, ctx.user, q.user_group_id, q.user_id, { directOnly: q.direct_member_only }),
  }));

  r.route('GET', '/user_groups/{user_group_id}/subgroups', { direct_subgroup_only: p.bool().default(false) }, async (ctx, q) => ({
    subgroups: await subgroupsFor(ctx.svc.db, ctx.realm, ctx.user, q.user_group_id, { directOnly: q.direct_subgroup_only }),
  }));
}
