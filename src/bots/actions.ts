// Creating and changing bots (the reference's add_bot_backend, patch_bot_backend,
// regenerate_bot_api_key). A bot is a user row (is_bot, bot_type, bot_owner_id):
// it is announced like any user (`realm_user`), and those who administer it
// (its owner and the administrators) also get `realm_bot` events, API key included.

import type { Hooked, Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import type { Channel } from '../channels/tables.ts';
import { type ActionContext, transactAs, type Tx } from '../db/transact.ts';
import { ApiError, badRequest, insufficientPermission } from '../http/errors.ts';
import { newApiKey } from '../auth/passwords.ts';
import { announceNewUser, changeRole, insertUser, notifyUsers, setActive } from '../users/actions.ts';
import { checkFullName, isValidEmail } from '../users/validation.ts';
import { emailInUse, getUser } from '../users/queries.ts';
import { ROLE, type Role } from '../users/roles.ts';
import { realmHost } from '../realm/queries.ts';
import { channelViewer, holdsRealmPermission } from '../channels/access.ts';
import { accessChannelByName } from '../channels/queries.ts';
import { BOT_TYPE, INTERFACE } from './tables.ts';
import { accessBot, botAdministrators } from './queries.ts';
import { formatBots, serviceDicts } from './format.ts';
import { requireAdmin, requireOwnerForOwnerRole } from '../users/access.ts';
import type { ApiBot } from './format.ts';

/** To those who administer the bot: the whole bot (add), what changed (update), or its id. */
export interface RealmBotEvent {
  type: 'realm_bot';
  op: 'add' | 'update' | 'delete';
  bot: Partial<ApiBot> & { user_id: number };
}

export interface NewBot {
  full_name: string;
  short_name: string;
  bot_type: number;
  payload_url: string;
  service_name: string | undefined;
  config_data: Record<string, string>;
  interface_type: number;
  default_sending_stream: string | undefined;
  default_events_register_stream: string | undefined;
  default_all_public_streams: boolean | undefined;
}

/** The bot types the user may create (can_create_bots_group, can_create_write_only_bots_group). */
async function allowedBotTypes(svc: Services, realm: Realm, user: User): Promise<number[]> {
  const viewer = await channelViewer(svc.db, realm, user);
  if (holdsRealmPermission(viewer, 'can_create_bots_group')) return [BOT_TYPE.GENERIC, BOT_TYPE.INCOMING_WEBHOOK, BOT_TYPE.OUTGOING_WEBHOOK];
  if (holdsRealmPermission(viewer, 'can_create_write_only_bots_group')) return [BOT_TYPE.INCOMING_WEBHOOK];
  return [];
}

function checkInterface(value: number): void {
  if (value !== INTERFACE.GENERIC && value !== INTERFACE.SLACK) throw badRequest('Invalid interface type');
}

/** A name no active user has (the reference's check_bot_name_available). */
async function checkBotNameAvailable(tx: Tx, realmId: number, fullName: string, exceptId?: number): Promise<void> {
  let q = tx.selectFrom('users').select('id').where('realm_id', '=', realmId).where('is_active', '=', true).where('full_name', '=', fullName);
  if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
  if (await q.executeTakeFirst()) throw badRequest('Name is already in use!');
}

/** A default channel by name: one the actor may see ("" clears it, for PATCH). */
async function defaultChannel(tx: Tx, realm: Realm, actor: User, name: string | undefined): Promise<Channel | null | undefined> {
  if (name === undefined) return undefined;
  if (name === '') return null;
  return accessChannelByName(tx, await channelViewer(tx, realm, actor), name);
}

/** Sends a `realm_bot` event to those who administer the bot. */
async function emitBotEvent(
  ctx: ActionContext<unknown>,
  bot: User,
  op: 'add' | 'update' | 'delete',
  data: Record<string, unknown>,
  to?: number[],
): Promise<void> {
  const { tx, emit, realm } = ctx;
  emit(realm.id, { type: 'realm_bot', op, bot: { user_id: bot.id, ...data } }, to ?? (await botAdministrators(tx, realm.id, bot)));
}

/** POST /bots. */
export async function createBot(svc: Services, realm: Realm, actor: User, b: NewBot): Promise<{ bot: User }> {
  const shortName = b.short_name.trim();
  if (shortName === '') throw badRequest('Bad name or username');
  const fullName = checkFullName(b.full_name);
  const email = `${shortName}-bot@${realmHost(realm, svc.config)}`;
  if (!isValidEmail(email)) throw badRequest('Bad name or username');
  if (b.bot_type === BOT_TYPE.EMBEDDED) throw badRequest('Embedded bots are not enabled.');
  const allowed = await allowedBotTypes(svc, realm, actor);
  if (allowed.length === 0) throw insufficientPermission();
  if (!allowed.includes(b.bot_type)) throw badRequest('Invalid bot type');
  checkInterface(b.interface_type);
  if (b.bot_type === BOT_TYPE.OUTGOING_WEBHOOK) checkPayloadUrl(b.payload_url);
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx, emit } = ctx;
    if (await emailInUse(tx, realm.id, email)) throw badRequest('Username already in use');
    await checkBotNameAvailable(tx, realm.id, fullName);
    const sending = await defaultChannel(tx, realm, actor, b.default_sending_stream);
    const register = await defaultChannel(tx, realm, actor, b.default_events_register_stream);
    const inserted = await insertUser(tx, svc, realm, {
      email,
      fullName,
      passwordHash: null,
      role: ROLE.MEMBER,
      isBot: true,
      botType: b.bot_type,
      botOwnerId: actor.id,
    }).catch((err: unknown) => {
      throw err instanceof ApiError ? badRequest('Username already in use') : err;
    });
    const bot = await tx
      .updateTable('users')
      .set({
        default_sending_stream_id: sending?.id ?? null,
        default_events_register_stream_id: register?.id ?? null,
        default_all_public_streams: b.default_all_public_streams ?? false,
      })
      .where('id', '=', inserted.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (b.bot_type === BOT_TYPE.OUTGOING_WEBHOOK) {
      await tx
        .insertInto('bot_services')
        .values({
          realm_id: realm.id,
          bot_id: bot.id,
          name: b.service_name || shortName,
          base_url: b.payload_url,
          interface: b.interface_type,
          token: newApiKey(),
        })
        .execute();
    }
    if (b.bot_type === BOT_TYPE.INCOMING_WEBHOOK) {
      const config = { ...b.config_data, ...(b.service_name ? { integration_id: b.service_name } : {}) };
      const rows = Object.entries(config).map(([key, value]) => ({ realm_id: realm.id, bot_id: bot.id, key, value }));
      if (rows.length > 0) await tx.insertInto('bot_config').values(rows).execute();
    }
    await announceNewUser(ctx, bot);
    const [dict] = await formatBots(tx, [bot]);
    emit(realm.id, { type: 'realm_bot', op: 'add', bot: dict }, await botAdministrators(tx, realm.id, bot));
    return { bot };
  });
}

/** An outgoing webhook's URL: absolute http(s) (the reference's check_url). */
function checkPayloadUrl(url: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) throw badRequest('payload_url is not a URL');
}

export interface BotChanges {
  full_name?: string;
  role?: number;
  bot_owner_id?: number;
  default_sending_stream?: string;
  default_events_register_stream?: string;
  default_all_public_streams?: boolean;
  service_payload_url?: string;
  service_interface: number;
  config_data?: Record<string, string>;
}

/** PATCH /bots/{bot_id}: each change its events, all in one transaction. */
export async function updateBot(svc: Services, realm: Realm, actor: User, botId: number, c: BotChanges): Promise<User> {
  if (c.service_payload_url !== undefined) {
    checkPayloadUrl(c.service_payload_url);
    checkInterface(c.service_interface);
  }
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    let bot = await accessBot(tx, realm, actor, botId);
    const refresh = async () => (bot = (await getUser(tx, realm.id, bot.id))!);
    if (c.full_name !== undefined && c.full_name.trim() !== bot.full_name) {
      const name = checkFullName(c.full_name);
      await checkBotNameAvailable(tx, realm.id, name, bot.id);
      await tx.updateTable('users').set({ full_name: name }).where('id', '=', bot.id).execute();
      await refresh();
      await notifyUsers(ctx, bot, 'update', () => ({ user_id: bot.id, full_name: name }));
      await emitBotEvent(ctx, bot, 'update', { full_name: name });
    }
    if (c.role !== undefined && c.role !== bot.role) {
      requireOwnerForOwnerRole(actor, c.role, bot.role);
      requireAdmin(actor);
      await changeRole(ctx, bot, c.role as Role);
      await refresh();
    }
    if (c.bot_owner_id !== undefined && c.bot_owner_id !== bot.bot_owner_id) bot = await changeOwner(ctx, bot, c.bot_owner_id);
    for (const key of ['default_sending_stream', 'default_events_register_stream'] as const) {
      const channel = await defaultChannel(tx, realm, actor, c[key]);
      if (channel === undefined) continue;
      await tx
        .updateTable('users')
        .set({ [`${key}_id`]: channel?.id ?? null })
        .where('id', '=', bot.id)
        .execute();
      await emitBotEvent(ctx, bot, 'update', { [key]: channel?.name ?? null });
    }
    if (c.default_all_public_streams !== undefined) {
      await tx.updateTable('users').set({ default_all_public_streams: c.default_all_public_streams }).where('id', '=', bot.id).execute();
      await emitBotEvent(ctx, bot, 'update', { default_all_public_streams: c.default_all_public_streams });
    }
    if (c.service_payload_url !== undefined) {
      const updated = await tx
        .updateTable('bot_services')
        .set({ base_url: c.service_payload_url, interface: c.service_interface })
        .where('bot_id', '=', bot.id)
        .returningAll()
        .executeTakeFirst();
      if (updated) await emitBotEvent(ctx, bot, 'update', { services: serviceDicts(updated) });
    }
    if (c.config_data !== undefined) await updateConfig(tx, realm, bot, c.config_data);
    return refresh();
  });
}

/** The reference's do_update_bot_config_data: keys given are set, others kept. */
async function updateConfig(tx: Tx, realm: Realm, bot: User, config: Record<string, string>): Promise<void> {
  for (const [key, value] of Object.entries(config)) {
    await tx
      .insertInto('bot_config')
      .values({ realm_id: realm.id, bot_id: bot.id, key, value })
      .onConflict((oc) => oc.columns(['bot_id', 'key']).doUpdateSet({ value }))
      .execute();
  }
}

/** A new owner: everyone learns bot_owner_id; the old owner stops administering it, the new one starts. */
async function changeOwner(ctx: ActionContext<Hooked>, bot: User, ownerId: number): Promise<User> {
  const { tx, emit, realm } = ctx;
  const owner = await getUser(tx, realm.id, ownerId);
  if (!owner || owner.is_system_bot) throw badRequest('Failed to change owner, no such user');
  if (!owner.is_active) throw badRequest('Failed to change owner, user is deactivated');
  if (owner.is_bot) throw badRequest("Failed to change owner, bots can't own other bots");
  const before = await botAdministrators(tx, realm.id, bot);
  const updated = await tx.updateTable('users').set({ bot_owner_id: owner.id }).where('id', '=', bot.id).returningAll().executeTakeFirstOrThrow();
  const after = await botAdministrators(tx, realm.id, updated);
  await notifyUsers(ctx, updated, 'update', () => ({ user_id: bot.id, bot_owner_id: owner.id }));
  const gone = before.filter((id) => !after.includes(id));
  const arrived = after.filter((id) => !before.includes(id));
  const staying = after.filter((id) => before.includes(id));
  if (staying.length > 0) await emitBotEvent(ctx, updated, 'update', { owner_id: owner.id }, staying);
  if (gone.length > 0) await emitBotEvent(ctx, updated, 'delete', {}, gone);
  if (arrived.length > 0) emit(realm.id, { type: 'realm_bot', op: 'add', bot: (await formatBots(tx, [updated]))[0] }, arrived);
  return updated;
}

/** POST /bots/{bot_id}/api_key/regenerate: the old key stops working at once (the credential cache hears the event). */
export async function regenerateBotApiKey(svc: Services, realm: Realm, actor: User, botId: number): Promise<string> {
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const bot = await accessBot(tx, realm, actor, botId);
    const apiKey = newApiKey();
    await tx.updateTable('users').set({ api_key: apiKey }).where('id', '=', bot.id).execute();
    await emitBotEvent(ctx, bot, 'update', { api_key: apiKey });
    return apiKey;
  });
}

/** realm_bot facets of a bot's (de)activation (users/actions.ts calls it through wiring.ts). */
export async function announceBotActivity(ctx: ActionContext<unknown>, user: User): Promise<void> {
  if (!user.is_bot || user.is_system_bot) return;
  await emitBotEvent(ctx, user, 'update', { is_active: user.is_active });
}

/** A deactivated user's bots stop with them (the reference's do_deactivate_user). */
export async function deactivateOwnedBots(ctx: ActionContext<Services>, user: User): Promise<void> {
  if (user.is_bot) return announceBotActivity(ctx, user);
  const { tx, realm } = ctx;
  const bots = await tx
    .selectFrom('users')
    .selectAll()
    .where('realm_id', '=', realm.id)
    .where('bot_owner_id', '=', user.id)
    .where('is_active', '=', true)
    .execute();
  for (const bot of bots) await setActive({ ...ctx, actor: null }, bot, false);
}
