// Sending what an integration made of a request, as the bot whose key it came with.

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { transactAs } from '../db/transact.ts';
import { sendWithin } from '../messages/send/send.ts';
import type { WebhookMessage } from './payload.ts';
import type { Integration } from './index.ts';

/** All of a request's messages, in one transaction: a refused one sends none. */
export async function postWebhookMessages(
  svc: Services,
  realm: Realm,
  bot: User,
  integration: Integration,
  stream: string | undefined,
  messages: WebhookMessage[],
): Promise<void> {
  if (messages.length === 0) return;
  const clientName = `Zulip${integration.displayName}Webhook`;
  await transactAs(svc, realm, bot, async (ctx) => {
    for (const m of messages) {
      if (stream === undefined) {
        // No channel: the bot tells its owner.
        await sendWithin(ctx, {
          type: 'private',
          to: JSON.stringify([bot.bot_owner_id ?? bot.id]),
          topic: undefined,
          content: m.content,
          clientName,
        });
      } else {
        const to = /^\d+$/.test(stream) ? stream : JSON.stringify(stream);
        await sendWithin(ctx, { type: 'stream', to, topic: m.topic, content: m.content, clientName });
      }
    }
  });
}
