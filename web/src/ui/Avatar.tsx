// Avatars: an uploaded picture served by Confab, else the person's initials on a
// colour of their own. Off-site pictures (Gravatar) are never loaded: the page
// reaches no other server.
import type { Store } from '../state.ts';

const COLORS = ['#2f5fd0', '#0f8a6b', '#b5456b', '#8250df', '#c2410c', '#0e7490', '#a16207', '#4d7c0f'];

export function localAvatarUrl(store: Store, userId: number, fallback?: string | null): string | null {
  const url = store.users.get(userId)?.avatar_url ?? fallback ?? null;
  if (!url) return null;
  try {
    const u = new URL(url, location.href);
    return u.origin === location.origin ? u.pathname + u.search : null;
  } catch {
    return null;
  }
}

export function Avatar({
  store,
  userId,
  size = '',
  fallback,
  name,
}: {
  store: Store;
  userId: number;
  size?: '' | 'tiny' | 'large';
  fallback?: string | null;
  name?: string;
}) {
  const url = localAvatarUrl(store, userId, fallback);
  if (url) return <img class={`avatar ${size}`} src={url} alt="" loading="lazy" />;
  const full = store.users.get(userId)?.full_name ?? name ?? '?';
  const initials = full
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((w) => w[0]!.toUpperCase())
    .join('');
  return (
    <span class={`avatar initials ${size}`} style={{ background: COLORS[userId % COLORS.length] }} aria-hidden="true">
      {initials}
    </span>
  );
}
