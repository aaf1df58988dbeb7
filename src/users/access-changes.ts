// When the users a limited viewer may see change (can_access_all_users_group),
// the viewer hears of the users it gains (`realm_user/add`) or loses
// (`realm_user/remove`), as the reference tells guests who gain or lose access
// to a user. Two causes are told here: the organization's setting changes (users
// move into or out of the group), and a user's own role changes (a guest
// promoted into the group, or a member made a guest); and a third, watched around
// any change that starts or ends a shared channel or conversation (watchUserAccess).

import type { Hooked } from '../services.ts';
import type { ActionContext, Emit, Tx } from '../db/transact.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from './tables.ts';
import { groupMemberIds } from '../user_groups/group-setting.ts';
import { accessibleUsers, canAccess, limitingAccessGroup, listUsers, type AccessibleUsers } from './queries.ts';
import { canSeeDeliveryEmail, formatUser } from './format.ts';
import { profileDataFor, type ProfileData } from './profile-data.ts';
import type { Person } from './events.ts';

/** After the organization's settings changed: `ctx.realm` is it as it now is, `before` as it was. */
export async function announceUserAccessChange(ctx: ActionContext<Hooked>, before: Realm): Promise<void> {
  const { svc, tx, realm: after } = ctx;
  const oldGroup = before.group_settings.can_access_all_users_group;
  const newGroup = after.group_settings.can_access_all_users_group;
  if (oldGroup === newGroup) return;
  const [sawAll, seesAll] = (await Promise.all([groupMemberIds(tx, oldGroup), groupMemberIds(tx, newGroup)])).map((ids) => new Set(ids));
  const everyone = await listUsers(tx, after.id);
  const viewers = everyone.filter((u) => u.is_active && sawAll.has(u.id) !== seesAll.has(u.id));
  if (viewers.length === 0) return;
  const profiles = await profileDataFor(tx, after.id, everyone);
  for (const viewer of viewers) {
    const gains = seesAll.has(viewer.id);
    // The users a limited view leaves out: those the viewer now gains or loses.
    const limited = await accessibleUsers(svc, tx, gains ? before : after, viewer);
    announceViewChange(ctx, viewer, { before: gains ? limited : 'all', after: gains ? 'all' : limited, everyone, profiles });
  }
}

/** After `viewer`'s role changed (it is the user as it now is): the users it gained or lost sight of. */
export async function announceOwnAccessChange(ctx: ActionContext<Hooked>, viewer: User, before: AccessibleUsers): Promise<void> {
  const { svc, tx, realm } = ctx;
  if (!viewer.is_active) return;
  const after = await accessibleUsers(svc, tx, realm, viewer);
  if (before === 'all' && after === 'all') return;
  const everyone = await listUsers(tx, realm.id);
  announceViewChange(ctx, viewer, { before, after, everyone, profiles: await profileDataFor(tx, realm.id, everyone) });
}

/** What `watchUserAccess` saw before a change; `announce` tells what the change made different. */
export interface UserAccessWatch {
  announce(emit: Emit): Promise<void>;
}

const NOTHING_WATCHED: UserAccessWatch = { announce: async () => {} };

/**
 * Notes what the limited viewers among `viewerIds` may see, before a change that may
 * start or end a shared channel or conversation (subscribing, unsubscribing, a first
 * direct message); after it, `announce` tells each of them the users gained or lost.
 * Nothing is read where everyone sees everyone (the usual organization).
 */
export async function watchUserAccess(svc: Hooked, tx: Tx, realm: Realm, viewerIds: () => Promise<Iterable<number>>): Promise<UserAccessWatch> {
  const groupId = await limitingAccessGroup(tx, realm);
  if (groupId === undefined) return NOTHING_WATCHED;
  const seesAll = new Set(await groupMemberIds(tx, groupId));
  const ids = [...new Set(await viewerIds())].filter((id) => !seesAll.has(id));
  if (ids.length === 0) return NOTHING_WATCHED;
  const viewers = (await listUsers(tx, realm.id, ids)).filter((u) => u.is_active);
  const before = new Map<User, AccessibleUsers>();
  for (const viewer of viewers) before.set(viewer, await accessibleUsers(svc, tx, realm, viewer));
  return {
    async announce(emit) {
      let everyone: User[] | undefined;
      let profiles: Map<number, ProfileData> | undefined;
      for (const [viewer, had] of before) {
        const has = await accessibleUsers(svc, tx, realm, viewer);
        if (sameAccess(had, has)) continue;
        everyone ??= await listUsers(tx, realm.id);
        profiles ??= await profileDataFor(tx, realm.id, everyone);
        announceViewChange({ emit, realm }, viewer, { before: had, after: has, everyone, profiles });
      }
    },
  };
}

function sameAccess(a: AccessibleUsers, b: AccessibleUsers): boolean {
  if (a === 'all' || b === 'all') return a === b;
  return a.size === b.size && [...a].every((id) => b.has(id));
}

/** What a viewer could see, what it now may, of everyone (with their profile data). */
interface ViewChange {
  before: AccessibleUsers;
  after: AccessibleUsers;
  everyone: User[];
  profiles: Map<number, ProfileData>;
}

function announceViewChange(ctx: Pick<ActionContext<unknown>, 'emit' | 'realm'>, viewer: User, { before, after, everyone, profiles }: ViewChange): void {
  const { emit } = ctx;
  const realmId = ctx.realm.id;
  for (const subject of everyone) {
    const had = canAccess(before, subject.id);
    if (had === canAccess(after, subject.id)) continue;
    if (had) {
      // The reference's placeholder name: the user's real name is what the viewer stops seeing.
      emit(realmId, { type: 'realm_user', op: 'remove', person: { user_id: subject.id, full_name: 'Unknown user' } }, [viewer.id]);
      continue;
    }
    const person: Person = { ...formatUser(subject, viewer, { clientSvcavatar: false }) };
    if (!subject.is_bot) person.profile_data = profiles.get(subject.id) ?? {};
    // Clients with client_svcavatar compute provider avatars of users whose email they see.
    const computable = subject.avatar_source === 'G' && canSeeDeliveryEmail(viewer, subject);
    emit(realmId, { type: 'realm_user', op: 'add', person }, [viewer.id], computable ? { hidden: { avatar_nullable_for: 'all' } } : {});
  }
}
