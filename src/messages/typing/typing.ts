// Typing notifications (digest section 2 "Typing", 3.3 `typing` and
// `typing_edit_message`): stateless, nothing is stored. Each request becomes one
// event to the users who would receive the message being typed (or edited),
// not the typist, and only those who want typing notifications.

import { sql } from 'kysely';
import type { Services } from '../../services.ts';
import type { Executor } from '../../db/schema.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import type { ServerEvent } from '../../events/types.ts';
import { badRequest } from '../../http/errors.ts';
import { userSettings } from '../../users/settings.ts';
import { accessibleUsers, canAccess } from '../../users/queries.ts';
import { channelViewer, hasContentAccess, hasMetadataAccess } from '../../channels/access.ts';
import { getChannel } from '../../channels/queries.ts';
import { checkCanPost } from '../send/send.ts';
import { normalizeTopic } from '../validation.ts';
import { intArray } from '../state-support.ts';
import { canSee } from '../access.ts';
import type { TypingEditMessageEvent, TypingEvent } from '../events.ts';

/** Larger channels get no typing notifications (Zulip's MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS). */
export const MAX_CHANNEL_SIZE_FOR_TYPING = 100;

export type TypingOp = 'start' | 'stop';

export type TypingRequest =
  | { type: 'direct'; op: TypingOp; to: number[] | undefined }
  | { type: 'stream'; op: TypingOp; streamId: number | undefined; topic: string | undefined };

const DIRECT_DISABLED = 'User has disabled typing notifications for direct messages';
const CHANNEL_DISABLED = 'User has disabled typing notifications for channel messages';

/** Of these users, the active ones who receive typing notifications (the typist too, see below). */
async function listeners(db: Executor, realmId: number, userIds: number[], _typist: User): Promise<number[]> {
  if (userIds.length === 0) return [];
  const users = await db
    .selectFrom('users')
    .select(['id', 'settings', 'timezone'])
    .where('realm_id', '=', realmId)
    .where('id', '=', sql<number>`any(${intArray(userIds)})`)
    .where('is_active', '=', true)
    .execute();
  // The typist is told too, as the reference does (clients ignore their own typing).
  return users.filter((u) => userSettings(u).receives_typing_notifications === true).map((u) => u.id);
}

/** A channel's listeners; none at all in a channel too large for typing notifications. */
async function channelListeners(db: Executor, realmId: number, channelId: number, typist: User): Promise<number[]> {
  const subs = await db.selectFrom('subscriptions').select('user_id').where('channel_id', '=', channelId).where('active', '=', true).execute();
  const ids = subs.map((s) => s.user_id);
  const reached = await listeners(db, realmId, ids, typist);
  return reached.length > MAX_CHANNEL_SIZE_FOR_TYPING ? [] : reached;
}

// Nothing is written, so there is no transaction to wait for: the event leaves at once.
function publish(svc: Services, realm: Realm, event: ServerEvent, users: number[]): void {
  if (users.length > 0) svc.events.publish([{ realmId: realm.id, event, users }]);
}

/** POST /typing. */
export async function setTypingStatus(svc: Services, realm: Realm, sender: User, req: TypingRequest): Promise<void> {
  const settings = userSettings(sender);
  const senderRef = { user_id: sender.id, email: sender.email };
  if (req.type === 'stream') {
    if (req.streamId === undefined) throw badRequest("Missing 'stream_id' argument");
    if (req.topic === undefined) throw badRequest('Missing topic');
    if (!settings.send_stream_typing_notifications) throw badRequest(CHANNEL_DISABLED);
    const viewer = await channelViewer(svc.db, realm, sender);
    const channel = await getChannel(svc.db, realm.id, req.streamId);
    if (!channel || !hasMetadataAccess(viewer, channel)) throw badRequest('Invalid channel ID');
    checkCanPost(viewer, channel);
    const topic = normalizeTopic(req.topic);
    const event: TypingEvent = { type: 'typing', op: req.op, message_type: 'stream', sender: senderRef, stream_id: channel.id, topic };
    publish(svc, realm, event, await channelListeners(svc.db, realm.id, channel.id, sender));
    return;
  }

  if (req.to === undefined) throw badRequest("Missing 'to' argument");
  if (req.to.length === 0) throw badRequest("Empty 'to' list");
  if (!settings.send_private_typing_notifications) throw badRequest(DIRECT_DISABLED);
  const ids = [...new Set([...req.to, sender.id])];
  const users = await svc.db
    .selectFrom('users')
    .select(['id', 'email'])
    .where('realm_id', '=', realm.id)
    .where('id', '=', sql<number>`any(${intArray(ids)})`)
    .execute();
  const access = await accessibleUsers(svc, svc.db, realm, sender);
  for (const id of req.to) {
    if (!users.some((u) => u.id === id) || !canAccess(access, id)) throw badRequest(`Invalid user ID ${id}`);
  }
  // Everyone in the conversation, the typist included (clients identify the conversation by it).
  const recipients = users.sort((a, b) => a.id - b.id).map((u) => ({ user_id: u.id, email: u.email }));
  const event: TypingEvent = { type: 'typing', op: req.op, message_type: 'direct', sender: senderRef, recipients };
  publish(svc, realm, event, await listeners(svc.db, realm.id, ids, sender));
}

/** POST /messages/{message_id}/typing: someone is editing a message they may change. */
export async function setEditTypingStatus(svc: Services, realm: Realm, user: User, messageId: number, op: TypingOp): Promise<void> {
  const viewer = await channelViewer(svc.db, realm, user);
  const message = await svc.db.selectFrom('messages').selectAll().where('realm_id', '=', realm.id).where('id', '=', messageId).executeTakeFirst();
  if (!message || !(await canSee(svc.db, { realm, viewer }, message))) throw badRequest('Invalid message(s)');
  const settings = userSettings(user);
  const base = { type: 'typing_edit_message' as const, op, sender_id: user.id, message_id: message.id };
  if (message.channel_id !== null) {
    // Editing needs current access to the channel, not just an old copy of the message.
    const channel = await getChannel(svc.db, realm.id, message.channel_id);
    if (!channel || !hasContentAccess(viewer, channel)) throw badRequest('Invalid message(s)');
    if (!settings.send_stream_typing_notifications) throw badRequest(CHANNEL_DISABLED);
    const event: TypingEditMessageEvent = { ...base, recipient: { type: 'channel', channel_id: channel.id, topic: message.topic } };
    publish(svc, realm, event, await channelListeners(svc.db, realm.id, channel.id, user));
    return;
  }
  if (!settings.send_private_typing_notifications) throw badRequest(DIRECT_DISABLED);
  const holders = await svc.db.selectFrom('user_messages').select('user_id').where('message_id', '=', message.id).orderBy('user_id').execute();
  const userIds = holders.map((h) => h.user_id);
  const event: TypingEditMessageEvent = { ...base, recipient: { type: 'direct', user_ids: userIds } };
  publish(svc, realm, event, await listeners(svc.db, realm.id, userIds, user));
}
