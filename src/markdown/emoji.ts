// Unicode emoji data: which emoji exist and what they are called.
//
// The set of emoji and their images come from `emoji-datasource-google` (the
// iamcal data the reference server uses). Names follow the reference server's
// own generator: the CLDR English text-to-speech name is the canonical name and
// the CLDR keywords are aliases (from `cldr-annotations-full` and
// `cldr-annotations-derived-full`), with aliases dropped where they collide.
// The reference server additionally hand-curates names for about a thousand
// emoji; that list is not published as a package, so only the names our
// reference material fixes are applied (NAME_OVERRIDES) — see README.md.
// The iamcal short names of the same package (`tada`, `heart_eyes`, `joy`,
// `+1`), which the curated list mostly keeps, are added last as aliases, so
// that the names real clients send in reactions exist too: a name the CLDR
// pass already gave an emoji keeps it (`smile` stays U+1F642), and iamcal's
// hyphenated compounds (`man-girl-girl`, `flag-us`, `skin-tone-2`) and
// REMOVED_NAMES are not names the reference server knows.
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
  /** Aliases that must survive collision pruning (from NAME_OVERRIDES). */
  pinned: Set<string>;
}

/**
 * Names fixed by our reference material (zulip-api-digest.md §6 and
 * markdown-cases.json) and the targets of the emoticon translations.
 */
const NAME_OVERRIDES: Record<string, { canonical?: string; aliases?: string[] }> = {
  '1f642': { canonical: 'smile' },
  '1f4a9': { canonical: 'poop' },
  '1f641': { canonical: 'frown' },
  '2764': { canonical: 'heart' },
  '1f603': { canonical: 'smiley' },
  '2b06': { canonical: 'up' },
  '2797': { canonical: 'division' },
  '1f610': { canonical: 'neutral' },
  '1f615': { aliases: ['confused'] },
  '1f609': { canonical: 'wink' },
  '1f600': { canonical: 'grinning' },
  '1f62e': { canonical: 'open_mouth' },
  '1f61b': { canonical: 'stuck_out_tongue' },
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

  const infos = new Map<string, NameInfo>();
  const canonicals = new Set<string>();
  const images = new Map<string, string>();
  for (const e of emoji) {
    const code = codeForUnicode(unicodeForCode(e.unified.toLowerCase()));
    images.set(code, e.image);
    if (skipped(code) || infos.has(code)) continue;
    const ann = cldr[unicodeForCode(code)];
    const override = NAME_OVERRIDES[code];
    if (!ann?.tts?.length && !override?.canonical) continue;
    const cldrCanonical = ann?.tts?.length ? cleanupName(ann.tts[0]!.trim()) : null;
    const aliases = (ann?.default ?? []).map((a) => cleanupName(a.trim()));
    let canonical = cldrCanonical!;
    if (override?.canonical) {
      canonical = override.canonical;
      if (cldrCanonical) aliases.unshift(cldrCanonical);
    }
    const pinned = new Set(override?.aliases ?? []);
    aliases.push(...pinned);
    if (canonicals.has(canonical)) continue;
    canonicals.add(canonical);
    infos.set(code, { canonical, aliases: [...new Set(aliases)].filter((a) => a !== canonical), pinned });
  }
  // Aliases may not shadow a canonical name, and an alias shared by several
  // emoji belongs to none of them (unless pinned).
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
