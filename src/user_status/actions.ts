// POST /users/me/status (digest section 3 `user_status`): the caller's status
// text and emoji, and `away`, the legacy way to turn presence sharing off
// (away = !presence_enabled, written through the settings action). Only what
// the request names changes, and only that is in the event.

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { transact } from '../db/transact.ts';
import { badRequest } from '../http/errors.ts';
import { activeUsersWhoCanSee } from '../users/queries.ts';
import { updateSettings } from '../users/settings-actions.ts';
import { checkEmoji, emojiForName, type Emoji } from '../messages/reactions/reactions.ts';

export interface UserStatusEvent {
  type: 'user_status';
  user_id: number;
  away?: boolean;
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

export interface StatusChange {
  away?: boolean;
  /** Already stripped and within 60 characters. */
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

/** The emoji a change sets: none asked, cleared (""), or one the organization offers now. */
async function resolveEmoji(svc: Services, realm: Realm, change: StatusChange): Promise<(Emoji & { emoji_name: string }) | undefined> {
  const { emoji_name: name } = change;
  if (name === undefined) {
    if (change.emoji_code || change.reaction_type) {
      throw badRequest('Client must pass emoji_name if they pass either emoji_code or reaction_type.');
    }
    return undefined;
  }
  if (name === '') return { emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji' };
  let emoji: Emoji;
  if (change.emoji_code === undefined || change.reaction_type === undefined) {
    // Simple clients give the name only; the rest comes from what the name means now.
    const named = await emojiForName(svc.db, realm.id, name);
    emoji = { emoji_code: change.emoji_code ?? named.emoji_code, reaction_type: change.reaction_type ?? named.reaction_type };
  } else {
    emoji = { emoji_code: change.emoji_code, reaction_type: change.reaction_type };
  }
  await checkEmoji(svc.db, realm.id, name, emoji);
  return { emoji_name: name, ...emoji };
}

export async function updateStatus(svc: Services, realm: Realm, actor: User, change: StatusChange, clientName: string): Promise<void> {
  if (actor.is_bot) throw badRequest('This endpoint does not accept bot requests.');
  if (change.away === undefined && change.status_text === undefined && change.emoji_name === undefined) {
    throw badRequest('Client did not pass any new values.');
  }
  const emoji = await resolveEmoji(svc, realm, change);
  // Everything is checked: `away` is the settings action's (its own events), then the status.
  if (change.away !== undefined) await updateSettings(svc, realm, actor, { settings: { presence_enabled: !change.away } });

  await transact(svc, async (tx, emit) => {
    const set = {
      ...(change.status_text !== undefined ? { status_text: change.status_text } : {}),
      ...(emoji ?? {}),
      client: clientName,
      updated_at: new Date(),
    };
    await tx
      .insertInto('user_statuses')
      .values({ user_id: actor.id, realm_id: realm.id, ...set })
      .onConflict((oc) => oc.column('user_id').doUpdateSet(set))
      .execute();
    const event: UserStatusEvent = {
      type: 'user_status',
      user_id: actor.id,
      ...(change.away !== undefined ? { away: change.away } : {}),
      ...(change.status_text !== undefined ? { status_text: change.status_text } : {}),
      ...(emoji ?? {}),
    };
    emit(realm.id, event, await activeUsersWhoCanSee(svc, tx, realm, actor));
  });
}
