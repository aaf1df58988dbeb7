import { Icon } from './Icon.tsx';
// The composer: channel and topic or DM recipients, Markdown with a preview,
// autocompletion of @-mentions, #channels and :emoji:, uploads (button, drop,
// paste), a draft kept per conversation, Enter to send with a local echo.
import { useEffect, useRef, useState } from 'preact/hooks';
import { viewKind, type Narrow } from '../narrow.ts';
import type { Store } from '../state.ts';
import { localAvatarUrl } from './Avatar.tsx';
import { RenderedHtml } from './RenderedHtml.tsx';
import { useUi, type ComposeTarget } from './ctx.ts';
import { codeToChar, loadEmoji, searchEmoji } from './emoji.ts';

function targetFromNarrow(narrow: Narrow): ComposeTarget | null {
  const kind = viewKind(narrow);
  if (kind === 'topic') return { streamId: Number(narrow[0]!.operand), topic: narrow[1]!.operand };
  if (kind === 'channel') return { streamId: Number(narrow[0]!.operand), topic: '' };
  if (kind === 'dm') return { userIds: narrow[0]!.operand.split(',').map(Number) };
  return null;
}

function draftKey(t: ComposeTarget | null): string {
  if (!t) return 'confab-draft:none';
  return 'streamId' in t ? `confab-draft:s:${t.streamId}:${t.topic.toLowerCase()}` : `confab-draft:d:${[...t.userIds].sort((a, b) => a - b).join(',')}`;
}

interface Suggestion {
  key: string;
  label: string;
  detail?: string;
  icon?: string;
  img?: string;
  insert: string;
}

function suggestionsFor(store: Store, text: string, caret: number): { start: number; items: Suggestion[] } | null {
  const before = text.slice(0, caret);
  const m = before.match(/(^|[\s(])([@#:])(\*\*)?([^\s@#:*]*(?: [^\s@#:*]*)?)$/);
  if (!m) return null;
  const [, , sigil, , query] = m;
  const q = query!.toLowerCase();
  const start = caret - m[0].length + m[1]!.length;
  if (sigil === '@') {
    const items = [...store.users.values()]
      .filter((u) => u.is_active !== false && (u.full_name.toLowerCase().includes(q) || u.email.toLowerCase().startsWith(q)))
      .sort(
        (a, b) => Number(!a.full_name.toLowerCase().startsWith(q)) - Number(!b.full_name.toLowerCase().startsWith(q)) || a.full_name.localeCompare(b.full_name),
      )
      .slice(0, 8)
      .map((u) => ({
        key: `u${u.user_id}`,
        label: u.full_name,
        detail: u.email,
        img: localAvatarUrl(store, u.user_id) ?? undefined,
        insert: `@**${u.full_name}** `,
      }));
    const wild = ['all', 'everyone', 'channel', 'topic']
      .filter((w) => w.startsWith(q))
      .map((w) => ({ key: w, label: w, detail: 'notify everyone', insert: `@**${w}** ` }));
    return { start, items: [...items, ...wild].slice(0, 8) };
  }
  if (sigil === '#') {
    const items = [...store.streams.values()]
      .filter((s) => s.name.toLowerCase().includes(q))
      .slice(0, 8)
      .map((s) => ({ key: `s${s.stream_id}`, label: `#${s.name}`, detail: s.description, insert: `#**${s.name}** ` }));
    return { start, items };
  }
  if (q.length < 2) return null;
  const items = searchEmoji(store, q, 8).map((e) => ({
    key: e.code,
    label: `:${e.name}:`,
    icon: e.url ? undefined : codeToChar(e.code),
    img: e.url,
    insert: `:${e.name}: `,
  }));
  return { start, items };
}

export function Compose({
  narrow,
  request,
}: {
  narrow: Narrow;
  request: { target: ComposeTarget | null; focusTopic?: boolean; quote?: string; n: number } | null;
}) {
  const { store, actions, toast } = useUi();
  const [target, setTarget] = useState<ComposeTarget | null>(() => targetFromNarrow(narrow));
  const [text, setText] = useState(() => localStorage.getItem(draftKey(targetFromNarrow(narrow))) ?? '');
  const [recipients, setRecipients] = useState('');
  const [preview, setPreview] = useState<string | null>(null);
  const [sugg, setSugg] = useState<{ start: number; items: Suggestion[] } | null>(null);
  const [active, setActive] = useState(0);
  const [error, setError] = useState('');
  const [dragging, setDragging] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const topicRef = useRef<HTMLInputElement>(null);
  const fileRef = useRef<HTMLInputElement>(null);

  const switchTo = (t: ComposeTarget | null) => {
    setTarget(t);
    setText(localStorage.getItem(draftKey(t)) ?? '');
    setRecipients(t && 'userIds' in t ? t.userIds.map((id) => store.users.get(id)?.email ?? id).join(', ') : '');
    setPreview(null);
    setError('');
  };

  useEffect(() => switchTo(targetFromNarrow(narrow)), [narrow]);
  useEffect(() => {
    if (!request) return;
    switchTo(request.target ?? target);
    setTimeout(() => (request.focusTopic && topicRef.current ? topicRef.current : area.current)?.focus(), 0);
  }, [request?.n]);

  useEffect(() => {
    void loadEmoji();
  }, []);

  const updateText = (v: string) => {
    setText(v);
    if (v) localStorage.setItem(draftKey(target), v);
    else localStorage.removeItem(draftKey(target));
  };

  const resolveRecipients = (): number[] | null => {
    const ids: number[] = [];
    for (const part of recipients
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const u = [...store.users.values()].find((x) => x.email.toLowerCase() === part.toLowerCase() || x.full_name.toLowerCase() === part.toLowerCase());
      if (!u) {
        setError(`No one called “${part}” in this organization.`);
        return null;
      }
      ids.push(u.user_id);
    }
    return ids;
  };

  const send = async () => {
    if (!text.trim()) return;
    let to: ComposeTarget | null = target;
    if (target && 'userIds' in target) {
      const ids = resolveRecipients();
      if (!ids) return;
      if (ids.length === 0) return setError('Choose who receives this message.');
      to = { userIds: ids };
    }
    if (!to) return setError('Choose a channel and topic, or people for a direct message.');
    if ('streamId' in to && !store.streams.has(to.streamId)) return setError('Choose a channel.');
    const content = text;
    const key = draftKey(target);
    setText('');
    setPreview(null);
    setError('');
    localStorage.removeItem(key);
    actions.typing(to, 'stop');
    try {
      await actions.send(to, content);
    } catch (e) {
      // The text comes back, so nothing typed is lost.
      setText((cur) => cur || content);
      localStorage.setItem(key, content);
      setError((e as Error).message);
    }
  };

  const pick = (s: Suggestion) => {
    const el = area.current!;
    const caret = el.selectionStart;
    const v = text.slice(0, sugg!.start) + s.insert + text.slice(caret);
    updateText(v);
    setSugg(null);
    const pos = sugg!.start + s.insert.length;
    setTimeout(() => {
      el.focus();
      el.setSelectionRange(pos, pos);
    }, 0);
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (sugg && sugg.items.length > 0) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        setActive((a) => (a + (e.key === 'ArrowDown' ? 1 : sugg.items.length - 1)) % sugg.items.length);
        return;
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        pick(sugg.items[active]!);
        return;
      }
      if (e.key === 'Escape') {
        e.stopPropagation();
        setSugg(null);
        return;
      }
    }
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      void send();
    }
  };

  const onInput = (e: Event) => {
    const el = e.target as HTMLTextAreaElement;
    updateText(el.value);
    setSugg(suggestionsFor(store, el.value, el.selectionStart));
    setActive(0);
    if (target && ('userIds' in target || target.topic)) actions.typing(target, 'start');
  };

  const uploadFiles = async (files: File[]) => {
    for (const file of files) {
      const placeholder = `[Uploading ${file.name}…]()`;
      setText((t) => `${t}${t && !t.endsWith('\n') ? '\n' : ''}${placeholder}`);
      try {
        const r = await actions.upload(file);
        setText((t) => {
          const v = t.replace(placeholder, `[${file.name}](${r.url})`);
          localStorage.setItem(draftKey(target), v);
          return v;
        });
      } catch (err) {
        setText((t) => t.replace(placeholder, ''));
        toast(`Could not upload ${file.name}: ${(err as Error).message}`);
      }
    }
  };

  const togglePreview = async () => {
    if (preview !== null) return setPreview(null);
    try {
      setPreview(text.trim() ? await actions.render(text) : '<p><em>Nothing to preview</em></p>');
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const subs = [...store.subs.values()].sort((a, b) => a.name.localeCompare(b.name));
  const isDm = !!target && 'userIds' in target;
  const listId = 'compose-suggestions';
  return (
    <section
      class={`compose ${dragging ? 'dragging' : ''}`}
      aria-label="Compose a message"
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        void uploadFiles([...(e.dataTransfer?.files ?? [])]);
      }}
    >
      <div class="compose-to">
        <div class="segmented" role="group" aria-label="Message type">
          <button
            type="button"
            aria-pressed={!isDm}
            onClick={() =>
              switchTo({
                streamId: target && 'streamId' in target ? target.streamId : (subs[0]?.stream_id ?? 0),
                topic: target && 'streamId' in target ? target.topic : '',
              })
            }
          >
            Channel
          </button>
          <button type="button" aria-pressed={isDm} onClick={() => switchTo({ userIds: [] })}>
            Direct
          </button>
        </div>
        {isDm ? (
          <>
            <label for="compose-recipients" class="visually-hidden">
              Recipients
            </label>
            <input
              id="compose-recipients"
              list="people-list"
              placeholder="Names or emails, separated by commas"
              value={recipients}
              onInput={(e) => setRecipients((e.target as HTMLInputElement).value)}
            />
            <datalist id="people-list">
              {[...store.users.values()].slice(0, 500).map((u) => (
                <option key={u.user_id} value={u.email}>
                  {u.full_name}
                </option>
              ))}
            </datalist>
          </>
        ) : (
          <>
            <label for="compose-channel" class="visually-hidden">
              Channel
            </label>
            <select
              id="compose-channel"
              value={target && 'streamId' in target ? String(target.streamId) : ''}
              onChange={(e) => switchTo({ streamId: Number((e.target as HTMLSelectElement).value), topic: target && 'streamId' in target ? target.topic : '' })}
            >
              {!target && <option value="">Choose a channel</option>}
              {subs.map((s) => (
                <option key={s.stream_id} value={s.stream_id}>
                  #{s.name}
                </option>
              ))}
            </select>
            <span aria-hidden="true">›</span>
            <label for="compose-topic" class="visually-hidden">
              Topic
            </label>
            <input
              id="compose-topic"
              ref={topicRef}
              placeholder="Topic"
              maxLength={store.realm.max_topic_length ?? 60}
              value={target && 'streamId' in target ? target.topic : ''}
              onInput={(e) =>
                setTarget({
                  streamId: target && 'streamId' in target ? target.streamId : (subs[0]?.stream_id ?? 0),
                  topic: (e.target as HTMLInputElement).value,
                })
              }
            />
          </>
        )}
      </div>
      <div class="compose-body">
        {preview !== null ? (
          <RenderedHtml class="preview rendered" role="region" aria-label="Preview" html={preview} />
        ) : (
          <>
            <label for="compose-textarea" class="visually-hidden">
              Message
            </label>
            <textarea
              id="compose-textarea"
              ref={area}
              value={text}
              placeholder={
                target
                  ? 'streamId' in target
                    ? `Message #${store.streams.get(target.streamId)?.name ?? ''}${target.topic ? ` › ${target.topic}` : ''}`
                    : 'Direct message'
                  : 'Write a message'
              }
              rows={2}
              onInput={onInput}
              onKeyDown={onKeyDown}
              onBlur={() => setTimeout(() => setSugg(null), 150)}
              onPaste={(e) => {
                const files = [...(e.clipboardData?.files ?? [])];
                if (files.length) {
                  e.preventDefault();
                  void uploadFiles(files);
                }
              }}
              aria-autocomplete="list"
              aria-controls={sugg && sugg.items.length > 0 ? listId : undefined}
            />
          </>
        )}
        {sugg && sugg.items.length > 0 && (
          <ul class="suggestions" id={listId} role="listbox" aria-label="Suggestions">
            {sugg.items.map((s, i) => (
              <li
                key={s.key}
                id={`sugg-${i}`}
                role="option"
                aria-selected={i === active}
                class={i === active ? 'active' : ''}
                onMouseDown={(e) => {
                  e.preventDefault();
                  pick(s);
                }}
              >
                {s.img ? <img src={s.img} alt="" class="avatar tiny" /> : s.icon ? <span class="sugg-icon">{s.icon}</span> : null}
                <span>{s.label}</span>
                {s.detail && <span class="detail">{s.detail}</span>}
              </li>
            ))}
          </ul>
        )}
      </div>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      <div class="compose-tools">
        <button type="button" class="icon-button" aria-label="Attach a file" title="Attach a file" onClick={() => fileRef.current?.click()}>
          <Icon name="clip" />
        </button>
        <input
          ref={fileRef}
          type="file"
          multiple
          hidden
          aria-label="File to upload"
          onChange={(e) => void uploadFiles([...((e.target as HTMLInputElement).files ?? [])])}
        />
        <button type="button" class="text-button" aria-pressed={preview !== null} onClick={() => void togglePreview()}>
          {preview !== null ? 'Edit' : 'Preview'}
        </button>
        <span class="hint">Enter to send · Shift+Enter for a new line</span>
        <button type="button" class="primary send" onClick={() => void send()}>
          Send
        </button>
      </div>
    </section>
  );
}
