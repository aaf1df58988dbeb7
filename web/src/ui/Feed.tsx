import { Icon } from './Icon.tsx';
// The message feed of a view: a windowed list (only the messages near the screen
// are in the page, whatever the length of the history), pages fetched as the
// reader scrolls, messages marked read as they are seen, j/k/r keys.
import { memo } from 'preact/compat';
import { fixUpRendered } from './rendered.ts';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { viewKind, type Narrow } from '../narrow.ts';
import type { Message, Store } from '../state.ts';
import { Avatar } from './Avatar.tsx';
import { formatTime, narrowHashFor, useUi } from './ctx.ts';
import { codeToChar } from './emoji.ts';

const ESTIMATE = 56;
const OVERSCAN = 900;

/** Index of the first item whose bottom is below y (tops has n+1 entries). */
function firstBelow(tops: number[], y: number): number {
  let lo = 0;
  let hi = tops.length - 2;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (tops[mid + 1]! > y) hi = mid;
    else lo = mid + 1;
  }
  return Math.max(0, lo);
}

export function Feed({ narrow }: { narrow: Narrow }) {
  const { store, actions, toast, compose } = useUi();
  const scroller = useRef<HTMLDivElement>(null);
  const heights = useRef(new Map<number, number>());
  const [range, setRange] = useState<[number, number]>([0, 0]);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState('');
  const [selected, setSelected] = useState<number | null>(null);
  const pending = useRef<number | 'bottom' | null>(null);
  const anchor = useRef<{ id: number; offset: number } | null>(null);
  const atBottom = useRef(true);
  const list = store.list;
  const ids = list.ids;
  // Older messages came in front: the window moves with the messages it showed.
  const firstId = useRef<number | undefined>(undefined);
  if (firstId.current !== undefined && ids[0] !== firstId.current) {
    const added = ids.indexOf(firstId.current);
    if (added > 0) {
      range[0] += added;
      range[1] += added;
    }
  }
  firstId.current = ids[0];

  useEffect(() => {
    actions
      .openNarrow(narrow)
      .then((firstUnread) => {
        const ids = store.list.ids;
        const target = firstUnread ?? 'bottom';
        const idx = target === 'bottom' ? ids.length - 1 : ids.indexOf(target);
        setRange([Math.max(0, idx - 25), Math.min(ids.length, idx + 25)]);
        pending.current = target;
        setSelected(firstUnread ?? ids[ids.length - 1] ?? null);
        setLoaded(true);
      })
      .catch((e) => setError(e.message));
  }, []);

  // Refetch a view whose new messages only the server can place (search).
  useEffect(() => {
    if (list.stale) {
      list.stale = false;
      list.foundNewest = false;
      void actions.loadMore('newer');
    }
  });

  const offsets = (): number[] => {
    const t = new Array<number>(ids.length + 1);
    t[0] = 0;
    for (let i = 0; i < ids.length; i++) t[i + 1] = t[i]! + (heights.current.get(ids[i]!) ?? ESTIMATE);
    return t;
  };
  const tops = offsets();
  const passes = useRef(0);
  const start = Math.min(range[0], ids.length);
  const end = Math.min(Math.max(range[1], start), ids.length);

  const computeRange = (el: HTMLDivElement): [number, number] => {
    if (ids.length === 0) return [0, 0];
    const t = offsets();
    const s = firstBelow(t, el.scrollTop - OVERSCAN);
    const e = firstBelow(t, el.scrollTop + el.clientHeight + OVERSCAN) + 1;
    return [s, Math.min(ids.length, e)];
  };

  const rememberAnchor = (el: HTMLDivElement) => {
    for (const item of el.querySelectorAll<HTMLElement>('[data-id]')) {
      if (item.offsetTop + item.offsetHeight > el.scrollTop) {
        anchor.current = { id: Number(item.dataset.id), offset: item.offsetTop - el.scrollTop };
        return;
      }
    }
  };

  // After each render: measure, keep the reader's place, widen or move the window.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    let changed = false;
    for (const item of el.querySelectorAll<HTMLElement>('[data-id]')) {
      const id = Number(item.dataset.id);
      const h = item.offsetHeight;
      if (heights.current.get(id) !== h) {
        heights.current.set(id, h);
        changed = true;
      }
    }
    const p = pending.current;
    if (p !== null) {
      const item = p === 'bottom' ? null : el.querySelector<HTMLElement>(`[data-id="${p}"]`);
      if (p === 'bottom' || !item) el.scrollTop = el.scrollHeight;
      else el.scrollTop = item.offsetTop - 60;
      if (!changed) pending.current = null;
    } else if (atBottom.current) {
      el.scrollTop = el.scrollHeight;
    } else if (anchor.current) {
      const item = el.querySelector<HTMLElement>(`[data-id="${anchor.current.id}"]`);
      if (item) el.scrollTop = item.offsetTop - anchor.current.offset;
    }
    // Spacers only depend on unrendered items, so only a new window needs a render;
    // a bounded number of passes guards against heights that never settle.
    const next = computeRange(el);
    if ((next[0] !== range[0] || next[1] !== range[1]) && passes.current++ < 8) setRange(next);
    else passes.current = 0;
    // Reaching an end of what is loaded fetches the next page (kept in place by the anchor).
    if (loaded && el.scrollTop < 600 && start === 0) void actions.loadMore('older');
    // The anchor always names a message now in the page, so the next change keeps it in place.
    rememberAnchor(el);
    seeVisible(el);
  });

  const seeVisible = (el: HTMLDivElement) => {
    if (document.visibilityState !== 'visible') return;
    const visible: number[] = [];
    for (const item of el.querySelectorAll<HTMLElement>('[data-id]')) {
      const top = item.offsetTop - el.scrollTop;
      if (top < el.clientHeight && top + item.offsetHeight > 0) visible.push(Number(item.dataset.id));
    }
    actions.markRead(visible);
  };

  const onScroll = () => {
    const el = scroller.current!;
    passes.current = 0;
    atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 4;
    rememberAnchor(el);
    const next = computeRange(el);
    if (next[0] !== range[0] || next[1] !== range[1]) setRange(next);
    if (el.scrollTop < 600 && start === 0) void actions.loadMore('older');
    if (el.scrollHeight - el.scrollTop - el.clientHeight < 600 && end === ids.length) void actions.loadMore('newer');
    seeVisible(el);
  };

  // j/k move the selection, r replies to it.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement).closest('input, textarea, select, [role=dialog]') || e.ctrlKey || e.metaKey || e.altKey) return;
      const i = selected === null ? ids.length - 1 : ids.indexOf(selected);
      if (e.key === 'j' || e.key === 'k' || e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        if (e.key.startsWith('Arrow') && (e.target as HTMLElement) !== document.body) return;
        e.preventDefault();
        const j = Math.max(0, Math.min(ids.length - 1, i + (e.key === 'j' || e.key === 'ArrowDown' ? 1 : -1)));
        const id = ids[j];
        if (id === undefined) return;
        setSelected(id);
        atBottom.current = j === ids.length - 1;
        const el = scroller.current!;
        const item = el.querySelector<HTMLElement>(`[data-id="${id}"]`);
        if (item) {
          if (item.offsetTop < el.scrollTop) el.scrollTop = item.offsetTop - 40;
          else if (item.offsetTop + item.offsetHeight > el.scrollTop + el.clientHeight)
            el.scrollTop = item.offsetTop + item.offsetHeight - el.clientHeight + 40;
        } else pending.current = id;
        if (j === 0) void actions.loadMore('older');
      } else if (e.key === 'r' || e.key === 'Enter') {
        const m = selected !== null ? store.messages.get(selected) : undefined;
        if (!m) return;
        e.preventDefault();
        compose(replyTarget(store, m));
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [ids, selected]);

  const kind = viewKind(narrow);
  const mixed = kind !== 'topic' && kind !== 'dm';
  return (
    <div class="feed" id="message-feed" ref={scroller} onScroll={onScroll} tabIndex={-1} role="region" aria-busy={!loaded} aria-labelledby="view-title">
      {error && (
        <p class="form-error" role="alert">
          Could not load messages: {error}
        </p>
      )}
      {loaded &&
        start === 0 &&
        (list.foundOldest ? (
          <div class="feed-edge">{ids.length === 0 ? 'No messages here yet.' : 'The beginning of this view.'}</div>
        ) : (
          <div class="feed-edge">Loading older messages…</div>
        ))}
      {!loaded && !error && <div class="feed-edge">Loading…</div>}
      <div style={{ height: `${tops[start]}px` }} aria-hidden="true" />
      {ids.slice(start, end).map((id, k) => {
        const i = start + k;
        const m = store.messages.get(id);
        if (!m) return null;
        const prev = i > 0 ? store.messages.get(ids[i - 1]!) : undefined;
        return (
          <MessageItem
            key={id}
            m={m}
            v={`${m.content.length}|${m.reactions.length}|${m.flags.join()}|${m.subject}|${m.stream_id}|${m.failed ?? ''}|${m.last_edit_timestamp ?? ''}|${store.unreads.isUnread(m.id)}`}
            showRecipient={mixed && (!prev || conversationKey(prev) !== conversationKey(m))}
            showSender={!prev || prev.sender_id !== m.sender_id || m.timestamp - prev.timestamp > 300 || conversationKey(prev) !== conversationKey(m)}
            selected={selected === id}
            onSelect={setSelected}
            setsize={ids.length}
            posinset={i + 1}
            toast={toast}
          />
        );
      })}
      <div style={{ height: `${tops[ids.length]! - tops[end]!}px` }} aria-hidden="true" />
      <TypingLine narrow={narrow} />
    </div>
  );
}

function conversationKey(m: Message): string {
  return m.type === 'stream'
    ? `s${m.stream_id}:${m.subject.toLowerCase()}`
    : `d${JSON.stringify((m.display_recipient as { id: number }[]).map((r) => r.id).sort())}`;
}

export function replyTarget(store: Store, m: Message) {
  if (m.type === 'stream') return { streamId: m.stream_id!, topic: m.subject };
  const ids = (m.display_recipient as { id: number }[]).map((r) => r.id).filter((id) => id !== store.me.user_id);
  return { userIds: ids.length ? ids : [store.me.user_id] };
}

function TypingLine({ narrow }: { narrow: Narrow }) {
  const { store } = useUi();
  const kind = viewKind(narrow);
  let where = '';
  if (kind === 'topic') where = `s:${narrow[0]!.operand}:${narrow[1]!.operand.toLowerCase()}`;
  if (kind === 'dm')
    where = `d:${narrow[0]!.operand
      .split(',')
      .map(Number)
      .filter((id) => id !== store.me.user_id)
      .sort((a, b) => a - b)
      .join(',')}`;
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((n) => n + 1), 5000);
    return () => clearInterval(t);
  }, []);
  const who = where ? store.typingAt(where) : [];
  return (
    <div class="typing" aria-live="polite">
      {who.length > 0 && `${who.map((id) => store.users.get(id)?.full_name ?? 'Someone').join(', ')} ${who.length > 1 ? 'are' : 'is'} typing…`}
    </div>
  );
}

interface ItemProps {
  m: Message;
  v: string;
  showRecipient: boolean;
  showSender: boolean;
  selected: boolean;
  onSelect(id: number): void;
  setsize: number;
  posinset: number;
  toast(s: string): void;
}

const MessageItem = memo(
  function MessageItem(p: ItemProps) {
    const { store, actions, showUser, pickEmoji, openModal, compose } = useUi();
    const { m } = p;
    const [editing, setEditing] = useState<string | null>(null);
    const content = useRef<HTMLDivElement>(null);
    const me = store.me.user_id;
    const own = m.sender_id === me;
    const mentioned = m.flags.some((f) => f.includes('mentioned'));
    useLayoutEffect(() => {
      if (content.current) fixUpRendered(content.current);
    });
    const run = (fn: () => Promise<unknown>) => void fn().catch((e) => p.toast(e.message));
    const reactions = groupReactions(m);
    const startEdit = () => run(async () => setEditing(await actions.rawContent(m.id)));
    const saveEdit = (e: Event) => {
      e.preventDefault();
      const text = editing ?? '';
      run(async () => {
        await actions.edit(m.id, text);
        setEditing(null);
      });
    };
    const streamName = m.type === 'stream' ? (store.streams.get(m.stream_id!)?.name ?? String(m.display_recipient)) : '';
    return (
      // biome-ignore lint/a11y/useKeyWithClickEvents: a click selects the message; from the keyboard j, k and the arrows do
      <article
        class={`msg ${p.selected ? 'selected' : ''} ${mentioned ? 'mentioned' : ''} ${m.local_id ? 'local' : ''} ${store.unreads.isUnread(m.id) ? 'unread' : ''}`}
        data-id={m.id}
        aria-setsize={p.setsize}
        aria-posinset={p.posinset}
        aria-label={`${m.sender_full_name}, ${formatTime(m.timestamp)}`}
        onClick={() => p.onSelect(m.id)}
      >
        {p.showRecipient && (
          <div class="recipient-bar">
            {m.type === 'stream' ? (
              <>
                <a href={narrowHashFor(store, { streamId: m.stream_id })} class="rb-channel" style={{ borderColor: store.subs.get(m.stream_id!)?.color }}>
                  #{streamName}
                </a>
                <span aria-hidden="true"> › </span>
                <a href={narrowHashFor(store, { streamId: m.stream_id, topic: m.subject })} class="rb-topic">
                  {m.subject || store.realm.realm_empty_topic_display_name || 'general chat'}
                </a>
              </>
            ) : (
              <a href={`#narrow/dm/${replyTarget(store, m).userIds!.join(',')}`}>
                Direct message with{' '}
                {(m.display_recipient as { id: number; full_name: string }[])
                  .filter((r) => r.id !== me)
                  .map((r) => r.full_name)
                  .join(', ') || 'yourself'}
              </a>
            )}
          </div>
        )}
        <div class={`msg-row ${p.showSender ? 'first' : ''}`}>
          <div class="msg-gutter">
            {p.showSender ? (
              <button type="button" class="avatar-button" onClick={() => showUser(m.sender_id)} tabIndex={-1} aria-hidden="true">
                <Avatar store={store} userId={m.sender_id} fallback={m.avatar_url} name={m.sender_full_name} />
              </button>
            ) : (
              <time class="gutter-time">{new Date(m.timestamp * 1000).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })}</time>
            )}
          </div>
          <div class="msg-main">
            {p.showSender && (
              <div class="msg-head">
                <button type="button" class="sender" onClick={() => showUser(m.sender_id)}>
                  {m.sender_full_name}
                </button>
                <time dateTime={new Date(m.timestamp * 1000).toISOString()}>{formatTime(m.timestamp)}</time>
              </div>
            )}
            {editing !== null ? (
              <form class="edit-form" onSubmit={saveEdit}>
                <label class="visually-hidden" for={`edit-${m.id}`}>
                  Edit message
                </label>
                <textarea
                  id={`edit-${m.id}`}
                  value={editing}
                  onInput={(e) => setEditing((e.target as HTMLTextAreaElement).value)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter' && !e.shiftKey) saveEdit(e);
                    if (e.key === 'Escape') setEditing(null);
                  }}
                  ref={(el) => el?.focus()}
                />
                <div class="edit-buttons">
                  <button type="submit" class="primary">
                    Save
                  </button>
                  <button type="button" onClick={() => setEditing(null)}>
                    Cancel
                  </button>
                </div>
              </form>
            ) : (
              <div class="msg-content rendered" ref={content} dangerouslySetInnerHTML={{ __html: m.content }} />
            )}
            <div class="markers">
              {m.last_edit_timestamp && <span class="marker">(edited)</span>}
              {m.last_moved_timestamp && !m.last_edit_timestamp && <span class="marker">(moved)</span>}
              {m.local_id && !m.failed && <span class="marker">sending…</span>}
              {m.failed && (
                <span class="marker error" role="alert">
                  Not sent: {m.failed}
                </span>
              )}
            </div>
            {reactions.length > 0 && (
              <div class="reactions" role="group" aria-label="Reactions">
                {reactions.map((r) => (
                  <button
                    type="button"
                    key={r.code}
                    class={`reaction ${r.mine ? 'mine' : ''}`}
                    aria-pressed={r.mine}
                    title={`${r.names.join(', ')} reacted with :${r.name}:`}
                    aria-label={`${r.name}: ${r.count}`}
                    onClick={() => run(() => actions.toggleReaction(m, { name: r.name, code: r.code, type: r.type }))}
                  >
                    <EmojiGlyph type={r.type} code={r.code} name={r.name} /> {r.count}
                  </button>
                ))}
                <button
                  type="button"
                  class="reaction add"
                  aria-label="Add a reaction"
                  onClick={(e) => pickEmoji(e.currentTarget as HTMLElement, (emoji) => run(() => actions.toggleReaction(m, emoji)))}
                >
                  +
                </button>
              </div>
            )}
          </div>
          {!m.local_id && (
            <div class="msg-actions" role="toolbar" aria-label="Message actions">
              <button
                type="button"
                aria-label="Add a reaction"
                title="Add a reaction"
                onClick={(e) => pickEmoji(e.currentTarget as HTMLElement, (emoji) => run(() => actions.toggleReaction(m, emoji)))}
              >
                <Icon name="smile" />
              </button>
              <button
                type="button"
                aria-label={m.flags.includes('starred') ? 'Unstar' : 'Star'}
                aria-pressed={m.flags.includes('starred')}
                title="Star"
                class={m.flags.includes('starred') ? 'starred' : ''}
                onClick={() => run(() => actions.toggleStar(m))}
              >
                <Icon name="star" filled={m.flags.includes('starred')} />
              </button>
              <button type="button" aria-label="Reply" title="Reply (r)" onClick={() => compose(replyTarget(store, m))}>
                <Icon name="reply" />
              </button>
              {own && (
                <button type="button" aria-label="Edit" title="Edit" onClick={startEdit}>
                  <Icon name="edit" />
                </button>
              )}
              {m.type === 'stream' && (
                <button type="button" aria-label="Move topic" title="Move or rename topic" onClick={() => openModal('move', m)}>
                  <Icon name="move" />
                </button>
              )}
              {(own || store.canAdmin()) && (
                <button type="button" aria-label="Delete" title="Delete" onClick={() => confirm('Delete this message?') && run(() => actions.remove(m.id))}>
                  <Icon name="trash" />
                </button>
              )}
            </div>
          )}
        </div>
      </article>
    );
  },
  (a, b) =>
    a.v === b.v &&
    a.m === b.m &&
    a.showRecipient === b.showRecipient &&
    a.showSender === b.showSender &&
    a.selected === b.selected &&
    a.setsize === b.setsize &&
    a.posinset === b.posinset,
);

function EmojiGlyph({ type, code, name }: { type: string; code: string; name: string }) {
  const { store } = useUi();
  if (type === 'realm_emoji') {
    const e = store.realmEmoji[code];
    return e ? <img class="emoji-img" src={e.source_url} alt={`:${name}:`} /> : <span>:{name}:</span>;
  }
  if (type === 'unicode_emoji') return <span aria-hidden="true">{codeToChar(code)}</span>;
  return <span>:{name}:</span>;
}

function groupReactions(m: Message) {
  const { store } = useUi();
  const groups = new Map<string, { name: string; code: string; type: string; count: number; mine: boolean; names: string[] }>();
  for (const r of m.reactions) {
    const k = `${r.reaction_type}:${r.emoji_code}`;
    let g = groups.get(k);
    if (!g) groups.set(k, (g = { name: r.emoji_name, code: r.emoji_code, type: r.reaction_type, count: 0, mine: false, names: [] }));
    g.count++;
    g.mine ||= r.user_id === store.me.user_id;
    g.names.push(store.users.get(r.user_id)?.full_name ?? 'Someone');
  }
  return [...groups.values()];
}
