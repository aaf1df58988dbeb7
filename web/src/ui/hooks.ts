import { useEffect, useState } from 'preact/hooks';
import type { Store } from '../state.ts';

/** Re-renders the component whenever the store changes. */
export function useStore(store: Store): number {
  const [, set] = useState(0);
  useEffect(() => store.subscribe(() => set(store.version)), [store]);
  return store.version;
}

export function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return hash;
}
