// The title of the current view, with its actions (mark as read, mute topic).
import { api } from '../api.ts';
import { narrowToSearch, viewKind, type Narrow } from '../narrow.ts';
import { useUi } from './ctx.ts';
import { RenderedHtml } from './RenderedHtml.tsx';

export function ViewHeader({ narrow }: { narrow: Narrow }) {
  const { store, actions, toast } = useUi();
  const kind = viewKind(narrow);
  const streamId = Number(narrow.find((t) => t.operator === 'channel')?.operand ?? NaN);
  const topic = narrow.find((t) => t.operator === 'topic')?.operand;
  const stream = store.streams.get(streamId);
  let title = 'Combined feed';
  let sub = 'Every message in your channels and conversations';
  // A channel's description as the server rendered it (Markdown: links, emoji, mentions).
  let subHtml: string | undefined;
  if (kind === 'channel' || kind === 'topic') {
    title = `#${stream?.name ?? 'unknown channel'}`;
    sub = stream?.description ?? '';
    subHtml = stream?.rendered_description;
  }
  if (kind === 'topic') title += ` › ${topic || store.realm.realm_empty_topic_display_name || 'general chat'}`;
  if (kind === 'dm') {
    title = narrow[0]!.operand
      .split(',')
      .map((id) => store.users.get(Number(id))?.full_name ?? 'Unknown')
      .join(', ');
    sub = 'Direct messages';
  }
  if (kind === 'dms') [title, sub] = ['Direct messages', 'All your direct message conversations'];
  if (kind === 'mentioned') [title, sub] = ['Mentions', 'Messages that mention you'];
  if (kind === 'starred') [title, sub] = ['Starred messages', 'Messages you starred'];
  if (kind === 'search') {
    // The query as it was typed: channels and people by name, not by id.
    const names = { channel: (id: number) => store.streams.get(id)?.name, user: (id: number) => store.users.get(id)?.email };
    [title, sub] = ['Search results', narrowToSearch(narrow, names)];
  }
  const muted = kind === 'topic' && store.isTopicMuted(streamId, topic!);
  const run = (fn: () => Promise<unknown>) => () => void fn().catch((e) => toast(e.message));
  return (
    <div class="view-header">
      <div class="view-title">
        <h1 id="view-title">{title}</h1>
        {subHtml ? <RenderedHtml class="view-sub rendered" html={subHtml} /> : sub && <p class="view-sub">{sub}</p>}
      </div>
      <div class="view-actions">
        {kind === 'topic' && (
          <button
            type="button"
            class="text-button"
            onClick={run(() => api.post('/user_topics', { stream_id: streamId, topic, visibility_policy: muted ? 0 : 1 }))}
          >
            {muted ? 'Unmute topic' : 'Mute topic'}
          </button>
        )}
        {kind !== 'search' && (
          <button type="button" class="text-button" onClick={run(() => actions.markNarrowRead(narrow))}>
            Mark all as read
          </button>
        )}
      </div>
    </div>
  );
}
