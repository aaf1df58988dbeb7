// Notification Bot: the messages the server itself posts when something happens
// that people should hear of (a channel created or renamed, someone subscribed
// by another, messages moved); a notice may name another system bot as its
// sender (Welcome Bot). Any domain may post one, inside its own
// transaction; the messages domain delivers it (Services.hooks.sendNotice, wiring.ts), so
// that domains below messages need not import it.
//
// Also the Markdown every notice is written with, as the reference writes it.

import type { ActionContext } from '../db/transact.ts';
import type { User } from '../users/tables.ts';
import type { Channel } from '../channels/tables.ts';
import type { SystemBot } from '../users/system-bots.ts';

/** A channel's topic, or a direct message to one user. */
export type NoticeDestination = { channel: Channel; topic: string } | { user: User };

export interface Notice {
  to: NoticeDestination;
  content: string;
  /** Users who caused it and need not be told: it starts read for them. */
  readBy?: number[];
  /** Recipients for whom it starts starred (the reference stars Welcome Bot's words to a new user). */
  starredFor?: number[];
  /** The system bot that says it; Notification Bot unless named. */
  from?: SystemBot;
}

/** messages/send/send.ts posts them (Services.hooks.sendNotice, wiring.ts), in the action's transaction. */
export type NoticeSender = (ctx: ActionContext, notice: Notice) => Promise<number>;

/** Posts the notices in order, in the caller's transaction; returns their message ids. */
export async function sendNotices(ctx: ActionContext, notices: Notice[]): Promise<number[]> {
  const ids: number[] = [];
  for (const notice of notices) ids.push(await ctx.svc.hooks.sendNotice(ctx, notice));
  return ids;
}

/** The topic of a channel's own notices (the reference's STREAM_EVENTS_NOTIFICATION_TOPIC_NAME). */
export const CHANNEL_EVENTS_TOPIC = 'channel events';

/** A code fence longer than any fence at a line's start in `content` (the reference's get_unused_fence). */
export function unusedFence(content: string): string {
  let length = 3;
  for (const m of content.matchAll(/^ {0,3}(`{3,})/gm)) length = Math.max(length, m[1].length + 1);
  return '`'.repeat(length);
}

/** `@_*group*`: names a group without notifying its members. */
export function silentGroupMention(group: { name: string }): string {
  return `@_*${group.name}*`;
}

/** `@_**Name|id**`: names a user without notifying them. */
export function silentMention(user: Pick<User, 'full_name' | 'id'>): string {
  return `@_**${user.full_name}|${user.id}**`;
}

// Names with these characters would break `#**channel>topic**`; such links are written as plain links.
const BREAKS_LINK = /[`>*&[\]]|\$\$/;
const LINK_ESCAPES: Record<string, string> = { '`': '&#96;', '>': '&gt;', '*': '&#42;', '&': '&amp;', $$: '&#36;&#36;', '[': '&#91;', ']': '&#93;' };
const escapeLinkText = (s: string) => s.replace(/[`>*&[\]]|\$\$/g, (c) => LINK_ESCAPES[c] ?? c);

/** The reference's encode_hash_component: percent-encoding (keeping `*`) with `.` for `%`. */
function encodeHashComponent(s: string): string {
  const pct = (c: string) => '%' + c.charCodeAt(0).toString(16).toUpperCase();
  return encodeURIComponent(s)
    .replace(/[!'()]/g, pct)
    .replaceAll('.', '%2E')
    .replaceAll('%', '.');
}

const channelPath = (channel: Pick<Channel, 'id' | 'name'>) => `#narrow/channel/${channel.id}-${encodeHashComponent(channel.name.replaceAll(' ', '-'))}`;

/** `#**channel**`, or a plain link where the name would break it. */
export function channelLink(channel: Pick<Channel, 'id' | 'name'>): string {
  if (!BREAKS_LINK.test(channel.name)) return `#**${channel.name}**`;
  return `[#${escapeLinkText(channel.name)}](${channelPath(channel)})`;
}

/** `#**channel>topic**`, or a plain link where a name would break it. */
export function topicLink(channel: Pick<Channel, 'id' | 'name'>, topic: string, emptyTopicName: string): string {
  if (!BREAKS_LINK.test(channel.name) && !BREAKS_LINK.test(topic)) return `#**${channel.name}>${topic}**`;
  const text = `#${escapeLinkText(channel.name)} > ${escapeLinkText(topic === '' ? emptyTopicName : topic)}`;
  return `[${text}](${channelPath(channel)}/topic/${encodeHashComponent(topic)})`;
}

/** `#**channel>topic@id**`: a link to one message, or a plain link where a name would break it. */
export function messageLink(channel: Pick<Channel, 'id' | 'name'>, topic: string, messageId: number, emptyTopicName: string): string {
  if (!BREAKS_LINK.test(channel.name) && !BREAKS_LINK.test(topic)) return `#**${channel.name}>${topic}@${messageId}**`;
  const text = `#${escapeLinkText(channel.name)} > ${escapeLinkText(topic === '' ? emptyTopicName : topic)} @ 💬`;
  return `[${text}](${messagePath(channel, topic, messageId)})`;
}

/** A message's link within its organization (the reference's stream_message_url, after the organization's URL). */
export function messagePath(channel: Pick<Channel, 'id' | 'name'>, topic: string, messageId: number): string {
  return `${channelPath(channel)}/topic/${encodeHashComponent(topic)}/near/${messageId}`;
}

/** `[#channel > topic](…/with/id)`: a message in its topic, named (the reference's reminder link). */
export function namedMessageLink(channel: Pick<Channel, 'id' | 'name'>, topic: string, messageId: number, emptyTopicName: string): string {
  const text = `#${escapeLinkText(channel.name)} > ${escapeLinkText(topic === '' ? emptyTopicName : topic)}`;
  return `[${text}](${channelPath(channel)}/topic/${encodeHashComponent(topic)}/with/${messageId})`;
}
