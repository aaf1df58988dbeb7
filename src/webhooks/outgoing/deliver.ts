// Delivering an outgoing webhook (the reference's outgoing_webhook.py): POSTs
// the message to the bot's service in the chosen format, and posts what the
// service answers as the bot, where the message was. A timeout, a connection
// error or a 5xx is retried with backoff (the job table); after the last
// attempt the conversation hears "Failure! Bot is unavailable" and the bot's
// owner gets a direct message from the bot. Other failures are told at once.

import type { Services } from '../../services.ts';
import type { Executor } from '../../db/schema.ts';
import type { ActionContext } from '../../db/transact.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import type { Message } from '../../messages/tables.ts';
import type { Job } from '../../jobs/tables.ts';
import type { JobKind } from '../../jobs/worker.ts';
import type { BotService } from '../../bots/tables.ts';
import { transactAs } from '../../db/transact.ts';
import { getUser } from '../../users/queries.ts';
import { formatMessages, type ApiMessage } from '../../messages/format.ts';
import { sendWithin } from '../../messages/send/send.ts';
import { botService } from '../../bots/queries.ts';
import { outboundRequest, OutboundError, type OutboundResponse } from '../../net/outbound.ts';
import { realmUrl } from '../../realm/queries.ts';
import { messagePath } from '../../notification_bot/index.ts';
import { genericPayload, genericReply, slackPayload, slackReply } from './formats.ts';
import { INTERFACE } from '../../bots/tables.ts';
import type { OutgoingWebhookJob } from './trigger.ts';

/** Attempts in all: the reference retries a failed request three times. */
const MAX_ATTEMPTS = 4;

interface Delivery {
  realm: Realm;
  bot: User;
  service: BotService;
  row: Message;
  message: ApiMessage;
  trigger: string;
}

/** What a delivery needs, or undefined when there is nothing left to do (bot gone, message deleted). */
async function load(db: Executor, job: Job): Promise<Delivery | undefined> {
  const { bot_id, message_id, trigger } = job.payload as OutgoingWebhookJob;
  const realm = await db.selectFrom('realms').selectAll().where('id', '=', job.realm_id!).executeTakeFirst();
  if (!realm || realm.deactivated) return undefined;
  const [bot, service, row] = await Promise.all([
    getUser(db, realm.id, bot_id),
    botService(db, bot_id),
    db.selectFrom('messages').selectAll().where('realm_id', '=', realm.id).where('id', '=', message_id).executeTakeFirst(),
  ]);
  if (!bot?.is_active || !service || !row) return undefined;
  const [message] = await formatMessages(db, realm, [row], { viewer: bot, applyMarkdown: false, clientSvcavatar: false, allowEmptyTopicName: true });
  return { realm, bot, service, row, message: { ...message, rendered_content: row.rendered_content }, trigger };
}

/** Posts `content` as the bot where the message was (the reference's send_response_message). */
async function reply(ctx: ActionContext, d: Delivery, content: string): Promise<void> {
  const { svc } = ctx;
  const { message } = d;
  const to =
    message.type === 'stream'
      ? JSON.stringify(message.stream_id)
      : JSON.stringify((message.display_recipient as { id: number }[]).map((u) => u.id).filter((id) => id !== d.bot.id));
  try {
    await sendWithin({ ...ctx, realm: d.realm, actor: d.bot }, { type: message.type, to, topic: d.row.topic, content, clientName: 'OutgoingWebhookResponse' });
  } catch (err) {
    // The bot may not post there (any more): the answer is dropped, as the reference drops it.
    svc.log.info({ err, botId: d.bot.id }, 'outgoing webhook reply not sent');
  }
}

function messageUrl(svc: Services, d: Delivery): string {
  const base = realmUrl(d.realm, svc.config);
  if (d.message.type === 'stream')
    return `${base}/${messagePath({ id: d.row.channel_id!, name: d.message.display_recipient as string }, d.row.topic, d.row.id)}`;
  const ids = (d.message.display_recipient as { id: number }[]).map((u) => u.id).join(',');
  return `${base}/#narrow/dm/${ids}-dm/near/${d.row.id}`;
}

/** The bot tells its owner that a message to it could not be answered (the reference's notify_bot_owner). */
async function notifyOwner(ctx: ActionContext, d: Delivery, detail: string): Promise<void> {
  const { svc, tx } = ctx;
  if (d.bot.bot_owner_id === null) return;
  const owner = await getUser(tx, d.realm.id, d.bot.bot_owner_id);
  if (!owner?.is_active) return;
  const content = `[A message](${messageUrl(svc, d)}) to your bot @_**${d.bot.full_name}** triggered an outgoing webhook.\n${detail}`;
  try {
    await sendWithin(
      { ...ctx, realm: d.realm, actor: d.bot },
      {
        type: 'private',
        to: JSON.stringify([owner.id]),
        topic: undefined,
        content,
        clientName: 'OutgoingWebhookResponse',
      },
    );
  } catch (err) {
    svc.log.warn({ err, botId: d.bot.id }, 'could not tell a bot owner of a failed outgoing webhook');
  }
}

/** "Failure! ..." where the message was, and the owner told: in one transaction. */
async function fail(svc: Services, d: Delivery, failure: string, ownerDetail: string): Promise<void> {
  await transactAs(svc, d.realm, d.bot, async (ctx) => {
    await reply(ctx, d, `Failure! ${failure}`);
    await notifyOwner(ctx, d, ownerDetail);
  });
}

const fence = (text: string) => `\`\`\`\n${text}\n\`\`\``;

/** The request for the bot's format; a string when the format cannot carry this message. */
function buildRequest(svc: Services, d: Delivery): { body: string; contentType: string } | string {
  if (d.service.interface === INTERFACE.SLACK) {
    if (d.message.type === 'private') return "Slack outgoing webhooks don't support direct messages.";
    return { body: slackPayload(d, svc.config), contentType: 'application/x-www-form-urlencoded' };
  }
  return { body: JSON.stringify(genericPayload(d)), contentType: 'application/json' };
}

async function handleResponse(svc: Services, d: Delivery, res: OutboundResponse): Promise<void> {
  if (res.status >= 500) throw new Error(`Third party responded with ${res.status}`);
  const text = res.body.toString('utf8');
  if (res.status < 200 || res.status >= 300) {
    const failure = `Third party responded with ${res.status}`;
    await fail(svc, d, failure, `The webhook got a response with status code *${res.status}*.\nThe response contains the following payload:\n${fence(text)}`);
    return;
  }
  let content: string | undefined;
  try {
    content = (d.service.interface === INTERFACE.SLACK ? slackReply : genericReply)(text);
  } catch (err) {
    const failure = (err as Error).message;
    await fail(svc, d, failure, failure);
    return;
  }
  if (content === undefined || content.trim() === '') return;
  await transactAs(svc, d.realm, d.bot, (ctx) => reply(ctx, d, content));
}

async function run(svc: Services, job: Job): Promise<void> {
  const d = await load(svc.db, job);
  if (!d) return;
  const request = buildRequest(svc, d);
  if (typeof request === 'string') return fail(svc, d, request, request);
  let res: OutboundResponse;
  try {
    res = await outboundRequest(
      {
        url: d.service.base_url,
        method: 'POST',
        headers: { 'content-type': request.contentType },
        body: request.body,
        timeoutMs: svc.config.outgoingWebhookTimeoutMs,
      },
      { allowPrivate: svc.config.allowPrivateUrls },
    );
  } catch (err) {
    if (!(err instanceof OutboundError)) throw err;
    // Worth another try: the service may be back soon.
    if (err.kind === 'timeout') throw new Error(err.message);
    if (err.kind === 'network') {
      svc.log.info({ err, botId: d.bot.id }, 'outgoing webhook connection error');
      throw new Error(
        `The message \`${d.row.content}\` resulted in a connection error when sending a request to an outgoing webhook! See the Confab server logs for more information.`,
      );
    }
    if (err.kind === 'refused_address') {
      const failure = 'The URL configured for the webhook is for a private or disallowed network.';
      return fail(svc, d, failure, failure);
    }
    return fail(
      svc,
      d,
      `An exception of type *OutboundError* occurred for message \`${d.row.content}\`! See the Confab server logs for more information.`,
      `When trying to send a request to the webhook service, an exception of type OutboundError occurred:\n${fence(err.message)}`,
    );
  }
  await handleResponse(svc, d, res);
}

export const outgoingWebhookJob: JobKind = {
  maxAttempts: MAX_ATTEMPTS,
  leaseMs: 5 * 60_000,
  // 10 s, 20 s, 40 s: the service has about a minute to come back.
  backoffMs: (attempt) => 10_000 * 2 ** (attempt - 1),
  run,
  async giveUp(jobCtx, job, error) {
    // In the transaction's own connection (PGlite has only one).
    const d = await load(jobCtx.tx, job);
    if (!d) return;
    const ctx = { ...jobCtx, realm: d.realm, actor: d.bot };
    await reply(ctx, d, 'Failure! Bot is unavailable');
    await notifyOwner(ctx, d, error);
  },
};
