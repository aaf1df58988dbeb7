// The two formats an outgoing webhook speaks (the reference's Generic and Slack
// services): what is POSTed, and how the answer is read.

import type { Config } from '../../config.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import type { BotService } from '../../bots/tables.ts';
import type { ApiMessage } from '../../messages/format.ts';
import { realmHost } from '../../realm/queries.ts';

interface Source {
  realm: Realm;
  bot: User;
  service: BotService;
  message: ApiMessage;
  trigger: string;
}

/** Confab's own format: JSON with the whole message. */
export function genericPayload(s: Source): Record<string, unknown> {
  return {
    bot_email: s.bot.email,
    bot_full_name: s.bot.full_name,
    data: s.message.content,
    message: s.message,
    token: s.service.token,
    trigger: s.trigger,
  };
}

/** Slack's outgoing webhook fields, form-encoded (channel messages only). */
export function slackPayload(s: Source, config: Pick<Config, 'externalUrl'>): string {
  const m = s.message;
  return new URLSearchParams([
    ['token', s.service.token],
    ['team_id', `T${s.realm.id}`],
    ['team_domain', realmHost(s.realm, config)],
    ['channel_id', `C${m.stream_id}`],
    ['channel_name', String(m.display_recipient)],
    ['thread_ts', String(m.timestamp)],
    ['timestamp', String(m.timestamp)],
    ['user_id', `U${m.sender_id}`],
    ['user_name', String(m.sender_full_name)],
    ['text', String(m.content)],
    ['trigger_word', s.trigger],
    ['service_id', String(s.bot.id)],
  ]).toString();
}

/** The answer as a JSON object; "" (older bot servers' "no reply") is undefined. */
function parseAnswer(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('Invalid JSON in response');
  }
  if (value === '') return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('Invalid response format');
  return value as Record<string, unknown>;
}

/** `content` (or the older `response_string`) is posted; `response_not_required` says nothing. */
export function genericReply(text: string): string | undefined {
  const answer = parseAnswer(text);
  if (!answer || answer.response_not_required === true) return undefined;
  if (answer.response_string !== undefined) return String(answer.response_string);
  if (answer.content !== undefined) return String(answer.content);
  return undefined;
}

export function slackReply(text: string): string | undefined {
  const answer = parseAnswer(text);
  return answer?.text === undefined ? undefined : String(answer.text);
}
