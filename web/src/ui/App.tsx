import { Icon } from './Icon.tsx';
// The chat app: registers, keeps the event loop running, and lays out the
// sidebar, the feed of the current view, the composer and the dialogs.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Actions } from '../actions.ts';
import { api, ApiError } from '../api.ts';
import { EventLoop, type ConnectionState } from '../events.ts';
import { hashToNarrow, narrowToHash, narrowToSearch, parseSearch, viewKind, type Narrow } from '../narrow.ts';
import { Store } from '../state.ts';
import { Compose } from './Compose.tsx';
import { UiContext, type ComposeTarget, type Ui } from './ctx.ts';
import { EmojiPicker } from './EmojiPicker.tsx';
import { Feed } from './Feed.tsx';
import { useHash, useStore } from './hooks.ts';
import { AdminDialog, MoveDialog, SettingsDialog, UserCard } from './Dialogs.tsx';
import { PeopleList, Sidebar } from './Sidebar.tsx';
import { ViewHeader } from './ViewHeader.tsx';

export function App() {
  const store = useMemo(() => new Store(), []);
  const actions = useMemo(() => new Actions(store), [store]);
  const [ready, setReady] = useState(false);
  const [conn, setConn] = useState<{ state: ConnectionState; detail?: string }>({ state: 'connecting' });
  const [fatal, setFatal] = useState('');
  const [registrations, setRegistrations] = useState(0);

  useEffect(() => {
    const loop = new EventLoop(store, {
      onState: (state, detail) => setConn({ state, detail }),
      onRegistered: () => {
        setReady(true);
        setRegistrations((n) => n + 1);
      },
      onLoggedOut: () => location.assign(`/login?next=${encodeURIComponent(location.pathname + location.hash)}`),
    });
    const start = async () => {
      try {
        actions.prefetch(hashToNarrow(location.hash) ?? []);
        await loop.start();
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) return location.assign('/login');
        setFatal((err as Error).message);
        setTimeout(() => void start(), 3000);
      }
    };
    void start();
    const online = () => loop.nudge();
    window.addEventListener('online', online);
    return () => {
      loop.stop();
      window.removeEventListener('online', online);
    };
  }, [store, actions]);

  if (!ready) {
    return (
      <div class="loading-screen" role="status">
        {fatal ? <p class="form-error">Cannot load Confab: {fatal} Retrying…</p> : <p>Loading Confab…</p>}
      </div>
    );
  }
  return <Chat store={store} actions={actions} conn={conn} registrations={registrations} />;
}

type Dialog = { kind: 'settings' | 'admin' | 'move' | 'user'; data?: any } | null;

function Chat({
  store,
  actions,
  conn,
  registrations,
}: {
  store: Store;
  actions: Actions;
  conn: { state: ConnectionState; detail?: string };
  registrations: number;
}) {
  useStore(store);
  const hash = useHash();
  const narrow: Narrow = useMemo(() => hashToNarrow(hash) ?? [], [hash]);
  const [composeTarget, setComposeTarget] = useState<{ target: ComposeTarget | null; focusTopic?: boolean; quote?: string; n: number } | null>(null);
  const [toasts, setToasts] = useState<{ id: number; text: string }[]>([]);
  const [dialog, setDialog] = useState<Dialog>(null);
  const [picker, setPicker] = useState<{ anchor: HTMLElement; onPick: (e: any) => void } | null>(null);
  const [navOpen, setNavOpen] = useState(false);
  const searchRef = useRef<HTMLInputElement>(null);

  const ui: Ui = useMemo(
    () => ({
      store,
      actions,
      showUser: (userId) => setDialog({ kind: 'user', data: userId }),
      compose: (target, opts = {}) => setComposeTarget((c) => ({ target, ...opts, n: (c?.n ?? 0) + 1 })),
      toast: (text) => {
        const id = Math.random();
        setToasts((t) => [...t, { id, text }]);
        setTimeout(() => setToasts((t) => t.filter((x) => x.id !== id)), 6000);
      },
      pickEmoji: (anchor, onPick) => setPicker({ anchor, onPick }),
      openModal: (kind, data) => setDialog({ kind, data }),
    }),
    [store, actions],
  );

  useEffect(() => setNavOpen(false), [hash]);

  // Presence: active while the page has focus, every minute as the reference.
  useEffect(() => {
    const ping = () => void actions.presence(document.hasFocus()).catch(() => undefined);
    ping();
    const t = setInterval(ping, 60_000);
    return () => clearInterval(t);
  }, [actions]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      const typing = t.closest('input, textarea, select, [contenteditable]');
      if (e.key === 'Escape') {
        if (picker) setPicker(null);
        else if (dialog) setDialog(null);
        else if (typing) (t as HTMLElement).blur();
        else setNavOpen(false);
        return;
      }
      if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === '/') {
        e.preventDefault();
        searchRef.current?.focus();
      } else if (e.key === 'c') {
        e.preventDefault();
        const k = viewKind(narrow);
        const sid = narrow.find((x) => x.operator === 'channel');
        ui.compose(k === 'dm' ? { userIds: narrow[0]!.operand.split(',').map(Number) } : sid ? { streamId: Number(sid.operand), topic: '' } : null, {
          focusTopic: true,
        });
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [narrow, dialog, picker, ui]);

  const onSearch = (e: Event) => {
    e.preventDefault();
    const q = searchRef.current!.value.trim();
    if (!q) return;
    const n = parseSearch(q, {
      channel: (name) => [...store.streams.values()].find((s) => s.name.toLowerCase() === name.toLowerCase())?.stream_id,
      user: (email) =>
        [...store.users.values()].find((u) => u.email.toLowerCase() === email.toLowerCase() || u.full_name.toLowerCase() === email.toLowerCase())?.user_id,
    });
    location.hash = narrowToHash(n);
  };
  const searchText =
    viewKind(narrow) === 'search' ? narrowToSearch(narrow, { channel: (id) => store.streams.get(id)?.name, user: (id) => store.users.get(id)?.email }) : '';

  return (
    <UiContext.Provider value={ui}>
      <div class={`app ${navOpen ? 'nav-open' : ''}`}>
        <a class="skip-link" href="#message-feed">
          Skip to messages
        </a>
        <header class="topbar">
          <button type="button" class="icon-button nav-toggle" aria-label="Open the channel list" aria-expanded={navOpen} onClick={() => setNavOpen(!navOpen)}>
            <Icon name="menu" />
          </button>
          <a class="brand" href="#feed">
            <span class="logo" aria-hidden="true">
              C
            </span>
            <span class="org-name">{store.realm.realm_name || 'Confab'}</span>
          </a>
          <form role="search" class="search" onSubmit={onSearch}>
            <label for="search-input" class="visually-hidden">
              Search messages
            </label>
            <SearchInput inputRef={searchRef} initial={searchText} key={hash} />
          </form>
          <ConnectionBadge conn={conn} />
          <button type="button" class="icon-button" aria-label="Settings" title="Settings" onClick={() => setDialog({ kind: 'settings' })}>
            <Icon name="gear" />
          </button>
          {store.canAdmin() && (
            <button
              type="button"
              class="icon-button"
              aria-label="Organization administration"
              title="Organization administration"
              onClick={() => setDialog({ kind: 'admin' })}
            >
              <Icon name="shield" />
            </button>
          )}
          <button
            type="button"
            class="text-button"
            onClick={() => void api.post('/accounts/logout', {}, { raw: true }).finally(() => location.assign('/login'))}
          >
            Log out
          </button>
        </header>
        <nav class="left" aria-label="Views, channels and direct messages">
          <Sidebar narrow={narrow} />
        </nav>
        <div class="scrim" onClick={() => setNavOpen(false)} aria-hidden="true" />
        <main class="center" aria-label="Messages">
          <ViewHeader narrow={narrow} />
          <Feed narrow={narrow} key={`${hash}|${registrations}`} />
          <Compose narrow={narrow} request={composeTarget} />
        </main>
        <aside class="right" aria-label="People">
          <PeopleList />
        </aside>
        <div class="toasts" role="status" aria-live="polite">
          {toasts.map((t) => (
            <div class="toast" key={t.id}>
              {t.text}
            </div>
          ))}
        </div>
        {picker && (
          <EmojiPicker
            anchor={picker.anchor}
            onClose={() => setPicker(null)}
            onPick={(e) => {
              picker.onPick(e);
              setPicker(null);
            }}
          />
        )}
        {dialog?.kind === 'user' && <UserCard userId={dialog.data} onClose={() => setDialog(null)} />}
        {dialog?.kind === 'settings' && <SettingsDialog onClose={() => setDialog(null)} />}
        {dialog?.kind === 'admin' && <AdminDialog onClose={() => setDialog(null)} />}
        {dialog?.kind === 'move' && <MoveDialog message={dialog.data} onClose={() => setDialog(null)} />}
      </div>
    </UiContext.Provider>
  );
}

function ConnectionBadge({ conn }: { conn: { state: ConnectionState; detail?: string } }) {
  if (conn.state === 'live') return null;
  return (
    <div class={`conn conn-${conn.state}`} role="status">
      {conn.state === 'offline' ? `Offline — reconnecting… (${conn.detail ?? ''})` : 'Reconnecting…'}
    </div>
  );
}

/**
 * The search field keeps what is typed in its own state: a re-render of the
 * page (an event arriving) must not reset it to the current view's query.
 * A new view (key) starts again from that view's query.
 */
function SearchInput({ inputRef, initial }: { inputRef: { current: HTMLInputElement | null }; initial: string }) {
  const [text, setText] = useState(initial);
  return (
    <input
      id="search-input"
      ref={inputRef}
      type="search"
      placeholder="Search (channel:name topic:x sender:email is:starred)"
      value={text}
      onInput={(e) => setText((e.target as HTMLInputElement).value)}
    />
  );
}
