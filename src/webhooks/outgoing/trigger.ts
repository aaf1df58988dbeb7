// Which sends wake an outgoing-webhook bot (the reference's get_service_bot_events):
// a channel message that mentions it by name, or a direct message it receives.
// Messages from bots never do (no loops between bots). Each wake-up is a job,
// inserted in the send's transaction: it exists exactly when the message does.

import type { Tx } from '../../db/transact.ts';
import type { SentMessage } from '../../messages/send/send.ts';
import { enqueueJob } from '../../jobs/worker.ts';
import { BOT_TYPE } from '../../bots/tables.ts';

export const OUTGOING_WEBHOOK_JOB = 'outgoing_webhook';

export type Trigger = 'mention' | 'direct_message';

export interface OutgoingWebhookJob extends Record<string, unknown> {
  bot_id: number;
  message_id: number;
  trigger: Trigger;
}

export async function queueOutgoingWebhooks(tx: Tx, sent: SentMessage): Promise<void> {
  if (sent.sender.is_bot) return;
  const candidates = sent.channel ? [...sent.mentionedUserIds] : sent.participants.map((u) => u.id);
  const others = candidates.filter((id) => id !== sent.sender.id);
  if (others.length === 0) return;
  const bots = await tx
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', sent.realm.id)
    .where('id', 'in', others)
    .where('bot_type', '=', BOT_TYPE.OUTGOING_WEBHOOK)
    .where('is_active', '=', true)
    .execute();
  const trigger: Trigger = sent.channel ? 'mention' : 'direct_message';
  for (const bot of bots) {
    const payload: OutgoingWebhookJob = { bot_id: bot.id, message_id: sent.messageId, trigger };
    await enqueueJob(tx, { realmId: sent.realm.id, kind: OUTGOING_WEBHOOK_JOB, payload });
  }
}
