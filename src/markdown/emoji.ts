// Unicode emoji data: which emoji exist and what they are called.
//
// The set of emoji and their images come from `emoji-datasource-google` (the
// iamcal data the reference server uses). Names are built as the reference
// server builds them, in this order of precedence:
// 1. NAME_OVERRIDES: names our reference material fixes (`smile` is U+1F642).
// 2. emoji-names.json: the reference server's hand-curated names for about a
//    thousand emoji (code -> [canonical, ...aliases], e.g. `holiday_tree`,
//    `big_smile`, `+1`/`thumbs_up`). Data taken from its
//    tools/setup/emoji/emoji_names.py (EMOJI_NAME_MAPS; Apache-2.0, the
//    version with `263a` as `smile`, before the rename to U+1F642); entries
//    that file comments out are not names.
// 3. CLDR for every other emoji: the English text-to-speech name is canonical
//    and the keywords are aliases (`cldr-annotations-full` and
//    `cldr-annotations-derived-full`), aliases dropped where they collide.
// 4. The iamcal short names of the same package (`heart_eyes`, `thumbsup`),
//    added last as aliases where the name is still free, so that the names real
//    clients send in reactions exist too; iamcal's hyphenated compounds
//    (`man-girl-girl`, `flag-us`, `skin-tone-2`) and REMOVED_NAMES are not
//    names the reference server knows.
//
// Codes are dash-separated lowercase hex code points without U+FE0F, e.g.
// `1f937-200d-2640`. Everything is built lazily on first use.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

interface DatasourceEmoji {
  unified: string;
  image: string;
  category: string;
  sort_order: number;
  has_img_google: boolean;
  short_names: string[];
}

interface NameInfo {
  canonical: string;
  aliases: string[];
  /** Aliases that must survive collision pruning (curated or from NAME_OVERRIDES). */
  pinned: Set<string>;
}

/**
 * Names our reference material fixes where the curated table differs or is
 * silent (zulip-api-digest.md §6 and markdown-cases.json: `:smile:` and `:)`
 * are U+1F642, which the table's version calls `slight_smile`). They win over
 * both the table and CLDR: a name given here leaves any other emoji that had
 * it (U+263A keeps `relaxed`), and the name it replaces becomes an alias.
 */
const NAME_OVERRIDES: Record<string, { canonical?: string; aliases?: string[] }> = {
  '1f642': { canonical: 'smile' },
};

/** iamcal names the reference server does not have (markdown-cases.json: fried_egg_emoji_nonexistent). */
const REMOVED_NAMES = new Set(['fried_egg']);

/** iamcal names kept: one word, or `+1`/`-1`; not hyphenated compounds. */
const IAMCAL_NAME = /^[+-]?[a-z0-9_]+$/;

/** Emoticons translated for users with `translate_emoticons` (reference server's list). */
export const EMOTICON_CONVERSIONS: Readonly<Record<string, string>> = {
  ':)': ':smile:',
  '(:': ':smile:',
  ':(': ':frown:',
  '<3': ':heart:',
  ':|': ':neutral:',
  ':/': ':confused:',
  ';)': ':wink:',
  ':D': ':grinning:',
  ':o': ':open_mouth:',
  ':O': ':open_mouth:',
  ':p': ':stuck_out_tongue:',
  ':P': ':stuck_out_tongue:',
};

/** The server's one built-in image emoji (reaction type `zulip_extra_emoji`). */
export const EXTRA_EMOJI = {
  name: 'zulip',
  code: 'zulip',
  url: '/static/generated/emoji/images/emoji/unicode/zulip.png',
} as const;

// Clock faces other than 8 o'clock and the bare skin-tone modifiers get no names.
function skipped(code: string): boolean {
  const cp = parseInt(code, 16);
  if (!code.includes('-') && cp >= 0x1f550 && cp <= 0x1f567 && cp !== 0x1f557) return true;
  return cp >= 0x1f3fb && cp <= 0x1f3ff && !code.includes('-');
}

/** Puts NAME_OVERRIDES on top of the curated and CLDR names. */
function applyOverrides(infos: Map<string, NameInfo>): void {
  for (const [code, override] of Object.entries(NAME_OVERRIDES)) {
    const claimed = new Set([override.canonical, ...(override.aliases ?? [])].filter((n) => n !== undefined));
    for (const [other, info] of infos) {
      if (other === code) continue;
      info.aliases = info.aliases.filter((a) => !claimed.has(a));
      if (!claimed.has(info.canonical)) continue;
      const next = info.aliases.shift();
      if (next === undefined) infos.delete(other);
      else info.canonical = next;
    }
    let info = infos.get(code);
    if (!info) {
      if (!override.canonical) continue;
      info = { canonical: override.canonical, aliases: [], pinned: new Set() };
      infos.set(code, info);
    }
    if (override.canonical && override.canonical !== info.canonical) {
      info.aliases.unshift(info.canonical);
      info.canonical = override.canonical;
    }
    for (const a of override.aliases ?? []) {
      info.aliases.push(a);
      info.pinned.add(a);
    }
  }
}

function cleanupName(name: string): string {
  const replacements: [string, string][] = [
    [' ', '_'],
    ['-', '_'],
    ['\u2013', '_'],
    ['\u201c', ''],
    ['\u201d', ''],
    [':', ''],
    ['.', ''],
    [',', ''],
    ['(', ''],
    [')', ''],
    ['&', 'and'],
    ['\u2018', ''],
    ['\u2019', ''],
    ["'", ''],
  ];
  for (const [a, b] of replacements) name = name.replaceAll(a, b);
  return name.replace(/_{2,}/g, '_').toLowerCase();
}

function asciiFold(name: string): string {
  return name.normalize('NFD').replace(/\p{M}/gu, '');
}

/** `😀` / `⬆️` -> `1f600` / `2b06`. */
export function codeForUnicode(text: string): string {
  return [...text.replaceAll('\ufe0f', '')].map((c) => c.codePointAt(0)!.toString(16).padStart(4, '0')).join('-');
}

export function unicodeForCode(code: string): string {
  return String.fromCodePoint(...code.split('-').map((h) => parseInt(h, 16)));
}

interface EmojiData {
  nameToCode: Map<string, string>;
  codeToNames: Map<string, string[]>;
  images: Map<string, string>;
  dir: string;
}

let data: EmojiData | null = null;

function load(): EmojiData {
  if (data) return data;
  const pkgDir = dirname(require.resolve('emoji-datasource-google/package.json'));
  const emoji = JSON.parse(readFileSync(join(pkgDir, 'emoji.json'), 'utf8')) as DatasourceEmoji[];
  const cldrDir = dirname(require.resolve('cldr-annotations-full/package.json'));
  const derivedDir = dirname(require.resolve('cldr-annotations-derived-full/package.json'));
  type Annotations = Record<string, { default?: string[]; tts?: string[] }>;
  const cldr: Annotations = {
    ...(JSON.parse(readFileSync(join(cldrDir, 'annotations/en/annotations.json'), 'utf8')).annotations.annotations as Annotations),
    ...(JSON.parse(readFileSync(join(derivedDir, 'annotationsDerived/en/annotations.json'), 'utf8')).annotationsDerived.annotations as Annotations),
  };

  const curated = require('./emoji-names.json') as Record<string, string[]>;

  // Curated names first, then CLDR names for the emoji the table leaves out;
  // Map order keeps curated entries ahead when names collide below.
  const infos = new Map<string, NameInfo>();
  const images = new Map<string, string>();
  const named: string[] = [];
  for (const e of emoji) {
    const code = codeForUnicode(unicodeForCode(e.unified.toLowerCase()));
    images.set(code, e.image);
    if (!skipped(code)) named.push(code);
  }
  for (const code of named) {
    const names = curated[code];
    if (names && !infos.has(code)) {
      infos.set(code, { canonical: names[0]!, aliases: names.slice(1), pinned: new Set(names.slice(1)) });
    }
  }
  const curatedCodes = new Set(infos.keys());
  for (const code of named) {
    const ann = cldr[unicodeForCode(code)];
    if (infos.has(code) || !ann?.tts?.length) continue;
    const aliases = (ann.default ?? []).map((a) => cleanupName(a.trim()));
    infos.set(code, { canonical: cleanupName(ann.tts[0]!.trim()), aliases, pinned: new Set() });
  }
  applyOverrides(infos);

  // A name the curated table gives is not available to the CLDR pass: an
  // emoji newer than the table whose CLDR name it took falls back to its first
  // keyword no other emoji has (U+1F9FE `receipt` -> `accounting`). Two emoji
  // cannot share a canonical name; the first keeps it.
  const curatedNames = new Set<string>();
  for (const code of curatedCodes) {
    const info = infos.get(code);
    if (info) for (const n of [info.canonical, ...info.aliases]) curatedNames.add(n);
  }
  const keywordUses = new Map<string, number>();
  for (const info of infos.values()) for (const a of new Set(info.aliases)) keywordUses.set(a, (keywordUses.get(a) ?? 0) + 1);
  const canonicals = new Set<string>();
  for (const [code, info] of infos) {
    const fromCldr = !curatedCodes.has(code);
    if (fromCldr && curatedNames.has(info.canonical)) {
      const free = info.aliases.find((a) => keywordUses.get(a) === 1 && !curatedNames.has(a) && !canonicals.has(a));
      if (free !== undefined) info.canonical = free;
    }
    if (canonicals.has(info.canonical) || (fromCldr && curatedNames.has(info.canonical))) {
      infos.delete(code);
      continue;
    }
    canonicals.add(info.canonical);
    info.aliases = [...new Set(info.aliases)].filter((a) => a !== info.canonical && !(fromCldr && curatedNames.has(a)));
  }
  // Aliases may not shadow a canonical name, and an alias shared by several
  // emoji belongs to none of them (unless pinned: curated or overridden).
  const holders = new Map<string, string[]>();
  for (const [code, info] of infos) {
    info.aliases = info.aliases.filter((a) => !canonicals.has(a));
    for (const a of info.aliases) holders.set(a, [...(holders.get(a) ?? []), code]);
  }
  for (const [alias, codes] of holders) {
    if (codes.length < 2) continue;
    for (const code of codes) {
      const info = infos.get(code)!;
      if (!info.pinned.has(alias)) info.aliases = info.aliases.filter((a) => a !== alias);
    }
  }
  const nameToCode = new Map<string, string>();
  const codeToNames = new Map<string, string[]>();
  for (const [code, info] of infos) {
    const names = [info.canonical, ...info.aliases];
    for (const n of [...names]) {
      const folded = asciiFold(n);
      if (folded !== n && !nameToCode.has(folded) && !canonicals.has(folded)) names.push(folded);
    }
    // Only names the `:name:` syntax can spell.
    const usable = names.filter((n) => /^[\p{L}\p{N}_+-]+$/u.test(n) && !nameToCode.has(n));
    for (const n of usable) nameToCode.set(n, code);
    codeToNames.set(code, usable);
  }
  for (const e of emoji) {
    const code = codeForUnicode(unicodeForCode(e.unified.toLowerCase()));
    if (skipped(code)) continue;
    for (const n of e.short_names) {
      if (nameToCode.has(n) || REMOVED_NAMES.has(n) || !IAMCAL_NAME.test(n)) continue;
      nameToCode.set(n, code);
      codeToNames.set(code, [...(codeToNames.get(code) ?? []), n]);
    }
  }
  data = { nameToCode, codeToNames, images, dir: join(pkgDir, 'img/google/64') };
  return data;
}

/** `airplane` -> `2708`; undefined for unknown names. */
export function emojiCodeForName(name: string): string | undefined {
  return load().nameToCode.get(name);
}

/** `1f4a9` -> `poop` (the canonical name). */
export function emojiNameForCode(code: string): string | undefined {
  return load().codeToNames.get(code)?.[0];
}

/** All names of an emoji, canonical first. */
export function emojiNamesForCode(code: string): readonly string[] {
  return load().codeToNames.get(code) ?? [];
}

/** Every named emoji: code -> its names, canonical first. */
export function emojiCodeToNames(): ReadonlyMap<string, readonly string[]> {
  return load().codeToNames;
}

/** Every valid Unicode emoji name, sorted. */
export function emojiNames(): string[] {
  return [...load().nameToCode.keys()].sort();
}

/** Absolute path of the 64px Google image for an emoji code, if there is one. */
export function emojiImageFile(code: string): string | undefined {
  const d = load();
  const image = d.images.get(code);
  return image ? join(d.dir, image) : undefined;
}

/** Forces the data to load now (workers call this at start-up). */
export function preloadEmoji(): void {
  load();
}
