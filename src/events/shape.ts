// The one place that knows how each client wants its events: which it receives
// (`event_types`, `narrow`) and in what form (`apply_markdown`,
// `client_svcavatar` and the client capabilities, spec "Events" 5 and digest
// 3.2). Domains emit one event and never look at capabilities.

import type { EventQueue } from './queue.ts';
import type { Hidden, Notice, ServerEvent } from './types.ts';
import { narrowMatches } from './narrow.ts';

export const EMPTY_TOPIC_DISPLAY_NAME = 'general chat';

/**
 * The events a queue receives for a notice: none, one, or (legacy forms) several.
 * What it reads of the queue and the notice, `shapeKey` must name too.
 */
export function shapeFor(queue: EventQueue, notice: Notice): ServerEvent[] {
  const { event } = notice;
  // Between processes only (credentials_changed): no queue gets it.
  if (!isClientEvent(event)) return [];
  const o = queue.options;
  const caps = o.capabilities;
  const userId = o.userId;
  const hidden = notice.hidden ?? {};
  // Most events reach many queues: skip the work for those that do not want them.
  if (event.type !== 'user_settings' && !accepts(queue, event.type)) return [];
  // Events that only stand in for what a capability would have said (e.g. an unarchiving).
  const legacyOnly = hidden.only_without_capability;
  if (legacyOnly && caps[legacyOnly]) return [];
  // Clients that do not know archived channels hear nothing about them.
  if (hidden.channel_archived === true && !caps.archived_channels) return [];

  let out: ServerEvent[] = [{ ...event, ...notice.perUser?.[userId] }];

  switch (event.type) {
    case 'message': {
      const message = { ...event.message };
      if (!o.applyMarkdown && typeof hidden.raw_content === 'string') {
        message.content = hidden.raw_content;
        message.content_type = 'text/x-markdown';
      }
      const flags = notice.perUser?.[userId]?.flags ?? [];
      if (!narrowMatches(o.narrow, message, flags)) return [];
      const shaped: ServerEvent = { type: 'message', message, flags };
      if (notice.localEcho && notice.localEcho.queueId === queue.id) shaped.local_message_id = notice.localEcho.localId;
      nullAvatarIfComputable(o.clientSvcavatar, userId, hidden, message);
      out = [shaped];
      break;
    }
    case 'realm_user': {
      // An "Unknown user" placeholder for a newcomer the viewer may not see: only lists that keep them.
      if (hidden.inaccessible_user === true && caps.user_list_incomplete) return [];
      if (event.op !== 'remove' && 'avatar_url' in event.person) {
        const copy = { ...event.person };
        nullAvatarIfComputable(o.clientSvcavatar, userId, hidden, copy);
        out = [{ ...event, person: copy }];
      }
      break;
    }
    case 'delete_message': {
      if (!caps.bulk_message_deletion) {
        const { message_ids = [], ...rest } = event;
        out = message_ids.map((message_id) => ({ ...rest, message_id }));
      }
      break;
    }
    case 'typing':
      if (event.message_type === 'stream' && !caps.stream_typing_notifications) return [];
      break;
    case 'realm_linkifiers':
      if (!caps.linkifier_url_template) return [];
      break;
    case 'user_group': {
      if (caps.include_deactivated_groups) break;
      if (event.op === 'update' && event.data.deactivated === true) out = [{ type: 'user_group', op: 'remove', group_id: event.group_id }];
      else if (event.op === 'update' && event.data.deactivated === false) out = [{ type: 'user_group', op: 'add', group: hidden.group! }];
      else if (hidden.group_deactivated === true) return [];
      break;
    }
    case 'stream': {
      if (caps.archived_channels) break;
      if (event.op === 'update' && event.property === 'is_archived') {
        out =
          event.value === true
            ? [{ type: 'stream', op: 'delete', streams: [{ stream_id: event.stream_id }], stream_ids: [event.stream_id] }]
            : [{ type: 'stream', op: 'create', streams: hidden.streams! }];
      }
      break;
    }
    case 'subscription': {
      if (event.op === 'add' && !caps.notification_settings_null && hidden.notification_defaults) {
        const defaults = hidden.notification_defaults;
        const subs = event.subscriptions.map((s) => {
          const copy: Record<string, unknown> & typeof s = { ...s };
          for (const [k, v] of Object.entries(defaults)) if (copy[k] === null) copy[k] = v;
          return copy;
        });
        out = [{ ...event, subscriptions: subs }];
      }
      break;
    }
    case 'presence': {
      if (caps.simplified_presence_events) {
        out = [{ type: 'presence', presences: hidden.presences! }];
      } else if (o.slimPresence && 'email' in event) {
        // The slim form: no email (an event type of its own in the reference's terms).
        const { email: _email, ...rest } = event;
        out = [rest as ServerEvent];
      }
      break;
    }
    case 'user_settings': {
      // Clients from before the settings object also get the legacy event.
      if (!caps.user_settings_object && hidden.legacy) out.push(hidden.legacy);
      break;
    }
  }

  out = out.filter((e) => accepts(queue, e.type));
  return caps.empty_topic_name ? out : out.map(showEmptyTopic);
}

/**
 * Queues with the same key get the same events from `shapeFor` for this notice
 * (the bus shapes, and the answers serialize, once per key): the options it reads
 * (all but the user), the user's own part of the notice, and whether the avatar
 * rule names the user. The sending queue's local echo is its own (undefined).
 */
export function shapeKey(queue: EventQueue, notice: Notice): string | undefined {
  if (notice.localEcho?.queueId === queue.id) return undefined;
  let key = optionsShapeKey(queue);
  const userId = queue.options.userId;
  const own = notice.perUser?.[userId];
  if (own !== undefined) key += `\u0000${JSON.stringify(own)}`;
  const nullable = notice.hidden?.avatar_nullable_for;
  if (Array.isArray(nullable)) key += nullable.includes(userId) ? '\u0000n' : '\u0000-';
  return key;
}

/** The options' part of a queue's shape key, made once (the registry makes it as it creates the queue). */
export function optionsShapeKey(queue: EventQueue): string {
  let key = queue.optionsShapeKey;
  if (key === undefined) {
    const o = queue.options;
    const types = queue.eventTypes === null ? null : [...queue.eventTypes].sort();
    key = queue.optionsShapeKey = JSON.stringify([types, o.narrow, o.applyMarkdown, o.clientSvcavatar, o.slimPresence, o.capabilities]);
  }
  return key;
}

function accepts(queue: EventQueue, type: string): boolean {
  const types = queue.eventTypes;
  if (types === null) return true;
  // A client that follows user_topic does not also want the legacy list.
  if (type === 'muted_topics' && types.has('user_topic')) return false;
  return types.has(type);
}

/** With client_svcavatar the client derives provider avatars itself, where it can see the email. */
function nullAvatarIfComputable(clientSvcavatar: boolean, userId: number, hidden: Hidden, target: Record<string, unknown>) {
  const nullable = hidden.avatar_nullable_for;
  if (!clientSvcavatar || nullable === undefined) return;
  if (nullable === 'all' || nullable.includes(userId)) target.avatar_url = null;
}

const display = <T>(topic: T): T | string => (topic === '' ? EMPTY_TOPIC_DISPLAY_NAME : topic);

/** Whether an event is for clients (not one between processes only). */
export function isClientEvent(event: Notice['event']): event is ServerEvent {
  return event.type !== 'credentials_changed';
}

/** Without `empty_topic_name`, the empty topic reads as "general chat" (spec convention 6). */
export function showEmptyTopic(event: ServerEvent): ServerEvent {
  switch (event.type) {
    case 'message': {
      const { message } = event;
      return message.type === 'stream' && message.subject === '' ? { ...event, message: { ...message, subject: display('') } } : event;
    }
    case 'update_message': {
      const copy = { ...event };
      if (copy.orig_subject !== undefined) copy.orig_subject = display(copy.orig_subject);
      if (copy.subject !== undefined) copy.subject = display(copy.subject);
      return copy;
    }
    case 'delete_message':
    case 'typing':
      return 'topic' in event ? { ...event, topic: display(event.topic) } : event;
    case 'user_topic':
      return { ...event, topic_name: display(event.topic_name) };
    case 'typing_edit_message': {
      const { recipient } = event;
      return 'topic' in recipient ? { ...event, recipient: { ...recipient, topic: display(recipient.topic) } } : event;
    }
    case 'update_message_flags': {
      const details = event.message_details;
      if (!details) return event;
      const shown = Object.fromEntries(Object.entries(details).map(([id, d]) => [id, 'topic' in d ? { ...d, topic: display(d.topic) } : d]));
      return { ...event, message_details: shown };
    }
    default:
      return event;
  }
}
