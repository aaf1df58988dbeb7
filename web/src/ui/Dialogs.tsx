import { Icon } from './Icon.tsx';
// Dialogs: a user's card, personal settings, organization administration, and
// moving a topic.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ROLE_ADMIN, ROLE_GUEST, ROLE_MEMBER, ROLE_MODERATOR, ROLE_OWNER, type Message } from '../state.ts';
import { Avatar } from './Avatar.tsx';
import { useUi } from './ctx.ts';
import { presenceOf } from './Sidebar.tsx';
import { setTheme } from './theme.ts';

const ROLE_NAMES: Record<number, string> = {
  [ROLE_OWNER]: 'Owner',
  [ROLE_ADMIN]: 'Administrator',
  [ROLE_MODERATOR]: 'Moderator',
  [ROLE_MEMBER]: 'Member',
  [ROLE_GUEST]: 'Guest',
};

function Modal({ title, onClose, children, wide }: { title: string; onClose(): void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const prev = document.activeElement as HTMLElement | null;
    ref.current?.querySelector<HTMLElement>('input, select, textarea, button:not(.close)')?.focus();
    return () => prev?.focus();
  }, []);
  return (
    <>
      <div class="overlay" onClick={onClose} aria-hidden="true" />
      <div class={`modal ${wide ? 'wide' : ''}`} role="dialog" aria-modal="true" aria-labelledby="modal-title" ref={ref}>
        <div class="modal-head">
          <h2 id="modal-title">{title}</h2>
          <button type="button" class="icon-button close" aria-label="Close" onClick={onClose}>
            <Icon name="close" />
          </button>
        </div>
        <div class="modal-body">{children}</div>
      </div>
    </>
  );
}

/** Runs a request, then shows its outcome in a status line. */
function useAction(): [string, string, (fn: () => Promise<unknown>, done?: string) => void] {
  const [ok, setOk] = useState('');
  const [err, setErr] = useState('');
  return [
    ok,
    err,
    (fn, done = 'Saved.') => {
      setOk('');
      setErr('');
      fn().then(
        () => setOk(done),
        (e) => setErr(e.message),
      );
    },
  ];
}

function Status({ ok, err }: { ok: string; err: string }) {
  return (
    <>
      {ok && (
        <p class="form-ok" role="status">
          {ok}
        </p>
      )}
      {err && (
        <p class="form-error" role="alert">
          {err}
        </p>
      )}
    </>
  );
}

export function UserCard({ userId, onClose }: { userId: number; onClose(): void }) {
  const { store, compose } = useUi();
  const u = store.users.get(userId);
  if (!u) return null;
  const p = presenceOf(store, userId);
  return (
    <Modal title={u.full_name} onClose={onClose}>
      <div class="user-card">
        <Avatar store={store} userId={userId} size="large" />
        <dl>
          <dt>Email</dt>
          <dd>{u.email}</dd>
          <dt>Role</dt>
          <dd>{ROLE_NAMES[u.role] ?? 'Member'}</dd>
          <dt>Status</dt>
          <dd>
            <span class={`presence presence-${p}`} aria-hidden="true" /> {p === 'active' ? 'Active now' : p === 'idle' ? 'Idle' : 'Offline'}
          </dd>
          {u.timezone && (
            <>
              <dt>Local time</dt>
              <dd>{new Date().toLocaleTimeString(undefined, { timeZone: u.timezone, hour: '2-digit', minute: '2-digit' })}</dd>
            </>
          )}
          {u.date_joined && (
            <>
              <dt>Joined</dt>
              <dd>{new Date(u.date_joined).toLocaleDateString()}</dd>
            </>
          )}
        </dl>
        <div class="row">
          <a class="button" href={`#narrow/dm/${userId}`} onClick={onClose}>
            Direct messages
          </a>
          <button
            type="button"
            class="primary"
            onClick={() => {
              onClose();
              compose({ userIds: [userId] });
            }}
          >
            Send a message
          </button>
        </div>
      </div>
    </Modal>
  );
}

export function SettingsDialog({ onClose }: { onClose(): void }) {
  const { store } = useUi();
  const [ok, err, act] = useAction();
  const s = store.settings;
  const setSetting = (name: string, value: unknown) => act(() => api.patch('/settings', { [name]: value }));
  const check = (name: string, label: string) => (
    <label class="check">
      <input type="checkbox" checked={!!s[name]} onChange={(e) => setSetting(name, (e.target as HTMLInputElement).checked)} /> {label}
    </label>
  );
  return (
    <Modal title="Personal settings" onClose={onClose} wide>
      <section aria-labelledby="set-profile">
        <h3 id="set-profile">Profile</h3>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            act(() => api.patch('/settings', { full_name: (document.getElementById('set-name') as HTMLInputElement).value }));
          }}
        >
          <label for="set-name">Name</label>
          <div class="row">
            <input id="set-name" defaultValue={store.me.full_name} />
            <button type="submit" class="primary">
              Save name
            </button>
          </div>
        </form>
        <div class="row avatar-row">
          <Avatar store={store} userId={store.me.user_id} size="large" />
          <label class="button">
            Upload a new avatar
            <input
              type="file"
              accept="image/*"
              hidden
              onChange={(e) => {
                const f = (e.target as HTMLInputElement).files?.[0];
                if (!f) return;
                const form = new FormData();
                form.append('file', f, f.name);
                act(() => api.upload('/users/me/avatar', form), 'Avatar changed.');
              }}
            />
          </label>
        </div>
      </section>
      <section aria-labelledby="set-password">
        <h3 id="set-password">Password</h3>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const v = (id: string) => (document.getElementById(id) as HTMLInputElement).value;
            act(() => api.patch('/settings', { old_password: v('old-pw'), new_password: v('new-pw') }), 'Password changed.');
          }}
        >
          <label for="old-pw">Current password</label>
          <input id="old-pw" type="password" autocomplete="current-password" />
          <label for="new-pw">New password</label>
          <input id="new-pw" type="password" autocomplete="new-password" />
          <button type="submit" class="primary">
            Change password
          </button>
        </form>
      </section>
      <section aria-labelledby="set-display">
        <h3 id="set-display">Display</h3>
        <label for="set-theme">Theme</label>
        <select
          id="set-theme"
          defaultValue={localStorage.getItem('confab-theme') ?? 'system'}
          onChange={(e) => setTheme((e.target as HTMLSelectElement).value as 'light')}
        >
          <option value="system">Same as the system</option>
          <option value="light">Light</option>
          <option value="dark">Dark</option>
        </select>
        {check('twenty_four_hour_time', 'Show time in 24-hour format')}
        {check('fluid_layout_width', 'Use the full width of wide screens')}
        {check('starred_message_counts', 'Show counts of starred messages')}
      </section>
      <section aria-labelledby="set-notify">
        <h3 id="set-notify">Notifications</h3>
        {check('enable_desktop_notifications', 'Desktop notifications for direct messages and mentions')}
        {check('enable_sounds', 'Sounds')}
        {check('enable_offline_email_notifications', 'Email me about direct messages and mentions when I am away')}
        {check('enable_stream_desktop_notifications', 'Desktop notifications for every channel message')}
        {check('pm_content_in_desktop_notifications', 'Include message content in notifications')}
      </section>
      <Status ok={ok} err={err} />
    </Modal>
  );
}

export function AdminDialog({ onClose }: { onClose(): void }) {
  const { store } = useUi();
  const [ok, err, act] = useAction();
  const [filter, setFilter] = useState('');
  const [link, setLink] = useState('');
  const v = (id: string) => (document.getElementById(id) as HTMLInputElement).value;
  const defaultStreams = [...store.subs.values()].map((s) => s.stream_id);
  const users = [...store.users.values()]
    .filter((u) => !u.is_bot && (u.full_name.toLowerCase().includes(filter.toLowerCase()) || u.email.includes(filter.toLowerCase())))
    .slice(0, 50);
  return (
    <Modal title="Organization administration" onClose={onClose} wide>
      <section aria-labelledby="adm-channel">
        <h3 id="adm-channel">Create a channel</h3>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            act(
              () =>
                api.post('/users/me/subscriptions', {
                  subscriptions: [{ name: v('new-channel'), description: v('new-channel-desc') }],
                  invite_only: (document.getElementById('new-channel-private') as HTMLInputElement).checked,
                }),
              'Channel created.',
            );
          }}
        >
          <label for="new-channel">Name</label>
          <input id="new-channel" required />
          <label for="new-channel-desc">Description</label>
          <input id="new-channel-desc" />
          <label class="check">
            <input id="new-channel-private" type="checkbox" /> Private
          </label>
          <button type="submit" class="primary">
            Create channel
          </button>
        </form>
      </section>
      <section aria-labelledby="adm-invite">
        <h3 id="adm-invite">Invite people</h3>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            act(
              () =>
                api.post('/invites', {
                  invitee_emails: v('invite-emails'),
                  stream_ids: defaultStreams,
                  invite_as: Number(v('invite-role')),
                  invite_expires_in_minutes: 14400,
                }),
              'Invitations sent.',
            );
          }}
        >
          <label for="invite-emails">Email addresses (separated by commas)</label>
          <input id="invite-emails" required />
          <label for="invite-role">Role</label>
          <select id="invite-role" defaultValue={String(ROLE_MEMBER)}>
            {[ROLE_GUEST, ROLE_MEMBER, ROLE_MODERATOR, ROLE_ADMIN].map((r) => (
              <option key={r} value={r}>
                {ROLE_NAMES[r]}
              </option>
            ))}
          </select>
          <div class="row">
            <button type="submit" class="primary">
              Send invitations
            </button>
            <button
              type="button"
              onClick={() =>
                act(
                  async () =>
                    setLink(
                      (await api.post('/invites/multiuse', { stream_ids: defaultStreams, invite_as: ROLE_MEMBER, invite_expires_in_minutes: 14400 }))
                        .invite_link,
                    ),
                  'Link created.',
                )
              }
            >
              Create an invitation link
            </button>
          </div>
          {link && (
            <p>
              Invitation link: <code>{link}</code>
            </p>
          )}
        </form>
      </section>
      <section aria-labelledby="adm-users">
        <h3 id="adm-users">Users and roles</h3>
        {/* A form, as the other fields of the dialog, so the label sits above its field. */}
        <form role="search" onSubmit={(e) => e.preventDefault()}>
          <label for="user-filter">Filter</label>
          <input id="user-filter" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
        </form>
        <table class="users-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.user_id}>
                <td>{u.full_name}</td>
                <td>{u.email}</td>
                <td>
                  <select
                    aria-label={`Role of ${u.full_name}`}
                    value={String(u.role)}
                    disabled={u.user_id === store.me.user_id}
                    onChange={(e) => act(() => api.patch(`/users/${u.user_id}`, { role: Number((e.target as HTMLSelectElement).value) }), 'Role changed.')}
                  >
                    {Object.entries(ROLE_NAMES).map(([r, name]) => (
                      <option key={r} value={r}>
                        {name}
                      </option>
                    ))}
                  </select>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <Status ok={ok} err={err} />
    </Modal>
  );
}

export function MoveDialog({ message, onClose }: { message: Message; onClose(): void }) {
  const { store, actions } = useUi();
  const [ok, err, act] = useAction();
  const [topic, setTopic] = useState(message.subject);
  const [streamId, setStreamId] = useState(message.stream_id!);
  const [mode, setMode] = useState<'change_all' | 'change_later' | 'change_one'>('change_all');
  return (
    <Modal title="Move or rename topic" onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          act(async () => {
            await actions.moveTopic(message.id, topic, streamId !== message.stream_id ? streamId : undefined, mode);
            onClose();
          }, 'Moved.');
        }}
      >
        <label for="move-channel">Channel</label>
        <select id="move-channel" value={String(streamId)} onChange={(e) => setStreamId(Number((e.target as HTMLSelectElement).value))}>
          {[...store.subs.values()].map((s) => (
            <option key={s.stream_id} value={s.stream_id}>
              #{s.name}
            </option>
          ))}
        </select>
        <label for="move-topic">Topic</label>
        <input id="move-topic" value={topic} onInput={(e) => setTopic((e.target as HTMLInputElement).value)} />
        <label for="move-mode">Which messages</label>
        <select id="move-mode" value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value as 'change_all')}>
          <option value="change_all">The whole topic</option>
          <option value="change_later">This message and those after it</option>
          <option value="change_one">Only this message</option>
        </select>
        <button type="submit" class="primary">
          Move
        </button>
        <Status ok={ok} err={err} />
      </form>
    </Modal>
  );
}
