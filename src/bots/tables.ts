import type { Generated, Selectable } from 'kysely';

/** An outgoing-webhook bot's endpoint (the reference's Service). */
export interface BotServiceTable {
  id: Generated<number>;
  realm_id: number;
  bot_id: number;
  name: string;
  base_url: string;
  /** INTERFACE.GENERIC or INTERFACE.SLACK. */
  interface: number;
  token: string;
}

/** An incoming-webhook bot's configuration values. */
export interface BotConfigTable {
  realm_id: number;
  bot_id: number;
  key: string;
  value: string;
}

export interface BotTables {
  bot_services: BotServiceTable;
  bot_config: BotConfigTable;
}

export type BotService = Selectable<BotServiceTable>;

/** The reference's bot_type numbers. */
export const BOT_TYPE = { GENERIC: 1, INCOMING_WEBHOOK: 2, OUTGOING_WEBHOOK: 3, EMBEDDED: 4 } as const;

/** Formats an outgoing webhook posts in. */
export const INTERFACE = { GENERIC: 1, SLACK: 2 } as const;
