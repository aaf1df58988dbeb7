// Line-level passes that run before block parsing: lists that hang directly
// off a paragraph get a blank line, whitespace is normalized, and fenced blocks
// (code, quote, spoiler, math) are handled, with nesting, the way the
// reference server's fenced-code preprocessor does.

import type { HtmlStash } from './stash.ts';
import { djangoEscape, expandTabs, pyRStrip } from './util.ts';
import { MAX_NESTING } from './blocks.ts';
import { MarkdownRenderError } from './errors.ts';

/** ``` or ~~~ fence, optional language, optional header (spoiler title). */
export const FENCE_RE = /^(?<fence>~{3,}|`{3,})[ ]*(?:\{?\.?(?<lang>[a-zA-Z0-9_+,\-./#]+)[ ]*(?<header>[^ ~`][^~`]*)?\}?)?$/;

const LI_RE = /^[ ]*([*+-]|\d\.)[ ]+(.*)/;

/** Inserts a blank line between a paragraph and a list that follows it directly. */
export function hangingLists(lines: string[]): string[] {
  const out = lines.slice();
  let inserts = 0;
  const open: { fence: string; isCode: boolean }[] = [];
  let inCode = false;
  for (let i = 0; i < lines.length - 1; i++) {
    const m = FENCE_RE.exec(lines[i]!);
    if (m) {
      const fence = m.groups!.fence!;
      const lang = m.groups!.lang;
      const isCode = lang !== 'quote' && lang !== 'quoted';
      const closesLast = !lang && open.length > 0 && open[open.length - 1]!.fence === fence;
      if (closesLast) open.pop();
      else open.push({ fence, isCode });
      inCode = open.some((f) => f.isCode);
    }
    const li1 = LI_RE.exec(lines[i]!);
    const li2 = LI_RE.exec(lines[i + 1]!);
    if (!inCode && lines[i] && ((li2 && !li1) || (li1 && li2 && (li1[1]!.length === 1) !== (li2[1]!.length === 1)))) {
      out.splice(i + inserts + 1, 0, '');
      inserts++;
    }
  }
  return out;
}

export function normalizeWhitespace(lines: string[]): string[] {
  let source = lines.join('\n').replaceAll('\r\n', '\n').replaceAll('\r', '\n') + '\n\n';
  source = expandTabs(source, 4);
  source = source.replace(/(?<=\n) +\n/g, '\n');
  return source.split('\n');
}

export interface FenceRenderers {
  stash: HtmlStash;
  formatCode(lang: string | null, text: string): string;
  renderTex(tex: string, display: boolean): string | null;
}

interface Handler {
  handleLine(line: string): void;
  done(): void;
}

/** The fenced block preprocessor: a stack of handlers, innermost gets each line. */
export function fencedBlocks(lines: string[], r: FenceRenderers): string[] {
  const output: string[] = [];
  const handlers: Handler[] = [];

  const pushFenced = (out: string[], fence: string, processContents: boolean, format: (text: string) => string, nested: boolean) => {
    const collected: string[] = [];
    const handler: Handler = {
      handleLine(line) {
        if (pyRStrip(line) === fence) handler.done();
        else if (nested) checkForFence(collected, line);
        else collected.push(pyRStrip(line));
      },
      done() {
        if (collected.length) {
          let text = format(collected.join('\n'));
          if (!processContents) text = r.stash.store(text);
          out.push('', ...text.split('\n'), '');
        }
        handlers.pop();
      },
    };
    handlers.push(handler);
    if (handlers.length > MAX_NESTING) {
      throw new MarkdownRenderError('too_large', `Message is nested more than ${MAX_NESTING} levels deep`);
    }
  };

  const checkForFence = (out: string[], line: string) => {
    const m = FENCE_RE.exec(line);
    if (!m) {
      out.push(line);
      return;
    }
    const fence = m.groups!.fence!;
    const lang = m.groups!.lang?.toLowerCase() ?? null;
    const header = m.groups!.header ?? null;
    if (lang === 'quote' || lang === 'quoted') {
      pushFenced(
        out,
        fence,
        true,
        (text) =>
          text
            .split('\n')
            .map((l) => '> ' + l)
            .join('\n'),
        true,
      );
    } else if (lang === 'math') {
      pushFenced(out, fence, false, (text) => formatTex(text, r), false);
    } else if (lang === 'spoiler') {
      pushFenced(out, fence, true, (text) => formatSpoiler(header, text, r.stash), true);
    } else {
      pushFenced(out, fence, false, (text) => r.formatCode(lang, text), false);
    }
  };

  handlers.push({ handleLine: (line) => checkForFence(output, line), done: () => handlers.pop() });
  for (const line of lines) handlers[handlers.length - 1]!.handleLine(line);
  while (handlers.length) handlers[handlers.length - 1]!.done();
  if (output.length > 2 && output[output.length - 2] !== '') output.push('');
  return output;
}

function formatTex(text: string, r: FenceRenderers): string {
  return text
    .split('\n\n')
    .map((para) => r.renderTex(para, true) ?? `<span class="tex-error">${djangoEscape(para)}</span>`)
    .join('\n\n');
}

function formatSpoiler(header: string | null, text: string, stash: HtmlStash): string {
  const parts = [stash.store('<div class="spoiler-block"><div class="spoiler-header">')];
  if (header !== null) parts.push(header);
  parts.push(stash.store('</div><div class="spoiler-content" aria-hidden="true">'), text, stash.store('</div></div>'));
  return parts.join('\n\n');
}
