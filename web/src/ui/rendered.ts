// Fix-ups of the server's rendered message HTML once it is in the page.

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
