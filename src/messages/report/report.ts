// POST /messages/{message_id}/report (the reference's message_report, FL 382):
// a user reports a message they can read; Notification Bot posts the report in
// the organization's moderation request channel, in the reference's words.

import type { Services } from '../../services.ts';
import type { Realm } from '../../realm/tables.ts';
import type { User } from '../../users/tables.ts';
import type { Channel } from '../../channels/tables.ts';
import type { Message } from '../tables.ts';
import { transactAs, type ActionContext } from '../../db/transact.ts';
import { badRequest } from '../../http/errors.ts';
import { settingsOf, realmUrl } from '../../realm/queries.ts';
import { channelViewer } from '../../channels/access.ts';
import { getChannel } from '../../channels/queries.ts';
import { getUser } from '../../users/queries.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../../events/shape.ts';
import { messageLink, sendNotices, silentMention, unusedFence } from '../../notification_bot/index.ts';
import { TEXT_BOUNDS } from '../../realm/state.ts';
import { canSee, invalidMessage } from '../access.ts';

export const REPORT_REASONS = {
  spam: 'Spam',
  harassment: 'Harassment',
  inappropriate: 'Inappropriate content',
  norms: 'Violates community norms',
  other: 'Other reason',
} as const;
export type ReportType = keyof typeof REPORT_REASONS;

/** The reference's MAX_REPORT_MESSAGE_EXPLANATION_LENGTH. */
export const MAX_REPORT_DESCRIPTION_LENGTH = 1000;
/** Room left in a notice for the reported message (the reference keeps 500 for its own words). */
const MAX_SNIPPET_LENGTH = TEXT_BOUNDS.max_message_length - MAX_REPORT_DESCRIPTION_LENGTH - 500;

/** The reference's global time syntax. */
const globalTime = (date: Date) => `<time:${date.toISOString().replace(/\.\d{3}Z$/, '+00:00')}>`;

function truncate(content: string): string {
  const marker = '\n[message truncated]';
  return content.length <= MAX_SNIPPET_LENGTH ? content : content.slice(0, MAX_SNIPPET_LENGTH - marker.length) + marker;
}

/** Who a direct message went to, and the link to it (the reference's pm_message_url). */
async function directParts(ctx: ActionContext<Services>, message: Message) {
  const { svc, tx, realm } = ctx;
  const row = await tx.selectFrom('recipients').select('dm_user_ids').where('id', '=', message.recipient_id).executeTakeFirstOrThrow();
  const ids = row.dm_user_ids ?? [];
  const users = ids.length > 0 ? await tx.selectFrom('users').select(['id', 'full_name']).where('id', 'in', ids).orderBy('id').execute() : [];
  const suffix = ids.length > 2 ? 'group' : 'dm';
  const link = `${realmUrl(realm, svc.config)}/#narrow/dm/${ids.join(',')}-${suffix}/near/${message.id}`;
  return { users, link };
}

async function reportContent(ctx: ActionContext<Services, User>, message: Message, report: { type: ReportType; description: string }) {
  const { tx, realm, actor: reporter } = ctx;
  const { type, description } = report;
  const sender = (await getUser(tx, realm.id, message.sender_id))!;
  let header = `${silentMention(reporter)} reported a message sent by ${silentMention(sender)}`;
  let original: string;
  if (message.channel_id !== null) {
    const channel = (await getChannel(tx, realm.id, message.channel_id))!;
    original = `Original message at ${messageLink(channel, message.topic, message.id, EMPTY_TOPIC_DISPLAY_NAME)}`;
  } else {
    const { users, link } = await directParts(ctx, message);
    original = `[Original message](${link})`;
    const others = users.filter((u) => u.id !== sender.id);
    if (users.length > 2) header += ` to ${others.map(silentMention).join(', ')}`;
    // Someone reporting their own message of a one-on-one conversation: say to whom it went.
    else if (sender.id === reporter.id) header += ` to ${silentMention(others[0] ?? reporter)}`;
  }
  header += ` at ${globalTime(message.date_sent)}.`;
  const snippet = truncate(message.content);
  const fence = unusedFence(snippet);
  return {
    sender,
    content: `${header}\n\`\`\`quote\n**${REPORT_REASONS[type]}**. ${description}\n\`\`\`\n\n${fence} spoiler ${original}\n${snippet}\n${fence}\n`,
  };
}

export interface ReportRequest {
  message_id: number;
  report_type: ReportType;
  description: string;
}

export async function reportMessage(svc: Services, realm: Realm, reporter: User, req: ReportRequest): Promise<void> {
  const { message_id: messageId, report_type: type, description } = req;
  if (type === 'other' && description === '') throw badRequest('An explanation is required.');
  const channelId = settingsOf(realm).moderation_request_channel_id as number;
  await transactAs(svc, realm, reporter, async (ctx) => {
    const { tx } = ctx;
    const moderation: Channel | undefined = channelId === -1 ? undefined : await getChannel(tx, realm.id, channelId);
    if (!moderation) throw badRequest('Message reporting is not enabled in this organization.');
    const viewer = await channelViewer(tx, realm, reporter);
    const message = await tx.selectFrom('messages').selectAll().where('realm_id', '=', realm.id).where('id', '=', messageId).executeTakeFirst();
    if (!message || !(await canSee(tx, { realm, viewer }, message))) throw invalidMessage();
    const { sender, content } = await reportContent(ctx, message, { type, description });
    const topic = `${sender.full_name} moderation`;
    await sendNotices(ctx, [{ to: { channel: moderation, topic }, content }]);
  });
}
