// The accounts the server itself speaks through (Notification Bot, Welcome
// Bot). The reference keeps them in an internal organization and lists them in
// register's `cross_realm_bots`; here each organization has its own rows
// (migrations 0100 and 0101), shown the same way: not
// in user lists, not in groups or channels, not administrable.

import type { Executor } from '../db/schema.ts';
import type { Tx } from '../db/transact.ts';
import type { User } from './tables.ts';
import { newApiKey } from '../auth/passwords.ts';
import { ROLE } from './roles.ts';
import { EMAIL_ADDRESS_VISIBILITY } from './settings.ts';

/** Bot type of the reference's system bots (a "generic" bot). */
const DEFAULT_BOT = 1;

export interface SystemBot {
  email: string;
  fullName: string;
}

export const NOTIFICATION_BOT: SystemBot = { email: 'notification-bot@confab.internal', fullName: 'Notification Bot' };
/** Speaks to new users (an invitation's or the organization's welcome text). Migration 0101 added it. */
export const WELCOME_BOT: SystemBot = { email: 'welcome-bot@confab.internal', fullName: 'Welcome Bot' };

const SYSTEM_BOTS = [NOTIFICATION_BOT, WELCOME_BOT];

/** A new organization's system bots. */
export async function createSystemBots(tx: Tx, realmId: number): Promise<void> {
  await tx
    .insertInto('users')
    .values(
      SYSTEM_BOTS.map((bot) => ({
        realm_id: realmId,
        email: bot.email,
        delivery_email: bot.email,
        full_name: bot.fullName,
        role: ROLE.MEMBER,
        is_bot: true,
        bot_type: DEFAULT_BOT,
        is_system_bot: true,
        api_key: newApiKey(),
        date_joined: new Date(),
        settings: JSON.stringify({ email_address_visibility: EMAIL_ADDRESS_VISIBILITY.EVERYONE }),
      })),
    )
    .execute();
}

/** One of the organization's system bots. */
export async function systemBot(db: Executor, realmId: number, bot: SystemBot): Promise<User> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('is_system_bot', '=', true)
    .where('email', '=', bot.email)
    .executeTakeFirstOrThrow();
}

/** The sender of the server's notices (new channels, moves, subscriptions by others...). */
export async function notificationBot(db: Executor, realmId: number): Promise<User> {
  return systemBot(db, realmId, NOTIFICATION_BOT);
}
