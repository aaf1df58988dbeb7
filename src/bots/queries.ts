import type { Executor } from '../db/schema.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { BotService } from './tables.ts';
import { badRequest, insufficientPermission } from '../http/errors.ts';
import { getUser } from '../users/queries.ts';
import { administersBot, managesEveryones } from '../users/access.ts';

/** A bot of the organization the actor may administer (the reference's access_bot_by_id). */
export async function accessBot(db: Executor, realm: Realm, actor: User, botId: number): Promise<User> {
  const bot = await getUser(db, realm.id, botId);
  if (!bot || !bot.is_bot || bot.is_system_bot) throw badRequest('No such bot');
  if (!administersBot(actor, bot)) throw insufficientPermission();
  return bot;
}

/** The bots `viewer` administers (all the organization's, for administrators), deactivated ones included. */
export async function administeredBots(db: Executor, realmId: number, viewer: User): Promise<User[]> {
  let q = db.selectFrom('users').selectAll().where('realm_id', '=', realmId).where('is_bot', '=', true).where('is_system_bot', '=', false);
  if (!managesEveryones(viewer)) q = q.where('bot_owner_id', '=', viewer.id);
  return q.orderBy('id').execute();
}

/** Who hears of a bot's administrative changes: its active owner and the active administrators. */
export async function botAdministrators(db: Executor, realmId: number, bot: Pick<User, 'bot_owner_id'>): Promise<number[]> {
  const admins = await db
    .selectFrom('users')
    .select(['id', 'role'])
    .where('realm_id', '=', realmId)
    .where('is_active', '=', true)
    .where('is_bot', '=', false)
    .execute();
  return admins.filter((u) => administersBot(u, bot)).map((u) => u.id);
}

export async function botService(db: Executor, botId: number): Promise<BotService | undefined> {
  return db.selectFrom('bot_services').selectAll().where('bot_id', '=', botId).executeTakeFirst();
}

export async function botConfig(db: Executor, botId: number): Promise<Record<string, string>> {
  const rows = await db.selectFrom('bot_config').select(['key', 'value']).where('bot_id', '=', botId).execute();
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

/** GET /bots: the caller's own active bots, oldest first. */
export async function ownedActiveBots(db: Executor, realmId: number, ownerId: number): Promise<User[]> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('is_bot', '=', true)
    .where('is_active', '=', true)
    .where('bot_owner_id', '=', ownerId)
    .orderBy('date_joined')
    .orderBy('id')
    .execute();
}

/** A default channel's name, as the bot endpoints answer it (the reference's get_stream_name). */
export async function channelNameOf(db: Executor, id: number | null): Promise<string | null> {
  if (id === null) return null;
  return (await db.selectFrom('channels').select('name').where('id', '=', id).executeTakeFirst())?.name ?? null;
}
