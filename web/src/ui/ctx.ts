import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Actions } from '../actions.ts';
import type { Store } from '../state.ts';

export type ComposeTarget = { streamId: number; topic: string } | { userIds: number[] };

export interface Ui {
  store: Store;
  actions: Actions;
  showUser(userId: number, anchor?: HTMLElement): void;
  compose(target: ComposeTarget | null, opts?: { focusTopic?: boolean; quote?: string }): void;
  toast(message: string): void;
  pickEmoji(anchor: HTMLElement, onPick: (e: { name: string; code: string; type: string }) => void): void;
  openModal(kind: 'settings' | 'admin' | 'move', data?: unknown): void;
}

export const UiContext = createContext<Ui>(null as unknown as Ui);
export const useUi = () => useContext(UiContext);

export function narrowHashFor(store: Store, target: { streamId?: number; topic?: string; userIds?: number[] }): string {
  const name = (id: number) => encodeURIComponent(store.streams.get(id)?.name ?? '').replace(/%20/g, '+');
  if (target.userIds) return `#narrow/dm/${target.userIds.join(',')}`;
  const base = `#narrow/channel/${target.streamId}-${name(target.streamId!)}`;
  return target.topic !== undefined ? `${base}/topic/${encodeURIComponent(target.topic).replace(/%20/g, '+')}` : base;
}

export function formatTime(ts: number): string {
  const d = new Date(ts * 1000);
  const now = new Date();
  const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (d.toDateString() === now.toDateString()) return time;
  return `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric', year: d.getFullYear() === now.getFullYear() ? undefined : 'numeric' })}, ${time}`;
}
