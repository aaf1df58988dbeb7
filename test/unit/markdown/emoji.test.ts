// The emoji data module that reactions also use.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import {
  codeForUnicode,
  emojiCodeForName,
  emojiImageFile,
  emojiNameForCode,
  emojiNames,
  emojiNamesForCode,
  unicodeForCode,
} from '../../../src/markdown/emoji.ts';

test('names map to codes and back', () => {
  assert.equal(emojiCodeForName('airplane'), '2708');
  assert.equal(emojiCodeForName('poop'), '1f4a9');
  assert.equal(emojiCodeForName('smile'), '1f642');
  assert.equal(emojiCodeForName('woman_shrugging'), '1f937-200d-2640');
  assert.equal(emojiCodeForName('+1'), '1f44d');
  assert.equal(emojiNameForCode('1f4a9'), 'poop');
  assert.equal(emojiNameForCode('1f642'), 'smile');
  assert.equal(emojiNamesForCode('1f642')[0], 'smile');
  assert.equal(emojiCodeForName('not_an_emoji'), undefined);
  assert.equal(emojiCodeForName('fried_egg'), undefined);
  assert.equal(emojiCodeForName('skin-tone-2'), undefined);
});

test('iamcal short names are aliases where the name is free', () => {
  assert.equal(emojiCodeForName('tada'), '1f389');
  assert.equal(emojiCodeForName('heart_eyes'), '1f60d');
  assert.equal(emojiCodeForName('joy'), '1f602');
  assert.equal(emojiCodeForName('-1'), '1f44e');
  assert.equal(emojiNameForCode('1f389'), 'party_popper');
  // Names the CLDR pass gave keep their emoji; hyphenated compounds are not names.
  assert.equal(emojiCodeForName('smile'), '1f642');
  assert.equal(emojiCodeForName('dog'), '1f415');
  assert.equal(emojiCodeForName('man-girl-girl'), undefined);
  assert.equal(emojiCodeForName('flag-us'), undefined);
});

test('every name is unique and resolves to its emoji', () => {
  const names = emojiNames();
  assert.ok(names.length > 3000);
  assert.equal(new Set(names).size, names.length);
  for (const name of names) {
    const code = emojiCodeForName(name)!;
    assert.ok(emojiNamesForCode(code).includes(name), name);
    assert.match(name, /^[\p{L}\p{N}_+-]+$/u, name);
  }
});

test('unicode conversion drops variation selectors', () => {
  assert.equal(codeForUnicode('⬆️'), '2b06');
  assert.equal(codeForUnicode('🤷‍♀️'), '1f937-200d-2640');
  assert.equal(unicodeForCode('1f4a9'), '💩');
});

test('images come from the emoji data package', () => {
  const file = emojiImageFile('1f4a9');
  assert.ok(file && existsSync(file), String(file));
});
