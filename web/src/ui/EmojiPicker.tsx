// A searchable emoji picker for reactions.
import { useEffect, useRef, useState } from 'preact/hooks';
import { useUi } from './ctx.ts';
import { codeToChar, loadEmoji, searchEmoji, type EmojiChoice } from './emoji.ts';

export function EmojiPicker({ anchor, onPick, onClose }: { anchor: HTMLElement; onPick(e: EmojiChoice): void; onClose(): void }) {
  const { store } = useUi();
  const [q, setQ] = useState('');
  const [, setReady] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    void loadEmoji().then(() => setReady(true));
    input.current?.focus();
  }, []);
  const r = anchor.getBoundingClientRect();
  const top = Math.max(8, Math.min(r.bottom + 4, window.innerHeight - 340));
  const left = Math.max(8, Math.min(r.left - 150, window.innerWidth - 316));
  const items = searchEmoji(store, q, 80);
  return (
    <>
      <div class="overlay clear" onClick={onClose} aria-hidden="true" />
      <div class="emoji-picker" role="dialog" aria-label="Choose an emoji" style={{ top: `${top}px`, left: `${left}px` }}>
        <label for="emoji-search" class="visually-hidden">
          Search emoji
        </label>
        <input
          id="emoji-search"
          ref={input}
          placeholder="Search emoji"
          value={q}
          onInput={(e) => setQ((e.target as HTMLInputElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && items[0]) onPick(items[0]);
          }}
        />
        <div class="emoji-grid" role="listbox" aria-label="Emoji">
          {items.map((e) => (
            <button type="button" key={e.type + e.code} role="option" aria-selected={false} title={`:${e.name}:`} aria-label={e.name} onClick={() => onPick(e)}>
              {e.url ? <img src={e.url} alt="" /> : codeToChar(e.code)}
            </button>
          ))}
        </div>
      </div>
    </>
  );
}
