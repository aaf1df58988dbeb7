// Unread counting: which messages the reader has not read, grouped as the
// sidebar shows them (channel, topic, DM conversation, mentions). Filled from
// register's `unread_msgs` and kept current by message, flag, move and delete events.

import { dmKey, isMentioned, type NarrowMessage } from './narrow.ts';

type Where = { streamId: number; topic: string } | { dm: string };

export interface UnreadMsgs {
  streams?: { stream_id: number; topic: string; unread_message_ids: number[] }[];
  pms?: { other_user_id: number; unread_message_ids: number[] }[];
  huddles?: { user_ids_string: string; unread_message_ids: number[] }[];
  mentions?: number[];
}

function topicKey(streamId: number, topic: string): string {
  return `${streamId}\u0000${topic.toLowerCase()}`;
}

export class Unreads {
  private where = new Map<number, Where>();
  private mentions = new Set<number>();
  readonly me: number;

  constructor(me: number, initial: UnreadMsgs = {}) {
    this.me = me;
    for (const s of initial.streams ?? []) for (const id of s.unread_message_ids) this.where.set(id, { streamId: s.stream_id, topic: s.topic });
    for (const p of initial.pms ?? []) for (const id of p.unread_message_ids) this.where.set(id, { dm: String(p.other_user_id) });
    for (const h of initial.huddles ?? []) {
      const key = h.user_ids_string
        .split(',')
        .map(Number)
        .filter((id) => id !== me)
        .sort((a, b) => a - b)
        .join(',');
      for (const id of h.unread_message_ids) this.where.set(id, { dm: key });
    }
    for (const id of initial.mentions ?? []) this.mentions.add(id);
  }

  /** A new or newly-unread message. */
  add(message: NarrowMessage, flags: string[]): void {
    if (flags.includes('read')) return;
    this.where.set(message.id, message.type === 'stream' ? { streamId: message.stream_id!, topic: message.subject } : { dm: dmKey(message, this.me) });
    if (isMentioned(flags)) this.mentions.add(message.id);
  }

  /** From an update_message_flags remove-read event's message_details. */
  addDetails(id: number, d: { type: string; stream_id?: number; topic?: string; user_ids?: number[]; mentioned?: boolean }): void {
    if (d.type === 'stream') this.where.set(id, { streamId: d.stream_id!, topic: d.topic ?? '' });
    else {
      const ids = (d.user_ids ?? []).filter((u) => u !== this.me).sort((a, b) => a - b);
      this.where.set(id, { dm: (ids.length ? ids : [this.me]).join(',') });
    }
    if (d.mentioned) this.mentions.add(id);
  }

  markRead(ids: Iterable<number>): void {
    for (const id of ids) {
      this.where.delete(id);
      this.mentions.delete(id);
    }
  }

  markAllRead(): void {
    this.where.clear();
    this.mentions.clear();
  }

  /** Messages moved to another channel and/or topic. */
  move(ids: Iterable<number>, streamId: number | undefined, topic: string | undefined): void {
    for (const id of ids) {
      const w = this.where.get(id);
      if (!w || !('streamId' in w)) continue;
      this.where.set(id, { streamId: streamId ?? w.streamId, topic: topic ?? w.topic });
    }
  }

  isUnread(id: number): boolean {
    return this.where.has(id);
  }

  /** Counts per channel (leaving out muted topics), topic and DM conversation, in one pass. */
  counts(isTopicMuted: (streamId: number, topic: string) => boolean = () => false): UnreadCounts {
    const streams = new Map<number, number>();
    const topics = new Map<string, number>();
    const dms = new Map<string, number>();
    let total = 0;
    let dmTotal = 0;
    for (const w of this.where.values()) {
      if ('dm' in w) {
        dms.set(w.dm, (dms.get(w.dm) ?? 0) + 1);
        dmTotal++;
        total++;
        continue;
      }
      const k = topicKey(w.streamId, w.topic);
      topics.set(k, (topics.get(k) ?? 0) + 1);
      if (isTopicMuted(w.streamId, w.topic)) continue;
      streams.set(w.streamId, (streams.get(w.streamId) ?? 0) + 1);
      total++;
    }
    return {
      total,
      dmTotal,
      mentions: this.mentions.size,
      stream: (id) => streams.get(id) ?? 0,
      topic: (id, topic) => topics.get(topicKey(id, topic)) ?? 0,
      dm: (key) => dms.get(key) ?? 0,
    };
  }

  /** Unread ids in one channel (and topic), for "mark as read" on a view. */
  idsIn(streamId: number, topic?: string): number[] {
    const out: number[] = [];
    for (const [id, w] of this.where) {
      if ('streamId' in w && w.streamId === streamId && (topic === undefined || w.topic.toLowerCase() === topic.toLowerCase())) out.push(id);
    }
    return out;
  }
}

export interface UnreadCounts {
  total: number;
  dmTotal: number;
  mentions: number;
  stream(id: number): number;
  topic(streamId: number, topic: string): number;
  dm(key: string): number;
}
