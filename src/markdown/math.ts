// TeX math through KaTeX, as the reference server does (it runs KaTeX in Node).
// Untrusted commands (\href, \url, \includegraphics, \html*) stay disabled.

import katex from 'katex';

// KaTeX costs about 0.1 ms per formula: a message repeating one formula a
// thousand times, or edits re-rendering the same ones, reuse the output. Each
// render worker keeps its own bounded cache (oldest entry out first).
const CACHE_ENTRIES = 2000;
const MAX_CACHED_TEX = 1000;
const cache = new Map<string, string | null>();

/** Returns KaTeX's HTML, or null when the input is not valid TeX. */
export function renderTex(tex: string, display: boolean): string | null {
  if (tex.length > MAX_CACHED_TEX) return renderUncached(tex, display);
  const key = (display ? 'D' : 'I') + tex;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const html = renderUncached(tex, display);
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(key, html);
  return html;
}

/** Empties the cache: a benchmark measures each render as if its formulas were new. */
export function forgetRenderedTex(): void {
  cache.clear();
}

function renderUncached(tex: string, display: boolean): string | null {
  try {
    return katex.renderToString(tex, {
      displayMode: display,
      throwOnError: true,
      trust: false,
      strict: 'ignore',
      maxSize: 100,
      maxExpand: 1000,
    });
  } catch {
    return null;
  }
}
