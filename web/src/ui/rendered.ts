// Fix-ups of the server's rendered HTML (messages, previews, descriptions) once it is in the page.

import { showEmojiGlyphs } from './emoji.ts';

/** Every fix-up, for a root holding server-rendered HTML. */
export function fixUpRendered(root: HTMLElement): void {
  showEmojiGlyphs(root);
  labelImages(root);
}

/**
 * The reference's inline-image markup carries no `alt`; screen readers need one.
 * The link around a preview names the file (its title), else the image's own URL does.
 */
export function labelImages(root: HTMLElement): void {
  for (const img of root.querySelectorAll<HTMLImageElement>('img:not([alt])')) {
    const title = img.closest('a')?.getAttribute('title');
    img.alt = title || fileName(img.getAttribute('src') ?? '') || 'image';
  }
}

function fileName(src: string): string {
  const last = src.split('?')[0].split('/').pop() ?? '';
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}
