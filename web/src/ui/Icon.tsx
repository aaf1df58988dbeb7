// Interface icons as inline SVG, so they never depend on the system's fonts.
const PATHS: Record<string, string> = {
  gear: 'M12 8.5a3.5 3.5 0 1 0 0 7 3.5 3.5 0 0 0 0-7Zm8.5 3.5-.1-1.3 2-1.6-2-3.4-2.4 1a8 8 0 0 0-2.2-1.3L15.4 3h-3.9l-.4 2.5a8 8 0 0 0-2.2 1.3l-2.4-1-2 3.4 2 1.6a8 8 0 0 0 0 2.6l-2 1.6 2 3.4 2.4-1a8 8 0 0 0 2.2 1.3l.4 2.5h3.9l.4-2.5a8 8 0 0 0 2.2-1.3l2.4 1 2-3.4-2-1.6.1-1.3Z',
  shield: 'M12 2 4 5v6c0 5 3.4 9.4 8 11 4.6-1.6 8-6 8-11V5l-8-3Z',
  clip: 'M16.5 6.5 8 15a2 2 0 1 0 2.8 2.8l8.5-8.5a4 4 0 0 0-5.7-5.7L5 12.2a6 6 0 0 0 8.5 8.5l6-6',
  trash: 'M4 7h16M9 7V4h6v3m-8 0 1 13h8l1-13',
  smile: 'M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18Zm-4 11c1 1.5 2.4 2.3 4 2.3s3-.8 4-2.3M9 9.5h.01M15 9.5h.01',
  star: 'm12 3 2.8 5.7 6.2.9-4.5 4.4 1 6.2L12 17.3 6.5 20.2l1-6.2L3 9.6l6.2-.9L12 3Z',
  reply: 'M10 8V4L3 11l7 7v-4c5 0 8.5 1.5 11 5-1-5-4-10-11-11Z',
  edit: 'm4 20 4.5-1L19 8.5 15.5 5 5 15.5 4 20Zm9.5-13 3.5 3.5',
  move: 'M7 4 3 8l4 4M3 8h14M17 12l4 4-4 4m4-4H7',
  menu: 'M4 6h16M4 12h16M4 18h16',
  close: 'M6 6l12 12M18 6 6 18',
};

export function Icon({ name, filled }: { name: keyof typeof PATHS | string; filled?: boolean }) {
  return (
    <svg class="icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
      <path d={PATHS[name]} fill={filled ? 'currentColor' : 'none'} stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" />
    </svg>
  );
}
