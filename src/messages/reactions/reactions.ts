// Emoji reactions (spec endpoint 16 and "Reaction"; digest 1.16, section 2
// "Reactions", section 3 `reaction`): adding and removing one, the rules that
// make a name, code and type one emoji, and the `reaction` events.
//
// An emoji is a (reaction_type, emoji_code) pair; the name is how it was
// called. A reaction to an emoji someone already reacted with is a vote for
// that reaction and takes its name, whatever name the request used (so one
// message never shows the same image twice), without checking that emoji
// again: old reactions to since-deactivated custom emoji can still be joined.

import type { Services } from '../../services.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import type { Channel } from '../../channels/tables.ts';
import type { Message } from '../tables.ts';
import type { Executor } from '../../db/schema.ts';
import { transactAs, type ActionContext } from '../../db/transact.ts';
import { ApiError, badRequest } from '../../http/errors.ts';
import { EXTRA_EMOJI, emojiCodeForName, emojiNamesForCode } from '../../markdown/emoji.ts';
import { customEmojiById, customEmojiByName } from '../../custom_emoji/queries.ts';
import { channelViewer } from '../../channels/access.ts';
import { activeSubscription } from '../../channels/queries.ts';
import { userSettings } from '../../users/settings.ts';
import { messageAudience } from '../history/changes.ts';
import { HISTORICAL_BITS } from '../flags/flags.ts';
import { isStorableText } from '../../db/ids.ts';
import { setVisibilityPolicy, visibilityPolicy, VISIBILITY } from '../topics/user-topics.ts';
import { messageToChange } from '../access.ts';

export interface Emoji {
  emoji_code: string;
  reaction_type: string;
}

/** What a bare name means: an active custom emoji first, then the extra emoji, then a Unicode emoji. */
export async function emojiForName(db: Executor, realmId: number, name: string): Promise<Emoji> {
  const custom = isStorableText(name) ? await customEmojiByName(db, realmId, name) : undefined;
  if (custom) return { emoji_code: String(custom.id), reaction_type: 'realm_emoji' };
  if (name === EXTRA_EMOJI.name) return { emoji_code: EXTRA_EMOJI.code, reaction_type: 'svc_extra_emoji' };
  const code = emojiCodeForName(name);
  if (code !== undefined) return { emoji_code: code, reaction_type: 'unicode_emoji' };
  throw badRequest(`Emoji '${name}' does not exist`);
}

/** A new reaction's name, code and type must be one emoji the organization offers now. */
export async function checkEmoji(db: Executor, realmId: number, name: string, emoji: Emoji): Promise<void> {
  switch (emoji.reaction_type) {
    case 'realm_emoji': {
      const id = /^\d{1,9}$/.test(emoji.emoji_code) ? Number(emoji.emoji_code) : undefined;
      const custom = id === undefined ? undefined : await customEmojiById(db, realmId, id, { includeDeactivated: true });
      if (!custom) throw badRequest('Invalid custom emoji.');
      if (custom.name !== name) throw badRequest('Invalid custom emoji name.');
      if (custom.deactivated) throw badRequest('This custom emoji has been deactivated.');
      return;
    }
    case 'svc_extra_emoji':
      if (emoji.emoji_code !== EXTRA_EMOJI.code) throw badRequest('Invalid emoji code.');
      if (name !== EXTRA_EMOJI.name) throw badRequest('Invalid emoji name.');
      return;
    case 'unicode_emoji':
      if (emojiNamesForCode(emoji.emoji_code).length === 0) throw badRequest('Invalid emoji code.');
      if (emojiCodeForName(name) !== emoji.emoji_code) throw badRequest('Invalid emoji name.');
      return;
    default:
      throw badRequest('Invalid emoji type.');
  }
}

interface Target {
  message: Message;
  channel: Channel | undefined;
  /** The user's flags on it; undefined when they have no copy (public history). */
  flags: number | undefined;
}

/** A message the user may react to (see messageToChange), with the user's flags on it. */
async function accessForReaction(ctx: ActionContext<unknown, User>, messageId: number): Promise<Target> {
  const { tx, realm, actor: user } = ctx;
  const { message, channel } = await messageToChange(tx, await channelViewer(tx, realm, user), messageId);
  const copy = await tx.selectFrom('user_messages').select('flags').where('user_id', '=', user.id).where('message_id', '=', message.id).executeTakeFirst();
  return { message, channel: channel ?? undefined, flags: copy?.flags };
}

async function emitReaction(ctx: ActionContext<unknown, User>, target: Target, op: 'add' | 'remove', reaction: Emoji & { emoji_name: string }) {
  const { tx, emit, realm, actor: user } = ctx;
  emit(
    realm.id,
    {
      type: 'reaction',
      op,
      message_id: target.message.id,
      user_id: user.id,
      // Deprecated, kept by the reference server for older mobile clients (OpenAPI EmojiReactionEvent).
      user: { user_id: user.id, email: user.email, full_name: user.full_name },
      emoji_name: reaction.emoji_name,
      emoji_code: reaction.emoji_code,
      reaction_type: reaction.reaction_type,
    },
    [...(await messageAudience(tx, [target.message.id], target.channel ?? null))],
    { publicChannel: target.channel !== undefined && !target.channel.invite_only },
  );
}

/** The users' "automatically_*_policy" value that reacting triggers (taking part in a topic). */
const ON_PARTICIPATION = 1;

/** Reacting in a channel topic is taking part in it: follow or unmute it if the user asked for that. */
async function applyParticipationPolicy(ctx: ActionContext<unknown, User>, target: Target): Promise<void> {
  const { tx, actor: user } = ctx;
  const { message, channel } = target;
  if (!channel || user.is_bot) return;
  const sub = await activeSubscription(tx, user.id, channel.id);
  if (!sub) return;
  const s = userSettings(user);
  const policy =
    s.automatically_follow_topics_policy === ON_PARTICIPATION
      ? VISIBILITY.FOLLOWED
      : sub.is_muted && s.automatically_unmute_topics_in_muted_streams_policy === ON_PARTICIPATION
        ? VISIBILITY.UNMUTED
        : undefined;
  if (policy === undefined) return;
  const current = await visibilityPolicy(tx, user.id, channel.id, message.topic);
  // These policies only ever raise a topic's visibility.
  if (current === policy || current === VISIBILITY.FOLLOWED) return;
  await setVisibilityPolicy(ctx, { userId: user.id, channelId: channel.id, topic: message.topic, policy });
}

export interface AddReactionRequest {
  emoji_name: string;
  emoji_code?: string;
  reaction_type?: string;
}

/** POST /messages/{id}/reactions. */
export async function addReaction(svc: Services, realm: Realm, user: User, messageId: number, req: AddReactionRequest): Promise<void> {
  await transactAs(svc, realm, user, async (ctx) => {
    const { tx } = ctx;
    const target = await accessForReaction(ctx, messageId);
    let emoji: Emoji;
    if (req.emoji_code === undefined || req.reaction_type === undefined) {
      // Simple clients give only the name; what is missing comes from what the name means now.
      const named = await emojiForName(tx, realm.id, req.emoji_name);
      emoji = { emoji_code: req.emoji_code ?? named.emoji_code, reaction_type: req.reaction_type ?? named.reaction_type };
    } else {
      emoji = { emoji_code: req.emoji_code, reaction_type: req.reaction_type };
    }
    // Text PostgreSQL cannot hold matches no reaction (and checkEmoji refuses it).
    const same =
      !isStorableText(emoji.emoji_code) || !isStorableText(emoji.reaction_type)
        ? []
        : await tx
            .selectFrom('reactions')
            .select(['user_id', 'emoji_name'])
            .where('message_id', '=', messageId)
            .where('reaction_type', '=', emoji.reaction_type)
            .where('emoji_code', '=', emoji.emoji_code)
            .orderBy('created_at')
            .execute();
    if (same.some((r) => r.user_id === user.id)) throw new ApiError('REACTION_ALREADY_EXISTS', 'Reaction already exists.');
    const emojiName = same[0]?.emoji_name ?? req.emoji_name;
    if (same.length === 0) await checkEmoji(tx, realm.id, emojiName, emoji);

    if (target.flags === undefined) {
      // Reacting to public history gives the user a copy, so that they hear of its changes (digest 1.27).
      await tx
        .insertInto('user_messages')
        .values({ realm_id: realm.id, user_id: user.id, message_id: messageId, flags: HISTORICAL_BITS })
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    await tx
      .insertInto('reactions')
      .values({ realm_id: realm.id, message_id: messageId, user_id: user.id, emoji_name: emojiName, ...emoji })
      .execute();
    await applyParticipationPolicy(ctx, target);
    await emitReaction(ctx, target, 'add', { emoji_name: emojiName, ...emoji });
  });
}

export interface RemoveReactionRequest {
  emoji_name?: string;
  emoji_code?: string;
  reaction_type: string;
}

/**
 * DELETE /messages/{id}/reactions. The emoji is not checked again: the
 * reaction was valid when added and may be removed even if its emoji is gone.
 */
export async function removeReaction(svc: Services, realm: Realm, user: User, messageId: number, req: RemoveReactionRequest): Promise<void> {
  await transactAs(svc, realm, user, async (ctx) => {
    const { tx } = ctx;
    const target = await accessForReaction(ctx, messageId);
    let code = req.emoji_code;
    if (code === undefined) {
      if (req.emoji_name === undefined) throw badRequest('At least one of the following arguments must be present: emoji_name, emoji_code');
      code = (await emojiForName(tx, realm.id, req.emoji_name)).emoji_code;
    }
    // Text PostgreSQL cannot hold names no reaction.
    const removed =
      !isStorableText(code) || !isStorableText(req.reaction_type)
        ? undefined
        : await tx
            .deleteFrom('reactions')
            .where('message_id', '=', messageId)
            .where('user_id', '=', user.id)
            .where('reaction_type', '=', req.reaction_type)
            .where('emoji_code', '=', code)
            .returning(['emoji_name', 'emoji_code', 'reaction_type'])
            .executeTakeFirst();
    if (!removed) throw new ApiError('REACTION_DOES_NOT_EXIST', "Reaction doesn't exist.");
    await emitReaction(ctx, target, 'remove', removed);
  });
}
