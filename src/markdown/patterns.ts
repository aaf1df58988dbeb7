// The inline patterns of the flavor, in the reference server's priority order.
// Each pattern is data (a regex) plus a handler that builds the element.

import { parseTemplate } from 'url-template';
import { RE2JS } from 're2js';
import { Atomic, El } from './tree.ts';
import type { InlinePattern, InlineProcessor } from './inline.ts';
import type { HtmlStash } from './stash.ts';
import { codeSpanMatcher } from './code-spans.ts';
import { codeEscape, ETX, memoized, pyStrip, STX, WORD } from './util.ts';
import { relativeToServer, sanitizeUrl, webLinkRegex } from './links.ts';
import { renderTex } from './math.ts';
import { getLink, getLinkText } from './link-syntax.ts';
import { parseTimestamp } from './timestamp.ts';
import { emojiCodeForName, emojiNameForCode, codeForUnicode, EMOTICON_CONVERSIONS, EXTRA_EMOJI } from './emoji.ts';
import {
  GROUP_MENTION,
  parseIdSyntax,
  STREAM_LINK,
  STREAM_TOPIC_LINK,
  STREAM_TOPIC_MESSAGE_LINK,
  STREAM_WILDCARDS,
  TOPIC_WILDCARDS,
  USER_MENTION,
} from './mentions.ts';
import type { Linkifier, MentionableUser, RenderContext } from './types.ts';

/** What rendering found, for message flags. */
export interface Findings {
  userIds: Set<number>;
  silentUserIds: Set<number>;
  groupIds: Set<number>;
  streamWildcard: boolean;
  topicWildcard: boolean;
}

/** Context lookups prepared once per render. */
export class Lookup {
  readonly ctx: RenderContext;
  private usersByName = new Map<string, MentionableUser>();
  private usersById = new Map<number, MentionableUser>();
  private groupsByName = new Map<string, { id: number; name: string; deactivated?: boolean }>();
  private channelsByName = new Map<string, number>();
  private topicLatest = new Map<string, number>();
  private customEmoji = new Map<string, string>();

  constructor(ctx: RenderContext) {
    this.ctx = ctx;
    for (const u of ctx.users ?? []) {
      this.usersById.set(u.id, u);
      const key = u.full_name.toLowerCase();
      if (!this.usersByName.has(key)) this.usersByName.set(key, u);
    }
    for (const g of ctx.groups ?? []) {
      const key = g.name.toLowerCase();
      if (!this.groupsByName.has(key)) this.groupsByName.set(key, g);
    }
    for (const c of ctx.channels ?? []) this.channelsByName.set(c.name, c.id);
    for (const t of ctx.topics ?? []) this.topicLatest.set(`${t.channel_id}\n${t.topic}`, t.latest_message_id);
    // Emoji images must come from this server or over http(s).
    for (const e of ctx.custom_emoji ?? []) {
      if (!e.deactivated && /^(?:\/(?!\/)|https?:\/\/)/i.test(e.source_url)) this.customEmoji.set(e.name, e.source_url);
    }
  }

  userByName(name: string) {
    return this.usersByName.get(name.toLowerCase());
  }
  userById(id: number) {
    return this.usersById.get(id);
  }
  group(name: string) {
    return this.groupsByName.get(name.toLowerCase());
  }
  channel(name: string) {
    return this.channelsByName.get(name);
  }
  latestInTopic(channelId: number, topic: string) {
    return this.topicLatest.get(`${channelId}\n${topic}`);
  }
  customEmojiUrl(name: string) {
    return this.customEmoji.get(name);
  }
}

/** Python's quote(s, safe='') followed by the web app's hash encoding ('%' -> '.'). */
export function hashEncode(s: string): string {
  const quoted = encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return quoted.replaceAll('.', '%2E').replaceAll('%', '.');
}

export function encodeChannel(id: number, name: string): string {
  return `${id}-${hashEncode(name.replaceAll(' ', '-'))}`;
}

export function makeEmoji(code: string, display: string): El {
  const title = display.slice(1, -1).replaceAll('_', ' ');
  const span = new El('span', { class: `emoji emoji-${code}`, title, role: 'img', 'aria-label': title });
  span.text = new Atomic(display);
  return span;
}

function makeImageEmoji(src: string, display: string): El {
  return new El('img', { src, class: 'emoji', alt: display, title: display.slice(1, -1).replaceAll('_', ' ') });
}

/** An `<a>` for a URL, or the URL as plain text when its scheme is not allowed. */
const sanitizeUrlOnce = memoized((url: string) => sanitizeUrl(url));

export function urlToA(ctx: RenderContext, url: string, text?: string | Atomic): El | string {
  const href = sanitizeUrlOnce(url);
  if (href === null) return url;
  const a = new El('a', { href: relativeToServer(href, ctx.server_url) });
  a.text = text ?? new Atomic(url);
  return a;
}

const W = WORD;
const EMOTICON_TERMINALS = `,.;?!()\\[\\] "'\\n\\t`;
const EMOTICON_MAX = Math.max(...Object.keys(EMOTICON_CONVERSIONS).map((e) => e.length));
const emoticonAlternatives = Object.keys(EMOTICON_CONVERSIONS)
  .map((e) => `(${e.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')})`)
  .join('|');

const POSSIBLE_EMOJI_BODY = '\\p{Emoji}(?:\\p{Emoji_Modifier}|\\uFE0F\\u20E3?|[\\u{E0020}-\\u{E007E}]+\\u{E007F})?';
// A lone text-presentation character (a digit, `#`, `©`) is never an emoji; the
// lookahead skips it in the regex rather than in the handler, so that text full
// of digits (every placeholder has four) does not produce a rejected match each.
const NOT_LONE_TEXT = '(?=\\p{Emoji_Presentation}|\\p{Emoji}[\\p{Emoji_Modifier}\\uFE0F\\u{E0020}-\\u{E007E}\\u200D])';
const POSSIBLE_EMOJI = new RegExp(
  `${NOT_LONE_TEXT}(?<syntax>\\p{Regional_Indicator}\\p{Regional_Indicator}|${POSSIBLE_EMOJI_BODY}(?:\\u200D(?:\\p{Regional_Indicator}\\p{Regional_Indicator}|${POSSIBLE_EMOJI_BODY}))*)`,
  'gu',
);
const TEXT_PRESENTATION = /^\P{Emoji_Presentation}\u20E3?$/u;

// Compiled linkifier patterns, by source (patterns are RE2: linear time).
const linkifierCache = new Map<string, RE2JS | null>();

function compileLinkifier(source: string): RE2JS | null {
  if (linkifierCache.has(source)) return linkifierCache.get(source)!;
  let compiled: RE2JS | null;
  try {
    compiled = RE2JS.compile(
      `(?P<linkifier_before_match>^|\\s|\\x{85}|\\pZ|['"\\(,:<])(?P<linkifier_actual_match>${source})(?P<linkifier_after_match>$|[^\\pL\\pN])`,
    );
  } catch {
    compiled = null;
  }
  if (linkifierCache.size > 1000) linkifierCache.clear();
  linkifierCache.set(source, compiled);
  return compiled;
}

type Expand = (values: Record<string, string>) => string;
const templateCache = new Map<string, { expand: Expand } | null>();

function parsedTemplate(source: string): { expand: Expand } | null {
  let template = templateCache.get(source);
  if (template === undefined) {
    try {
      const parsed = parseTemplate(source);
      // Expansions by their values (as JSON): a hostile message repeats one match.
      const expand = memoized((values: string) => parsed.expand(JSON.parse(values)));
      template = { expand: (values) => expand(JSON.stringify(values)) };
    } catch {
      template = null;
    }
    if (templateCache.size > 1000) templateCache.clear();
    templateCache.set(source, template);
  }
  return template;
}

/** A linkifier match: the span of the linked text, its text and the template expansion. */
export interface LinkifierMatch {
  start: number;
  end: number;
  /** End of the whole match, trailing delimiter included. */
  matchEnd: number;
  /** End of the whole match minus the trailing delimiter (where topic links resume). */
  resume: number;
  text: string;
  url: string;
}

/** Finds the next match of a linkifier at or after `from`. */
export function findLinkifier(linkifier: Linkifier, data: string, from: number): LinkifierMatch | null {
  const re = compileLinkifier(linkifier.pattern);
  if (!re) return null;
  const template = parsedTemplate(linkifier.url_template);
  if (!template) return null;
  if (from === 0 && matchlessTexts.get(re)?.has(data)) return null;
  // One matcher per text: a text is searched again from each match's end.
  let m = matchers.get(re);
  if (m?.text !== data) matchers.set(re, (m = { text: data, matcher: re.matcher(data) }));
  if (!m.matcher.find(from)) {
    if (from === 0) rememberMatchless(re, data);
    return null;
  }
  return linkifierMatch(re, m.matcher, template);
}

const matchers = new WeakMap<RE2JS, { text: string; matcher: ReturnType<RE2JS['matcher']> }>();

// The texts a pattern matches nowhere in, by pattern (at most 1,000 each): a message
// of thousands of short paragraphs or cells repeats its texts, and most linkifiers
// match none of them.
const matchlessTexts = new WeakMap<RE2JS, Set<string>>();
function rememberMatchless(re: RE2JS, text: string): void {
  let texts = matchlessTexts.get(re);
  if (!texts) matchlessTexts.set(re, (texts = new Set()));
  if (texts.size >= 1000) texts.clear();
  texts.add(text);
}

function linkifierMatch(re: RE2JS, m: ReturnType<RE2JS['matcher']>, template: NonNullable<ReturnType<typeof parsedTemplate>>): LinkifierMatch {
  const values: Record<string, string> = {};
  for (const name of Object.keys(re.namedGroups())) {
    const v = m.group(name);
    if (v !== null) values[name] = v;
  }
  return {
    start: m.start(2),
    end: m.end(2),
    matchEnd: m.end(),
    resume: m.end() - (m.group(4) ?? '').length,
    text: m.group(2) ?? '',
    url: template.expand(values),
  };
}

// Barriers (see InlinePattern.barrier and README "Linear time").

/** Last index <= `at` of any of `chars` (-1 if none). */
function lastOf(data: string, chars: string, at: number): number {
  let q = -1;
  for (const c of chars) q = Math.max(q, data.lastIndexOf(c, at));
  return q;
}

/**
 * For patterns whose body cannot run past a "stop" character: an attempt that
 * opens `open` characters before the last stop (at least `after` characters
 * before `start`) ends by that stop.
 */
function stopBarrier(stops: string, open: number, after: number) {
  return (data: string, start: number) => {
    const q = lastOf(data, stops, start - 1 - after);
    return q < 0 ? 0 : Math.max(0, q - open);
  };
}

/** `$` ends a formula's body unless escaped; a newline always does. */
function texBarrier(data: string, start: number): number {
  const opener = openerAcross(data, start);
  if (opener !== null) return opener;
  let q = lastOf(data, '\n$', start - 3);
  while (q > 0 && data[q] === '$' && data[q - 1] === '\\') q = lastOf(data, '\n$', q - 1);
  return q < 0 ? 0 : Math.max(0, q - 1);
}

const TEX_OPENS = new RegExp(`(?<!${W})(?<!\\$)\\$\\$[^\\n_$]`, 'suy');
const TEX_CLOSES = new RegExp(`(?:\\\\\\$|[^$\\n])*\\$\\$(?!\\$)(?!${W})`, 'suy');

/**
 * The common case of a `$$` that never closes ("$$ $$x$$ $$y$$..."): the last
 * `$` or newline before the new placeholder at `start` is the second `$` of an
 * opener, not escaped. Every attempt before that opener ends before it, as it
 * did; no attempt can begin between it and the placeholder (no `$` there); the
 * opener's own attempt reads its body through the placeholder to the next `$`.
 * Deciding that attempt here, from the placeholder's end, keeps the restarting
 * loop from rescanning the text since the opener after every formula: the
 * barrier is the opener if its formula now closes, else the placeholder.
 * Null when the text is not of that shape (the general barrier applies).
 */
function openerAcross(data: string, start: number): number | null {
  const p = lastOf(data, '\n$', start - 1);
  const o = p - 1;
  if (o < 0 || data[p] !== '$' || data[o] !== '$' || data[o - 1] === '\\') return null;
  TEX_OPENS.lastIndex = o;
  if (!TEX_OPENS.test(data)) return start;
  TEX_CLOSES.lastIndex = data.indexOf(ETX, start) + 1;
  return TEX_CLOSES.test(data) ? o : start;
}

/**
 * Python's restart finds a formula before this one only where an earlier `$$`
 * opens a body (no newline, `$` only as `\$`) that now runs on through the
 * placeholder. Scanning back over the text since the previous placeholder
 * settles it: that one was put where no body was open, and holds no `$`. Any
 * `$$` counts as an opener (then the restarting loop takes over). No lookaround
 * reads across the placeholder: a formula cannot start right after one, as the
 * `(?!\$)` after the closing `$$` refuses a `$` there.
 */
function texResumes(_before: string, _after: string, data: string, start: number, since: number): boolean {
  for (let i = start - 1; i >= since; i--) {
    const c = data[i];
    if (c === '\n') return true;
    if (c !== '$') continue;
    const prev = i > since ? data[i - 1] : '';
    if (prev === '$') return false;
    if (prev !== '\\') return true; // an unescaped `$` ends every body
    i--; // `\$` may be inside a body
  }
  return true;
}

function simpleTag(
  name: string,
  re: RegExp,
  tag: string,
  group: number,
  barrier: InlinePattern['barrier'],
  resumesAtPlaceholder?: InlinePattern['resumesAtPlaceholder'],
): InlinePattern {
  return {
    kind: 'old',
    name,
    re,
    barrier,
    resumesAtPlaceholder,
    handle(m) {
      const el = new El(tag);
      el.text = m[group]!;
      return el;
    },
  };
}

/** Builds the pattern list for one render. */
export function buildPatterns(lookup: Lookup, findings: Findings, stash: HtmlStash, inline: () => InlineProcessor): InlinePattern[] {
  const ctx = lookup.ctx;
  const patterns: InlinePattern[] = [
    {
      kind: 'new',
      name: 'backtick',
      re: codeSpanMatcher(),
      // Attempts before the span fail for lack of a closing run, which the span only removes;
      // but an escaped or partial run right before it could turn into a closing run, and a
      // backtick after escaped backslashes opens once they are a placeholder.
      resumesAtPlaceholder: (before, after) => before !== '`' && before !== '\\' && after !== '`',
      barrier: (data, start) => (data[start - 1] === '`' || data[start - 1] === '\\' ? 0 : start),
      handle(m) {
        if (m[3]) {
          const code = new El('code');
          code.text = new Atomic(codeEscape(m[3]));
          return { node: code, start: m.index, end: m.index + m[0].length };
        }
        return { node: m[1]!.replaceAll('\\\\', `${STX}92${ETX}`), start: m.index, end: m.index + m[0].length };
      },
    },
    {
      kind: 'old',
      name: 'strong_em',
      re: /(\*\*\*)(?!\s+)([^*^\n]+)(?<!\s)\*\*\*/su,
      barrier: stopBarrier('*^\n', 2, 2),
      handle(m) {
        const strong = new El('strong');
        strong.sub('em').text = m[2]!;
        return strong;
      },
    },
    {
      kind: 'new',
      name: 'usermention',
      re: new RegExp(USER_MENTION.source, 'gsu'),
      // An earlier `@**` whose name ran into this match would have ended as a match at this `**`.
      resumesAtPlaceholder: true,
      handle(m) {
        let name = m.groups!.match!;
        let silent = m.groups!.silent === '_';
        const topicWildcard = TOPIC_WILDCARDS.has(name);
        const streamWildcard = STREAM_WILDCARDS.has(name);
        const idSyntax = parseIdSyntax(name);
        let user: MentionableUser | undefined;
        if (idSyntax) {
          user = lookup.userById(idSyntax.id);
          if (idSyntax.fullName && user && user.full_name !== idSyntax.fullName) return null;
        } else {
          user = lookup.userByName(name);
        }
        let userId: string | null = null;
        if (streamWildcard) {
          if (!silent) findings.streamWildcard = true;
          userId = '*';
        } else if (topicWildcard) {
          if (!silent) findings.topicWildcard = true;
        } else if (user) {
          if (user.is_active === false) silent = true;
          (silent ? findings.silentUserIds : findings.userIds).add(user.id);
          name = user.full_name;
          userId = String(user.id);
        } else {
          return null;
        }
        const el = new El('span');
        if (userId) el.set('data-user-id', userId);
        let cls = topicWildcard ? 'topic-mention' : streamWildcard ? 'user-mention channel-wildcard-mention' : 'user-mention';
        if (silent) cls += ' silent';
        el.set('class', cls);
        el.text = new Atomic(silent ? name : `@${name}`);
        return { node: el, start: m.index, end: m.index + m[0].length };
      },
    },
    {
      kind: 'old',
      name: 'tex',
      barrier: texBarrier,
      resumesAtPlaceholder: texResumes,
      re: new RegExp(`(?<!${W})(?<!\\$)\\$\\$(?<body>[^\\n_$](?:\\\\\\$|[^$\\n])*)\\$\\$(?!\\$)(?!${W})`, 'su'),
      handle(m) {
        const body = m.groups!.body!;
        const html = renderTex(body, false);
        if (html !== null) return stash.store(html);
        const span = new El('span', { class: 'tex-error' });
        span.text = new Atomic(`$$${body}$$`);
        return span;
      },
    },
    {
      kind: 'new',
      name: 'stream_topic_message',
      barrier: stopBarrier('*', 2, 1),
      re: new RegExp(STREAM_TOPIC_MESSAGE_LINK.source, 'gsu'),
      handle(m) {
        const { stream_name: channel, topic_name: topic, message_id: id } = m.groups!;
        const channelId = lookup.channel(channel!);
        if (channelId === undefined) return null;
        const href = `/#narrow/channel/${encodeChannel(channelId, channel!)}/topic/${hashEncode(topic!)}/near/${id}`;
        const el = new El('a', { class: 'message-link', href });
        el.text = new Atomic(`#${channel} > ${topic} @ 💬`);
        return { node: el, start: m.index, end: m.index + m[0].length };
      },
    },
    {
      kind: 'new',
      name: 'topic',
      barrier: stopBarrier('*', 2, 1),
      re: new RegExp(STREAM_TOPIC_LINK.source, 'gsu'),
      handle(m) {
        const { stream_name: channel, topic_name: topic } = m.groups!;
        const channelId = lookup.channel(channel!);
        if (channelId === undefined) return null;
        let href = `/#narrow/channel/${encodeChannel(channelId, channel!)}/topic/${hashEncode(topic!)}`;
        const latest = lookup.latestInTopic(channelId, topic!);
        if (latest !== undefined) href += `/with/${latest}`;
        const el = new El('a', { class: 'stream-topic', 'data-stream-id': String(channelId), href });
        if (topic) {
          el.text = new Atomic(`#${channel} > ${topic}`);
        } else {
          el.text = new Atomic(`#${channel} > `);
          el.sub('em').text = new Atomic(ctx.empty_topic_display_name ?? 'general chat');
        }
        return { node: el, start: m.index, end: m.index + m[0].length };
      },
    },
    {
      kind: 'new',
      name: 'stream',
      resumesAtPlaceholder: true,
      re: new RegExp(STREAM_LINK.source, 'gsu'),
      handle(m) {
        const channel = m.groups!.stream_name!;
        const channelId = lookup.channel(channel);
        if (channelId === undefined) return null;
        const href = `/#narrow/channel/${encodeChannel(channelId, channel)}`;
        const el = new El('a', { class: 'stream', 'data-stream-id': String(channelId), href });
        el.text = new Atomic(`#${channel}`);
        return { node: el, start: m.index, end: m.index + m[0].length };
      },
    },
    {
      kind: 'old',
      name: 'timestamp',
      // Never rejects, and any earlier `<time:` would have closed at this match's `>`: there is none.
      resumesAtPlaceholder: true,
      re: /<time:(?<time>[^>]*?)>/su,
      handle(m) {
        const input = m.groups!.time!;
        const iso = parseTimestamp(input);
        if (iso === null) {
          const span = new El('span', { class: 'timestamp-error' });
          span.text = new Atomic(`Invalid time format: ${input}`);
          return span;
        }
        const el = new El('time', { datetime: iso });
        el.text = new Atomic(input);
        return el;
      },
    },
    {
      kind: 'new',
      name: 'usergroupmention',
      resumesAtPlaceholder: true,
      re: new RegExp(GROUP_MENTION.source, 'gsu'),
      handle(m) {
        const group = lookup.group(m.groups!.match!);
        if (!group) return null;
        const silent = m.groups!.silent === '_' || group.deactivated === true;
        if (!silent) findings.groupIds.add(group.id);
        const el = new El('span', {
          'data-user-group-id': String(group.id),
          class: silent ? 'user-group-mention silent' : 'user-group-mention',
        });
        el.text = new Atomic(silent ? group.name : `@${group.name}`);
        return { node: el, start: m.index, end: m.index + m[0].length };
      },
    },
    {
      kind: 'new',
      name: 'link',
      re: /(?<!!)\[/gsu,
      handle(m, data) {
        const unescapeText = (s: string) => inline().unescape(s);
        const [text, textEnd, textOk] = getLinkText(data, m.index + m[0].length);
        if (!textOk) return null;
        const [rawHref, title, end, hrefOk] = getLink(data, textEnd, unescapeText);
        if (!hrefOk) return null;
        const href = sanitizeUrl(unescapeText(pyStrip(rawHref)));
        if (href === null) return null;
        const el = new El('a', { href: relativeToServer(href, ctx.server_url) });
        if (title !== null) el.set('title', title);
        el.text = new Atomic(pyStrip(text) ? text : el.get('href')!);
        return { node: el, start: m.index, end };
      },
    },
    {
      kind: 'old',
      name: 'autolink',
      re: webLinkRegex(),
      // Links hold no whitespace, and the lookahead stops at it.
      barrier: (data, start) => Math.max(0, lastOf(data, ' \n\t', start - 1)),
      handle(m) {
        return urlToA(ctx, m.groups!.url!);
      },
    },
    ...(ctx.linkifiers ?? []).map(
      (linkifier): InlinePattern => ({
        kind: 'new',
        name: `linkifier/${linkifier.id}`,
        // A stateful adapter with RegExp's exec/lastIndex shape over an RE2 matcher.
        re: linkifierAdapter(linkifier),
        // See README "Linear time": exact unless a pattern matches the placeholder's control characters.
        resumesAtPlaceholder: true,
        handle(m) {
          const found = (m as unknown as { linkifier: LinkifierMatch }).linkifier;
          // An empty match would be replaced forever.
          if (found.end === found.start) return null;
          const a = urlToA(ctx, found.url, new Atomic(found.text));
          if (typeof a === 'string') return null;
          return { node: a, start: found.start, end: found.end };
        },
      }),
    ),
    {
      kind: 'new',
      name: 'entity',
      resumesAtPlaceholder: true,
      re: /(&(?:#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z0-9]+);)/gsu,
      handle(m) {
        return { node: stash.store(m[1]!), start: m.index, end: m.index + m[0].length };
      },
    },
    // An earlier `**` on this line would have closed at this match: openings before it are on earlier lines.
    // Unless a `*` just before it could open one that closes inside it: then from there.
    simpleTag(
      'strong',
      /(\*\*)([^\n]+?)\1/su,
      'strong',
      2,
      (_data, start) => Math.max(0, start - 2),
      (before) => before !== '*',
    ),
    simpleTag('emphasis', /(\*)(?!\s+)([^*^\n]+)(?<!\s)\*/su, 'em', 2, stopBarrier('*^\n', 0, 0)),
    simpleTag('del', /(?<!~)(~~)([^~\n]+?)(~~)(?!~)/su, 'del', 2, stopBarrier('~\n', 1, 2)),
    {
      kind: 'new',
      name: 'not_strong',
      barrier: (_data, start) => Math.max(0, start - 4),
      re: /((^|(?<=\s))(\*{1,3}|_{1,3})(?=\s|$))/gsu,
      handle(m) {
        return { node: m[1]!, start: m.index, end: m.index + m[0].length };
      },
    },
    {
      kind: 'old',
      name: 'emoji',
      resumesAtPlaceholder: true,
      re: /(?<syntax>:[\p{L}\p{N}_\-+]+:)/su,
      handle(m) {
        const syntax = m.groups!.syntax!;
        const name = syntax.slice(1, -1);
        const custom = lookup.customEmojiUrl(name);
        if (custom !== undefined) return makeImageEmoji(custom, syntax);
        if (name === EXTRA_EMOJI.name) return makeImageEmoji(EXTRA_EMOJI.url, syntax);
        const code = emojiCodeForName(name);
        return code ? makeEmoji(code, syntax) : syntax;
      },
    },
    // Without the setting every match is rejected, which changes nothing.
    ...(!ctx.translate_emoticons
      ? []
      : [
          {
            kind: 'old',
            name: 'translate_emoticons',
            re: new RegExp(`(?<![^${EMOTICON_TERMINALS}])(?<emoticon>${emoticonAlternatives})(?![^${EMOTICON_TERMINALS}])`, 'su'),
            handle(m) {
              const translated = EMOTICON_CONVERSIONS[m.groups!.emoticon!]!;
              const code = emojiCodeForName(translated.slice(1, -1));
              return code ? makeEmoji(code, translated) : null;
            },
            barrier: (_data: string, start: number) => Math.max(0, start - EMOTICON_MAX - 2),
          } satisfies InlinePattern,
        ]),
    {
      kind: 'new',
      name: 'nl2br',
      resumesAtPlaceholder: true,
      re: /\n/g,
      handle(m) {
        return { node: new El('br'), start: m.index, end: m.index + 1 };
      },
    },
    {
      kind: 'new',
      name: 'unicodeemoji',
      resumesAtPlaceholder: true,
      re: POSSIBLE_EMOJI,
      handle(m) {
        const found = unicodeEmoji(m.groups!.syntax!);
        if (!found) return null;
        return { node: makeEmoji(found.code, found.display), start: m.index, end: m.index + m[0].length };
      },
    },
  ];
  return patterns;
}

/** A Unicode emoji's code and `:name:`, or null when it is not one we name (hostile messages repeat one emoji thousands of times). */
const unicodeEmoji = memoized((syntax: string): { code: string; display: string } | null => {
  if (TEXT_PRESENTATION.test(syntax)) return null;
  const code = codeForUnicode(syntax);
  const name = emojiNameForCode(code);
  return name ? { code, display: `:${name}:` } : null;
});

/** Presents an RE2 linkifier as the `{lastIndex, exec}` object the inline engine drives. */
function linkifierAdapter(linkifier: Linkifier): RegExp {
  const adapter = {
    lastIndex: 0,
    exec(data: string) {
      const found = findLinkifier(linkifier, data, adapter.lastIndex);
      if (!found) return null;
      adapter.lastIndex = found.matchEnd;
      const whole = data.slice(found.start, found.end);
      const m = Object.assign([whole], { index: found.start, input: data, linkifier: found });
      return m;
    },
  };
  return adapter as unknown as RegExp;
}
