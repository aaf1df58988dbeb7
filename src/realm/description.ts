import { escapeHtml } from '../util/html.ts';

/** The organization description as HTML. */
export function renderDescription(markdown: string): string {
  if (markdown.trim() === '') return '';
  return markdown
    .split(/\n{2,}/)
    .map((para) => `<p>${escapeHtml(para).replaceAll('\n', '<br>\n')}</p>`)
    .join('\n');
}
