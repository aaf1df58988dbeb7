// The left sidebar (views, channels with their topics, DM conversations) and the
// right one (people and their presence).
import { dmKey, viewKind, type Narrow } from '../narrow.ts';
import type { Store } from '../state.ts';
import { Avatar } from './Avatar.tsx';
import { narrowHashFor, useUi } from './ctx.ts';

function Count({ n, label }: { n: number; label: string }) {
  // The badge shows the number; screen readers hear the sentence beside it.
  return n > 0 ? (
    <>
      <span class="count" aria-hidden="true">
        {n}
      </span>
      <span class="visually-hidden">{`${n} unread ${label}`}</span>
    </>
  ) : null;
}

function dmName(store: Store, key: string): string {
  return key
    .split(',')
    .map((id) => store.users.get(Number(id))?.full_name ?? 'Unknown user')
    .join(', ');
}

export function Sidebar({ narrow }: { narrow: Narrow }) {
  const { store } = useUi();
  const counts = store.unreads.counts(store.isTopicMuted);
  const kind = viewKind(narrow);
  const activeStream = Number(narrow.find((t) => t.operator === 'channel')?.operand ?? NaN);
  const activeTopic = narrow.find((t) => t.operator === 'topic')?.operand.toLowerCase();
  const activeDm = kind === 'dm' ? narrow[0]!.operand : '';
  const subs = [...store.subs.values()].sort(
    (a, b) => Number(!!b.pin_to_top) - Number(!!a.pin_to_top) || Number(a.is_muted) - Number(b.is_muted) || a.name.localeCompare(b.name),
  );
  const dms = [...store.dmConversations.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15);
  const cur = (yes: boolean) => (yes ? { 'aria-current': 'page' as const, class: 'active' } : {});
  return (
    <div class="sidebar">
      <ul class="views" aria-label="Views">
        <li {...cur(kind === 'feed')}>
          <a href="#feed">
            <span aria-hidden="true">▤</span> Combined feed <Count n={counts.total} label="messages" />
          </a>
        </li>
        <li {...cur(kind === 'mentioned')}>
          <a href="#narrow/is/mentioned">
            <span aria-hidden="true">@</span> Mentions <Count n={counts.mentions} label="mentions" />
          </a>
        </li>
        <li {...cur(kind === 'starred')}>
          <a href="#narrow/is/starred">
            <span aria-hidden="true">★</span> Starred messages
          </a>
        </li>
        <li {...cur(kind === 'dms')}>
          <a href="#narrow/is/dm">
            <span aria-hidden="true">✉</span> Direct messages <Count n={counts.dmTotal} label="direct messages" />
          </a>
        </li>
      </ul>
      <h2 class="sidebar-heading">Channels</h2>
      <ul class="channels" aria-label="Channels">
        {subs.map((s) => {
          const active = s.stream_id === activeStream;
          const topics = active
            ? store.topicsOf(s.stream_id).slice(0, 12)
            : store
                .topicsOf(s.stream_id)
                .filter((t) => counts.topic(s.stream_id, t.name) > 0)
                .slice(0, 3);
          return (
            <li key={s.stream_id} class={`channel ${s.is_muted ? 'muted' : ''}`} data-stream-id={s.stream_id}>
              <a
                href={narrowHashFor(store, { streamId: s.stream_id })}
                class={active && kind === 'channel' ? 'active' : ''}
                aria-current={active && kind === 'channel' ? 'page' : undefined}
              >
                <span class="swatch" style={{ background: s.color }} aria-hidden="true">
                  {s.invite_only ? '🔒' : '#'}
                </span>
                <span class="name">{s.name}</span>
                {s.is_muted && <span class="visually-hidden">(muted)</span>}
                <Count n={counts.stream(s.stream_id)} label="messages" />
              </a>
              {topics.length > 0 && (
                <ul class="topics" aria-label={`Topics in ${s.name}`}>
                  {topics.map((t) => {
                    const on = active && activeTopic === t.name.toLowerCase();
                    const muted = store.isTopicMuted(s.stream_id, t.name);
                    return (
                      <li key={t.name} class={muted ? 'muted' : ''}>
                        <a
                          href={narrowHashFor(store, { streamId: s.stream_id, topic: t.name })}
                          class={on ? 'active' : ''}
                          aria-current={on ? 'page' : undefined}
                        >
                          <span class="name">{t.name || store.realm.realm_empty_topic_display_name || 'general chat'}</span>
                          <Count n={counts.topic(s.stream_id, t.name)} label="messages" />
                        </a>
                      </li>
                    );
                  })}
                </ul>
              )}
            </li>
          );
        })}
      </ul>
      <h2 class="sidebar-heading">Direct messages</h2>
      <ul class="dms" aria-label="Direct message conversations">
        {dms.length === 0 && <li class="empty">No conversations yet</li>}
        {dms.map(([key]) => (
          <li key={key}>
            <a href={`#narrow/dm/${key}`} class={activeDm === key ? 'active' : ''} aria-current={activeDm === key ? 'page' : undefined}>
              <PresenceDot store={store} userId={Number(key.split(',')[0])} />
              <span class="name">{dmName(store, key)}</span>
              <Count n={counts.dm(key)} label="messages" />
            </a>
          </li>
        ))}
      </ul>
    </div>
  );
}

export function presenceOf(store: Store, userId: number): 'active' | 'idle' | 'offline' {
  const p = store.presence.get(userId);
  const now = Date.now() / 1000;
  if (p && now - p.active < 140) return 'active';
  if (p && now - Math.max(p.idle, p.active) < 140) return 'idle';
  return 'offline';
}

function PresenceDot({ store, userId }: { store: Store; userId: number }) {
  const p = presenceOf(store, userId);
  return <span class={`presence presence-${p}`} title={p} aria-label={p} role="img" />;
}

export function PeopleList() {
  const { store, showUser } = useUi();
  const rank = { active: 0, idle: 1, offline: 2 };
  const people = [...store.users.values()]
    .filter((u) => u.is_active !== false && !u.is_bot)
    .map((u) => ({ u, p: presenceOf(store, u.user_id) }))
    .sort((a, b) => rank[a.p] - rank[b.p] || a.u.full_name.localeCompare(b.u.full_name))
    .slice(0, 200);
  return (
    <div class="people">
      <h2 class="sidebar-heading">People</h2>
      <ul aria-label="People in this organization">
        {people.map(({ u }) => (
          <li key={u.user_id}>
            <button type="button" class="person" onClick={() => showUser(u.user_id)}>
              <PresenceDot store={store} userId={u.user_id} />
              <Avatar store={store} userId={u.user_id} size="tiny" />
              <span class="name">{u.full_name}</span>
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}

export { dmKey };
