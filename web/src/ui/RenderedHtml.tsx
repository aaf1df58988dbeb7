// Server-rendered HTML in a div, with the page's fix-ups applied after each render.
import type { HTMLAttributes } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { fixUpRendered } from './rendered.ts';

export function RenderedHtml({ html, ...attrs }: { html: string } & Omit<HTMLAttributes<HTMLDivElement>, 'ref' | 'dangerouslySetInnerHTML'>) {
  const root = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (root.current) fixUpRendered(root.current);
  });
  return <div ref={root} {...attrs} dangerouslySetInnerHTML={{ __html: html }} />;
}
