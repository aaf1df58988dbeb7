// TeX math through KaTeX, as the reference server does (it runs KaTeX in Node).
// Untrusted commands (\href, \url, \includegraphics, \html*) stay disabled.

import katex from 'katex';

/** Returns KaTeX's HTML, or null when the input is not valid TeX. */
export function renderTex(tex: string, display: boolean): string | null {
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
