// Muting users (digest section 3 `muted_users`): the list is the muter's own.
// Muting marks the muted user's messages read for the muter at once, and
// messages/send/send.ts keeps new ones arriving read (mutersAmong).

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { type ActionContext, transactAs } from '../db/transact.ts';
import { badRequest } from '../http/errors.ts';
import { accessUser } from '../users/queries.ts';
import { FLAG_BITS } from '../messages/flags/flags.ts';
import { flagEvent } from '../messages/flags/flag-actions.ts';
import { mutedUsers } from './queries.ts';
import type { MutedUserEntry } from './queries.ts';

export interface MutedUsersEvent {
  type: 'muted_users';
  muted_users: MutedUserEntry[];
}

/** Bots, deactivated users and the system bots can be muted, as in the reference. */
const MUTABLE = { allowBots: true, allowDeactivated: true, allowSystemBots: true } as const;

/** The actor's whole list, to the actor. */
async function emitMutedUsers(ctx: ActionContext<unknown, User>): Promise<void> {
  const { tx, emit, realm, actor } = ctx;
  emit(realm.id, { type: 'muted_users', muted_users: await mutedUsers(tx, actor.id) }, [actor.id]);
}

/** The muter's (the actor's) unread copies of the muted user's messages become read. */
async function markReadFrom(ctx: ActionContext<unknown, User>, senderId: number): Promise<void> {
  const { tx, emit, realm, actor: user } = ctx;
  const read = FLAG_BITS.read;
  const rows = await tx
    .updateTable('user_messages')
    .set((eb) => ({ flags: eb('flags', '|', read) }))
    .where('user_id', '=', user.id)
    .where((eb) => eb(eb('flags', '&', read), '=', 0))
    .where('message_id', 'in', (eb) => eb.selectFrom('messages').select('id').where('realm_id', '=', realm.id).where('sender_id', '=', senderId))
    .returning('message_id')
    .execute();
  if (rows.length === 0) return;
  const ids = rows.map((r) => r.message_id).sort((a, b) => a - b);
  emit(realm.id, flagEvent({ flag: 'read', op: 'add' }, ids), [user.id]);
}

/** POST /users/me/muted_users/{id}. */
export async function muteUser(svc: Services, realm: Realm, actor: User, mutedUserId: number): Promise<void> {
  if (actor.id === mutedUserId) throw badRequest('Cannot mute self');
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const target = await accessUser(svc, tx, realm, actor, mutedUserId, MUTABLE);
    // Two identical requests at once: the later one finds the row and answers as after the first.
    const inserted = await tx
      .insertInto('muted_users')
      .values({ realm_id: realm.id, user_id: actor.id, muted_user_id: target.id, date_muted: new Date() })
      .onConflict((oc) => oc.columns(['user_id', 'muted_user_id']).doNothing())
      .returning('muted_user_id')
      .executeTakeFirst();
    if (!inserted) throw badRequest('User already muted');
    await markReadFrom(ctx, target.id);
    await emitMutedUsers(ctx);
  });
}

/** DELETE /users/me/muted_users/{id}: messages marked read stay read. */
export async function unmuteUser(svc: Services, realm: Realm, actor: User, mutedUserId: number): Promise<void> {
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const target = await accessUser(svc, tx, realm, actor, mutedUserId, MUTABLE);
    const deleted = await tx
      .deleteFrom('muted_users')
      .where('user_id', '=', actor.id)
      .where('muted_user_id', '=', target.id)
      .returning('muted_user_id')
      .executeTakeFirst();
    if (!deleted) throw badRequest('User is not muted');
    await emitMutedUsers(ctx);
  });
}
