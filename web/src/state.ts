// The client's picture of the organization: what /register returned, kept current
// by applying each event from /events. No DOM here, so it is unit-tested in Node.
// Views subscribe and re-render when `version` changes.

import { dmKey, matches, type Narrow } from './narrow.ts';
import { Unreads } from './unread.ts';

export interface Reaction {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  user_id: number;
}

export interface Message {
  id: number;
  type: string;
  sender_id: number;
  sender_email: string;
  sender_full_name: string;
  avatar_url?: string | null;
  content: string;
  display_recipient: string | { id: number; email: string; full_name: string }[];
  stream_id?: number;
  subject: string;
  timestamp: number;
  reactions: Reaction[];
  flags: string[];
  last_edit_timestamp?: number;
  last_moved_timestamp?: number;
  is_me_message?: boolean;
  /** Set while a sent message waits for the server's copy (local echo). */
  local_id?: string;
  failed?: string;
}

export interface User {
  user_id: number;
  email: string;
  full_name: string;
  avatar_url?: string | null;
  role: number;
  is_active?: boolean;
  is_bot?: boolean;
  timezone?: string;
  date_joined?: string;
}

export interface Subscription {
  stream_id: number;
  name: string;
  description?: string;
  color: string;
  is_muted: boolean;
  invite_only?: boolean;
  pin_to_top?: boolean;
  [key: string]: unknown;
}

export interface Stream {
  stream_id: number;
  name: string;
  description?: string;
  rendered_description?: string;
  invite_only?: boolean;
  [key: string]: unknown;
}

export interface TypingEntry {
  userId: number;
  /** `s:<stream>:<topic>` or `d:<ids>`. */
  where: string;
  until: number;
}

export const ROLE_OWNER = 100;
export const ROLE_ADMIN = 200;
export const ROLE_MODERATOR = 300;
export const ROLE_MEMBER = 400;
export const ROLE_GUEST = 600;

/** The messages of the view on screen, in id order, and whether both ends are known. */
export class MessageList {
  readonly narrow: Narrow;
  ids: number[] = [];
  foundOldest = false;
  foundNewest = false;
  /** A message arrived that the client cannot place (search): the view should refetch. */
  stale = false;
  constructor(narrow: Narrow) {
    this.narrow = narrow;
  }
  addOlder(ids: number[]): void {
    const first = this.ids[0] ?? Infinity;
    this.ids = [...ids.filter((id) => id < first), ...this.ids];
  }
  addNewer(ids: number[]): void {
    const last = this.ids[this.ids.length - 1] ?? -Infinity;
    this.ids = [...this.ids, ...ids.filter((id) => id > last)];
  }
  remove(ids: Set<number>): boolean {
    const before = this.ids.length;
    this.ids = this.ids.filter((id) => !ids.has(id));
    return this.ids.length !== before;
  }
}

export class Store {
  version = 0;
  private listeners = new Set<() => void>();
  me!: User;
  realm: Record<string, any> = {};
  settings: Record<string, any> = {};
  users = new Map<number, User>();
  subs = new Map<number, Subscription>();
  streams = new Map<number, Stream>();
  messages = new Map<number, Message>();
  /** `streamId:topic(lowercase)` → visibility policy (1 muted, 2 unmuted, 3 followed). */
  userTopics = new Map<string, number>();
  /** Topics seen per channel, newest first: name and latest message id. */
  topics = new Map<number, Map<string, { name: string; maxId: number }>>();
  /** DM conversations by key, latest message id. */
  dmConversations = new Map<string, number>();
  presence = new Map<number, { active: number; idle: number }>();
  typing: TypingEntry[] = [];
  realmEmoji: Record<string, { id: string; name: string; source_url: string; deactivated?: boolean }> = {};
  unreads!: Unreads;
  list: MessageList = new MessageList([]);
  queueId = '';
  lastEventId = -1;

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  changed(): void {
    this.version++;
    for (const fn of this.listeners) fn();
  }

  /** Replaces everything with a /register response. */
  load(r: any): void {
    this.queueId = r.queue_id;
    this.lastEventId = r.last_event_id;
    this.users.clear();
    for (const u of [...(r.realm_users ?? []), ...(r.realm_non_active_users ?? []), ...(r.cross_realm_bots ?? [])]) this.users.set(u.user_id, u);
    this.me = this.users.get(r.user_id) ?? { user_id: r.user_id, email: r.email, full_name: r.full_name, role: r.role };
    this.realm = Object.fromEntries(Object.entries(r).filter(([k]) => k.startsWith('realm_') || k.startsWith('max_') || k.startsWith('server_')));
    this.settings = { ...(r.user_settings ?? {}) };
    this.subs.clear();
    for (const s of r.subscriptions ?? []) this.subs.set(s.stream_id, s);
    this.streams.clear();
    for (const s of [...(r.streams ?? []), ...(r.subscriptions ?? [])]) this.streams.set(s.stream_id, s);
    this.userTopics.clear();
    for (const t of r.user_topics ?? []) this.userTopics.set(topicKey(t.stream_id, t.topic_name), t.visibility_policy);
    this.dmConversations.clear();
    for (const c of r.recent_private_conversations ?? []) this.dmConversations.set(idsKey(c.user_ids, this.me.user_id), c.max_message_id);
    this.presence.clear();
    for (const [id, p] of Object.entries<any>(r.presences ?? {})) this.presence.set(Number(id), { active: p.active_timestamp, idle: p.idle_timestamp });
    this.realmEmoji = r.realm_emoji ?? {};
    this.unreads = new Unreads(r.user_id, r.unread_msgs ?? {});
    for (const s of r.unread_msgs?.streams ?? []) this.noteTopic(s.stream_id, s.topic, Math.max(...s.unread_message_ids));
    this.changed();
  }

  isTopicMuted = (streamId: number, topic: string): boolean => {
    const policy = this.userTopics.get(topicKey(streamId, topic));
    if (policy === 1) return true;
    if (policy === 2 || policy === 3) return false;
    return this.subs.get(streamId)?.is_muted ?? false;
  };

  noteTopic(streamId: number, topic: string, id: number): void {
    let m = this.topics.get(streamId);
    if (!m) this.topics.set(streamId, (m = new Map()));
    const k = topic.toLowerCase();
    const cur = m.get(k);
    if (!cur || cur.maxId <= id) m.set(k, { name: topic, maxId: id });
  }

  /** Topics of a channel, newest first. */
  topicsOf(streamId: number): { name: string; maxId: number }[] {
    return [...(this.topics.get(streamId)?.values() ?? [])].sort((a, b) => b.maxId - a.maxId);
  }

  /** Stores fetched messages (the server's copies win over local ones). */
  addMessages(msgs: Message[]): void {
    for (const m of msgs) {
      this.messages.set(m.id, m);
      this.noteMessage(m);
    }
  }

  private noteMessage(m: Message): void {
    if (m.type === 'stream') this.noteTopic(m.stream_id!, m.subject, m.id);
    else if (!m.local_id) {
      const key = dmKey(m, this.me.user_id);
      this.dmConversations.set(key, Math.max(m.id, this.dmConversations.get(key) ?? 0));
    }
  }

  /** A locally echoed message, shown at once while the server handles the send. */
  echo(m: Message): void {
    this.messages.set(m.id, m);
    if (this.list.foundNewest && matches(this.list.narrow, m, this.me.user_id)) this.list.ids.push(m.id);
    this.changed();
  }

  dropEcho(localId: string, failed?: string): void {
    for (const m of this.messages.values()) {
      if (m.local_id !== localId || m.id >= 0) continue;
      if (failed !== undefined) m.failed = failed;
      else {
        this.messages.delete(m.id);
        this.list.remove(new Set([m.id]));
      }
    }
    this.changed();
  }

  applyEvents(events: any[]): void {
    for (const e of events) {
      this.apply(e);
      this.lastEventId = Math.max(this.lastEventId, e.id);
    }
    this.changed();
  }

  private apply(e: any): void {
    const handler = HANDLERS[e.type];
    if (handler) handler(this, e);
  }

  /** A live message: stored, counted unread and put on screen if the view shows it. */
  onMessage(e: any): void {
    const m: Message = { ...e.message, flags: e.flags ?? e.message.flags ?? [], reactions: e.message.reactions ?? [] };
    if (m.sender_id === this.me.user_id && !m.flags.includes('read')) m.flags.push('read');
    if (e.local_message_id) {
      for (const local of this.messages.values()) {
        if (local.local_id === e.local_message_id && local.id < 0) {
          this.messages.delete(local.id);
          this.list.remove(new Set([local.id]));
        }
      }
    }
    this.messages.set(m.id, m);
    this.noteMessage(m);
    this.unreads.add(m, m.flags);
    if (!this.list.foundNewest) return;
    const fits = matches(this.list.narrow, m, this.me.user_id);
    if (fits === null) this.list.stale = true;
    else if (fits) this.list.addNewer([m.id]);
  }

  typingAt(where: string): number[] {
    const now = Date.now();
    return this.typing.filter((t) => t.where === where && t.until > now).map((t) => t.userId);
  }

  canAdmin(): boolean {
    return this.me.role <= ROLE_ADMIN;
  }
}

export function topicKey(streamId: number, topic: string): string {
  return `${streamId}:${topic.toLowerCase()}`;
}

export function idsKey(ids: number[], me: number): string {
  const others = ids.filter((id) => id !== me).sort((a, b) => a - b);
  return (others.length === 0 ? [me] : others).join(',');
}

export function typingWhere(
  e: { message_type?: string; type?: string; stream_id?: number; topic?: string; recipients?: { user_id: number }[] },
  me: number,
): string {
  if (e.message_type === 'stream' || e.type === 'stream') return `s:${e.stream_id}:${(e.topic ?? '').toLowerCase()}`;
  return `d:${idsKey(
    (e.recipients ?? []).map((r) => r.user_id),
    me,
  )}`;
}

type Handler = (s: Store, e: any) => void;

const HANDLERS: Record<string, Handler> = {
  message: (s, e) => s.onMessage(e),

  update_message: (s, e) => {
    const m = s.messages.get(e.message_id);
    if (m && e.rendered_content !== undefined) {
      m.content = e.rendered_content;
      m.last_edit_timestamp = e.edit_timestamp;
    }
    const moved = e.new_stream_id !== undefined || (e.subject !== undefined && e.orig_subject !== undefined);
    if (!moved) return;
    const ids: number[] = e.message_ids ?? [e.message_id];
    s.unreads.move(ids, e.new_stream_id, e.subject);
    const gone = new Set<number>();
    for (const id of ids) {
      const msg = s.messages.get(id);
      if (!msg) continue;
      if (e.new_stream_id !== undefined) {
        msg.stream_id = e.new_stream_id;
        msg.display_recipient = s.streams.get(e.new_stream_id)?.name ?? msg.display_recipient;
      }
      if (e.subject !== undefined) msg.subject = e.subject;
      msg.last_moved_timestamp = e.edit_timestamp;
      s.noteTopic(msg.stream_id!, msg.subject, msg.id);
      if (matches(s.list.narrow, msg, s.me.user_id) === false) gone.add(id);
    }
    s.list.remove(gone);
  },

  delete_message: (s, e) => {
    const ids: number[] = e.message_ids ?? [e.message_id];
    for (const id of ids) s.messages.delete(id);
    s.unreads.markRead(ids);
    s.list.remove(new Set(ids));
  },

  reaction: (s, e) => {
    const m = s.messages.get(e.message_id);
    if (!m) return;
    const same = (r: Reaction) => r.user_id === e.user_id && r.emoji_code === e.emoji_code && r.reaction_type === e.reaction_type;
    if (e.op === 'add' && !m.reactions.some(same))
      m.reactions.push({ emoji_name: e.emoji_name, emoji_code: e.emoji_code, reaction_type: e.reaction_type, user_id: e.user_id });
    if (e.op === 'remove') m.reactions = m.reactions.filter((r) => !same(r));
  },

  update_message_flags: (s, e) => {
    const flag: string = e.flag;
    if (flag === 'read' && e.op === 'add') {
      if (e.all) s.unreads.markAllRead();
      else s.unreads.markRead(e.messages);
    }
    if (flag === 'read' && e.op === 'remove') {
      for (const id of e.messages as number[]) {
        const d = e.message_details?.[id];
        if (d) s.unreads.addDetails(id, d);
      }
    }
    const ids: number[] = e.all ? [...s.messages.keys()] : e.messages;
    for (const id of ids) {
      const m = s.messages.get(id);
      if (!m) continue;
      m.flags = m.flags.filter((f) => f !== flag);
      if (e.op === 'add') m.flags.push(flag);
    }
  },

  typing: (s, e) => {
    const where = typingWhere(e, s.me.user_id);
    const userId = e.sender.user_id;
    s.typing = s.typing.filter((t) => !(t.userId === userId && t.where === where));
    // The reference's sender repeats "start" every 10 s; forget it after 15 s without one.
    if (e.op === 'start' && userId !== s.me.user_id) s.typing.push({ userId, where, until: Date.now() + 15_000 });
  },

  presence: (s, e) => {
    for (const [id, p] of Object.entries<any>(e.presences ?? {})) s.presence.set(Number(id), { active: p.active_timestamp, idle: p.idle_timestamp });
  },

  subscription: (s, e) => {
    if (e.op === 'add')
      for (const sub of e.subscriptions) {
        s.subs.set(sub.stream_id, sub);
        s.streams.set(sub.stream_id, sub);
      }
    if (e.op === 'remove') for (const sub of e.subscriptions) s.subs.delete(sub.stream_id);
    if (e.op === 'update') {
      const sub = s.subs.get(e.stream_id);
      if (sub) {
        sub[e.property] = e.value;
        if (e.property === 'in_home_view') sub.is_muted = !e.value;
      }
    }
  },

  stream: (s, e) => {
    if (e.op === 'create') for (const st of e.streams) s.streams.set(st.stream_id, st);
    if (e.op === 'delete')
      for (const st of e.streams) {
        s.streams.delete(st.stream_id);
        s.subs.delete(st.stream_id);
      }
    if (e.op === 'update')
      for (const target of [s.streams.get(e.stream_id), s.subs.get(e.stream_id)]) {
        if (!target) continue;
        target[e.property] = e.value;
        // A description change carries its rendering beside the value.
        if (e.rendered_description !== undefined) target.rendered_description = e.rendered_description;
      }
  },

  realm_user: (s, e) => {
    if (e.op === 'add') s.users.set(e.person.user_id, e.person);
    if (e.op === 'update') {
      const u = s.users.get(e.person.user_id);
      if (u) Object.assign(u, e.person);
      if (u && s.me.user_id === u.user_id) s.me = u;
    }
    if (e.op === 'remove') {
      const u = s.users.get(e.person.user_id);
      if (u) u.is_active = false;
    }
  },

  user_topic: (s, e) => {
    s.userTopics.set(topicKey(e.stream_id, e.topic_name), e.visibility_policy);
  },

  user_settings: (s, e) => {
    if (e.op === 'update') s.settings[e.property] = e.value;
  },

  realm_emoji: (s, e) => {
    s.realmEmoji = e.realm_emoji;
  },

  realm: (s, e) => {
    if (e.op === 'update') s.realm[`realm_${e.property}`] = e.value;
    if (e.op === 'update_dict') for (const [k, v] of Object.entries(e.data ?? {})) s.realm[`realm_${k}`] = v;
  },
};
