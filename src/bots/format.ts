// The Bot object of realm_bots and realm_bot events (the reference's bot dict):
// what those who administer a bot see of it, API key included.

import type { Executor } from '../db/schema.ts';
import type { User } from '../users/tables.ts';
import type { BotService } from './tables.ts';
import { avatarUrl } from '../users/format.ts';

export interface ApiBot {
  email: string;
  user_id: number;
  full_name: string;
  bot_type: number | null;
  is_active: boolean;
  api_key: string;
  default_sending_stream: string | null;
  default_events_register_stream: string | null;
  default_all_public_streams: boolean;
  avatar_url: string;
  owner_id: number | null;
  services: Record<string, unknown>[];
}

/** `services`: an outgoing webhook's endpoint; nothing for other bots. */
export function serviceDicts(service: BotService | undefined): Record<string, unknown>[] {
  return service ? [{ base_url: service.base_url, interface: service.interface, token: service.token }] : [];
}

/** Bot objects for these bots, with their services and default channels read in one go. */
export async function formatBots(db: Executor, bots: User[]): Promise<ApiBot[]> {
  if (bots.length === 0) return [];
  const ids = bots.map((b) => b.id);
  const channelIds = [
    ...new Set(bots.flatMap((b) => [b.default_sending_stream_id, b.default_events_register_stream_id]).filter((id): id is number => id !== null)),
  ];
  const [services, channels] = await Promise.all([
    db.selectFrom('bot_services').selectAll().where('bot_id', 'in', ids).execute(),
    channelIds.length > 0 ? db.selectFrom('channels').select(['id', 'name']).where('id', 'in', channelIds).execute() : [],
  ]);
  const nameOf = (id: number | null) => (id === null ? null : (channels.find((c) => c.id === id)?.name ?? null));
  return bots.map((bot) => ({
    email: bot.email,
    user_id: bot.id,
    full_name: bot.full_name,
    bot_type: bot.bot_type,
    is_active: bot.is_active,
    api_key: bot.api_key,
    default_sending_stream: nameOf(bot.default_sending_stream_id),
    default_events_register_stream: nameOf(bot.default_events_register_stream_id),
    default_all_public_streams: bot.default_all_public_streams,
    avatar_url: avatarUrl(bot),
    owner_id: bot.bot_owner_id,
    services: serviceDicts(services.find((s) => s.bot_id === bot.id)),
  }));
}
