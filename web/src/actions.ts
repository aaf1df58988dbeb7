// What the person does, as API calls: each updates the screen from the events
// that follow (the one source of truth), except the local echo of a sent message.

import { api } from './api.ts';
import { narrowToApi, type Narrow } from './narrow.ts';
import { MessageList, type Message, type Store } from './state.ts';

export const PAGE = 100;

let localCounter = 0;

export class Actions {
  readonly store: Store;
  private readQueue = new Set<number>();
  private readTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(store: Store) {
    this.store = store;
  }

  private prefetched: { key: string; reply: Promise<any> } | null = null;

  /**
   * Asks for the first view's messages while /register runs, so that the page
   * waits for the slower of the two instead of both in turn (openNarrow takes it).
   */
  prefetch(narrow: Narrow): void {
    this.prefetched = { key: JSON.stringify(narrow), reply: this.firstPage(narrow).catch(() => null) };
  }

  private firstPage(narrow: Narrow): Promise<any> {
    return api.get('/messages', {
      anchor: 'first_unread',
      num_before: 50,
      num_after: 50,
      narrow: narrowToApi(narrow),
      apply_markdown: true,
      client_gravatar: false,
    });
  }

  private async takePrefetched(narrow: Narrow): Promise<any> {
    const p = this.prefetched;
    this.prefetched = null;
    return p && p.key === JSON.stringify(narrow) ? await p.reply : null;
  }

  /** Opens a view: a fresh list around the first unread message (else the newest). */
  async openNarrow(narrow: Narrow): Promise<number | null> {
    const list = new MessageList(narrow);
    this.store.list = list;
    this.store.changed();
    const prefetched = await this.takePrefetched(narrow);
    const r = prefetched ?? (await this.firstPage(narrow));
    if (this.store.list !== list) return null;
    this.store.addMessages(r.messages);
    // Messages the events placed in the list while the page was on its way stay.
    const meanwhile = list.ids;
    list.ids = r.messages.map((m: Message) => m.id);
    list.foundOldest = r.found_oldest;
    list.foundNewest = r.found_newest;
    if (list.foundNewest) list.addNewer(meanwhile);
    this.store.changed();
    // A prefetched page was read before the event queue existed: what was sent in
    // between reached neither, so the newest end is asked for again.
    const newest = list.ids[list.ids.length - 1] ?? 0;
    if (prefetched && list.foundNewest && (this.store.realm.max_message_id ?? 0) > newest) {
      list.foundNewest = false;
      await this.loadMore('newer');
    }
    const firstUnread = r.messages.find((m: Message) => !m.flags.includes('read'));
    return firstUnread ? firstUnread.id : null;
  }

  private loading = false;

  /** The next page in one direction; true if anything came. */
  async loadMore(direction: 'older' | 'newer'): Promise<boolean> {
    const list = this.store.list;
    if (this.loading || (direction === 'older' ? list.foundOldest : list.foundNewest) || list.ids.length === 0) return false;
    this.loading = true;
    try {
      const real = list.ids.filter((id) => id > 0);
      const anchor = direction === 'older' ? real[0] : real[real.length - 1];
      const r = await api.get('/messages', {
        anchor,
        num_before: direction === 'older' ? PAGE : 0,
        num_after: direction === 'newer' ? PAGE : 0,
        include_anchor: false,
        narrow: narrowToApi(list.narrow),
        apply_markdown: true,
        client_gravatar: false,
      });
      if (this.store.list !== list) return false;
      this.store.addMessages(r.messages);
      const ids = r.messages.map((m: Message) => m.id);
      if (direction === 'older') {
        list.addOlder(ids);
        list.foundOldest = r.found_oldest;
      } else {
        list.addNewer(ids);
        list.foundNewest = r.found_newest;
      }
      this.store.changed();
      return ids.length > 0;
    } finally {
      this.loading = false;
    }
  }

  /** Marks messages read, a batch at a time. */
  markRead(ids: number[]): void {
    for (const id of ids) if (id > 0 && this.store.unreads.isUnread(id) && !this.readQueue.has(id)) this.readQueue.add(id);
    if (this.readQueue.size === 0 || this.readTimer) return;
    this.readTimer = setTimeout(() => void this.flushRead(), 300);
  }

  private async flushRead(): Promise<void> {
    const ids = [...this.readQueue];
    this.readQueue.clear();
    this.readTimer = null;
    if (ids.length === 0) return;
    // Shown at once; the event that follows confirms it.
    this.store.unreads.markRead(ids);
    this.store.changed();
    await api.post('/messages/flags', { messages: ids, op: 'add', flag: 'read' }).catch(() => undefined);
  }

  async markNarrowRead(narrow: Narrow): Promise<void> {
    await api.post('/messages/flags/narrow', {
      anchor: 'oldest',
      num_before: 0,
      num_after: 5000,
      include_anchor: true,
      narrow: narrowToApi(narrow),
      op: 'add',
      flag: 'read',
    });
  }

  /** Sends with a local echo that the server's copy replaces (matched by local_id). */
  async send(to: { streamId: number; topic: string } | { userIds: number[] }, content: string): Promise<void> {
    const store = this.store;
    const localId = `${Date.now() % 100000}.${String(++localCounter).padStart(2, '0')}`;
    const me = store.me;
    const base = {
      sender_id: me.user_id,
      sender_email: me.email,
      sender_full_name: me.full_name,
      avatar_url: me.avatar_url,
      timestamp: Math.floor(Date.now() / 1000),
      reactions: [],
      flags: ['read'],
      local_id: localId,
    };
    const echo: Message =
      'streamId' in to
        ? {
            ...base,
            id: -localCounter,
            type: 'stream',
            stream_id: to.streamId,
            subject: to.topic,
            display_recipient: store.streams.get(to.streamId)?.name ?? '',
            content: escapeText(content),
          }
        : {
            ...base,
            id: -localCounter,
            type: 'private',
            subject: '',
            display_recipient: to.userIds.map((id) => ({ id, email: store.users.get(id)?.email ?? '', full_name: store.users.get(id)?.full_name ?? '' })),
            content: escapeText(content),
          };
    store.echo(echo);
    const params = 'streamId' in to ? { type: 'stream', to: to.streamId, topic: to.topic, content } : { type: 'direct', to: to.userIds, content };
    try {
      await api.post('/messages', { ...params, queue_id: store.queueId, local_id: localId, read_by_sender: true });
    } catch (err) {
      store.dropEcho(localId, (err as Error).message);
      throw err;
    }
  }

  async render(content: string): Promise<string> {
    const r = await api.post('/messages/render', { content });
    return r.rendered;
  }

  async toggleReaction(message: Message, emoji: { name: string; code: string; type: string }): Promise<void> {
    const mine = message.reactions.some((r) => r.user_id === this.store.me.user_id && r.emoji_code === emoji.code && r.reaction_type === emoji.type);
    const params = { emoji_name: emoji.name, emoji_code: emoji.code, reaction_type: emoji.type };
    if (mine) await api.delete(`/messages/${message.id}/reactions`, params);
    else await api.post(`/messages/${message.id}/reactions`, params);
  }

  async toggleStar(message: Message): Promise<void> {
    const op = message.flags.includes('starred') ? 'remove' : 'add';
    await api.post('/messages/flags', { messages: [message.id], op, flag: 'starred' });
  }

  async rawContent(id: number): Promise<string> {
    const r = await api.get(`/messages/${id}`, { apply_markdown: false });
    return r.message.content;
  }

  async edit(id: number, content: string): Promise<void> {
    await api.patch(`/messages/${id}`, { content });
  }

  async moveTopic(id: number, topic: string, streamId: number | undefined, mode: 'change_one' | 'change_later' | 'change_all'): Promise<void> {
    await api.patch(`/messages/${id}`, {
      topic,
      stream_id: streamId,
      propagate_mode: mode,
      send_notification_to_old_thread: false,
      send_notification_to_new_thread: true,
    });
  }

  async remove(id: number): Promise<void> {
    await api.delete(`/messages/${id}`);
  }

  async upload(file: File): Promise<{ url: string; filename: string }> {
    const form = new FormData();
    form.append('file', file, file.name);
    const r = await api.upload('/user_uploads', form);
    return { url: r.url ?? r.uri, filename: r.filename ?? file.name };
  }

  private typingSent = 0;
  private typingTo = '';

  /** Tells the others someone types here, at most every 10 s, as the reference. */
  typing(to: { streamId: number; topic: string } | { userIds: number[] } | null, op: 'start' | 'stop'): void {
    if (!to) return;
    const key = JSON.stringify(to);
    const now = Date.now();
    if (op === 'start' && key === this.typingTo && now - this.typingSent < 10_000) return;
    if (op === 'stop' && this.typingTo === '') return;
    this.typingTo = op === 'start' ? key : '';
    this.typingSent = op === 'start' ? now : 0;
    const params = 'streamId' in to ? { type: 'stream', stream_id: to.streamId, topic: to.topic, op } : { type: 'direct', to: to.userIds, op };
    void api.post('/typing', params).catch(() => undefined);
  }

  async presence(active: boolean): Promise<void> {
    const r = await api.post('/users/me/presence', { status: active ? 'active' : 'idle', new_user_input: active, slim_presence: true });
    for (const [id, p] of Object.entries<any>(r.presences ?? {})) this.store.presence.set(Number(id), { active: p.active_timestamp, idle: p.idle_timestamp });
    this.store.changed();
  }
}

function escapeText(s: string): string {
  const esc = s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<p>${esc.replace(/\n/g, '<br>')}</p>`;
}
